/* mount-work — the workload of bench/mount, run in the directory under test
 * (BOXFS_DIR or the current directory).  Prints "<op> <seconds>" lines:
 *   create   N files created (open O_CREAT, 100-byte write, close)
 *   stat     stat(2) of each
 *   readdir  one listing of the N entries
 *   read     open/read/close of each (small-file reads)
 *   unlink   unlink of each
 *   write    SIZE MiB written sequentially in 1 MiB writes
 *   read1    the same file read back once
 *   read2    and again (cached sequential read)
 * With ROUNDS > 1 the five small-file phases run ROUNDS times, each round in a
 * fresh directory (new paths: no decision is reused), and each prints its
 * fastest round: on a shared machine one slow moment then does not decide
 * the figure.
 * With BOXFS_DAEMON_PID set (bench/bare-pt and bench/boxfs-run set it to
 * their own pid) it also prints "cpu-<op> <ms>": the CPU time (user +
 * system, all threads) the FUSE daemon spent during that phase, least over
 * the rounds.  Wall time on this shared VM varies run to run; the daemon's
 * CPU per phase is the steadier figure for what each request costs it.
 *   Usage: mount-work [N] [SIZE_MIB] [ROUNDS]
 *
 *   mount-work --interleave N ROUNDS BLOCK NAME=DIR[@PID]...
 * The small-file phases on several systems at once, interleaved: each phase
 * runs BLOCK operations on one system, then the same BLOCK on the next, and
 * so on (in an order drawn afresh for each block), so a
 * slow moment of this shared VM (a neighbour's build, a host hiccup, an idle
 * vCPU slow to wake) falls on every system alike instead of on whichever ran
 * then.  DIR: the directory to work in (a mount, or the native directory);
 * PID: its FUSE daemon, whose CPU per phase is printed too; NAME=- takes the
 * directory and daemon from BOXFS_DIR and BOXFS_DAEMON_PID (the system this
 * runs under).  There the readdir phase is 20 listings, one a block.  Each
 * phase starts after a sync(2).  Prints "il ROUND NAME OP SECONDS" and, with a daemon,
 * "il ROUND NAME cpu-OP MS" for create, stat, readdir, read and unlink.
 *
 *   mount-work --ops OPS N DIR
 * N files created in DIR (a fresh directory), then, by the letters of OPS,
 * stat'ed (s) and unlinked (u), with nothing timed: bench/mount-instr counts
 * the daemon's instructions for it under callgrind. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
  perror(what);
  exit(1);
}

/* The workload's small file: 100 bytes. */
static void write_small(const char *name, const char *buf)
{
  int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("create");
  if (write(fd, buf, 100) != 100) die("write");
  close(fd);
}

/* Small-file phase op (0 create, 1 stat, 3 read, 4 unlink; 2, the listing,
 * is of the directory) on one file; buf holds at least 128 bytes. */
static void small_op(const char *name, int op, char *buf)
{
  struct stat st;
  int fd;
  switch (op) {
  case 0: write_small(name, buf); break;
  case 1:
    if (stat(name, &st) < 0) die("stat");
    break;
  case 3:
    fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) die("open");
    if (read(fd, buf, 128) != 100) die("read");
    close(fd);
    break;
  case 4:
    if (unlink(name) < 0) die("unlink");
    break;
  }
}

/* dir must list its n files plus "." and "..": the mount lost none. */
static void expect_entries(const char *dir, long n, const char *what)
{
  DIR *d = opendir(dir);
  if (!d) die("opendir");
  long seen = 0;
  while (readdir(d)) seen++;
  closedir(d);
  if (seen != n + 2) {
    fprintf(stderr, "%s saw %ld entries, want %ld\n", what, seen, n + 2);
    exit(1);
  }
}

static void small_files(const char *dir, long n, double out[5], double cpu[5]);
static double daemon_cpu(void);
static double pid_cpu(int pid);
static int daemon_pid;
static void big_file(long mib);
static int interleave(int argc, char **argv);

static int ops_only(const char *ops, long n, const char *dir)
{
  if (mkdir(dir, 0755) < 0 || chdir(dir) < 0) die(dir);
  char buf[128], name[32];
  memset(buf, 'x', sizeof buf);
  for (int op = 0; op < 5; op++) {
    if ((op == 1 && !strchr(ops, 's')) || (op == 4 && !strchr(ops, 'u')) || op == 2 || op == 3)
      continue;
    for (long i = 0; i < n; i++) {
      snprintf(name, sizeof name, "f%ld", i);
      small_op(name, op, buf);
    }
  }
  return 0;
}

int main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "--interleave") == 0) return interleave(argc - 2, argv + 2);
  if (argc == 5 && strcmp(argv[1], "--ops") == 0) return ops_only(argv[2], atol(argv[3]), argv[4]);
  long n = argc > 1 ? atol(argv[1]) : 10000;
  long mib = argc > 2 ? atol(argv[2]) : 1024;
  int rounds = argc > 3 ? atoi(argv[3]) : 1;
  if (rounds < 1) rounds = 1;
  const char *base = getenv("BOXFS_DIR");
  if (base && chdir(base) < 0) die("chdir");
  const char *dp = getenv("BOXFS_DAEMON_PID");
  daemon_pid = dp ? atoi(dp) : 0;
  double best[5] = { 1e9, 1e9, 1e9, 1e9, 1e9 };
  double best_cpu[5] = { 1e9, 1e9, 1e9, 1e9, 1e9 };
  for (int r = 0; r < rounds; r++) {
    char dir[32];
    snprintf(dir, sizeof dir, "mw%d", r);
    double got[5], cpu[5];
    small_files(dir, n, got, cpu);
    for (int i = 0; i < 5; i++) {
      if (got[i] < best[i]) best[i] = got[i];
      if (cpu[i] < best_cpu[i]) best_cpu[i] = cpu[i];
    }
  }
  static const char *const names[5] = { "create", "stat", "readdir", "read", "unlink" };
  for (int i = 0; i < 5; i++) printf("%s %.6f\n", names[i], best[i]);
  if (daemon_pid > 0)
    for (int i = 0; i < 5; i++) printf("cpu-%s %.1f\n", names[i], best_cpu[i] * 1e3);
  big_file(mib);
  return 0;
}

/* The daemon's CPU time so far in seconds (utime + stime of every thread,
 * ended ones included, from /proc/<pid>/stat), or 0 without a daemon. */
static double daemon_cpu(void)
{
  return pid_cpu(daemon_pid);
}

static double pid_cpu(int pid)
{
  if (pid <= 0) return 0;
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("daemon stat");
  ssize_t len = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (len <= 0) die("daemon stat");
  buf[len] = '\0';
  /* fields 14 and 15 (utime, stime), counted after the ")" that ends comm */
  char *p = strrchr(buf, ')');
  unsigned long long ut = 0, st = 0;
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
    die("daemon stat fields");
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* create, stat, readdir, read, unlink of n files in dir (removed after) */
static void small_files(const char *dir, long n, double out[5], double cpu[5])
{
  if (mkdir(dir, 0755) < 0 && errno != EEXIST) die("mkdir");
  char name[96], buf[128];
  memset(buf, 'x', sizeof buf);
  for (int op = 0; op < 5; op++) {
    double c = daemon_cpu();
    double t = now();
    if (op == 2) {
      expect_entries(dir, n, "readdir");
    } else {
      for (long i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s/f%06ld", dir, i);
        small_op(name, op, buf);
      }
    }
    out[op] = now() - t;
    cpu[op] = daemon_cpu() - c;
  }
  if (rmdir(dir) < 0) die("rmdir");
}

/* SIZE MiB written sequentially, read back twice */
static void big_file(long mib)
{
  double t;

  size_t chunk = 1 << 20;
  char *big = malloc(chunk);
  if (!big) die("malloc");
  for (size_t i = 0; i < chunk; i++) big[i] = (char)(i * 7);
  t = now();
  int fd = open("mw.big", O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("open big");
  for (long i = 0; i < mib; i++)
    if (write(fd, big, chunk) != (ssize_t)chunk) die("write big");
  close(fd);
  printf("write %.6f\n", now() - t);
  for (int pass = 1; pass <= 2; pass++) {
    t = now();
    fd = open("mw.big", O_RDONLY | O_CLOEXEC);
    if (fd < 0) die("open big");
    ssize_t got;
    long total = 0;
    while ((got = read(fd, big, chunk)) > 0) total += got;
    close(fd);
    if (total != mib * (long)chunk) {
      fprintf(stderr, "read %ld bytes, want %ld\n", total, mib * (long)chunk);
      exit(1);
    }
    printf("read%d %.6f\n", pass, now() - t);
  }
  unlink("mw.big");
  free(big);
}

/* ---- --interleave ---- */

#define IL_MAX 8
/* readdir: this many listings a round, one a block (a single listing of
 * 10,000 entries takes 3-7 ms, within this VM's hiccups) */
#define IL_LISTINGS 20
typedef struct {
  const char *name;
  char dir[4096];
  int pid;
  double t[5], cpu[5];
} IlSys;

/* order[0..ns): a permutation drawn from seed (Fisher-Yates, an LCG) */
static void il_order(int *order, int ns, unsigned seed)
{
  for (int i = 0; i < ns; i++) order[i] = i;
  for (int i = ns - 1; i > 0; i--) {
    seed = seed * 1103515245u + 12345u;
    int k = (int)((seed >> 16) % (unsigned)(i + 1));
    int t = order[i];
    order[i] = order[k];
    order[k] = t;
  }
}

static const char *const il_ops[5] = { "create", "stat", "readdir", "read", "unlink" };

/* operation op of the phase on file i of s's round directory */
static void il_one(const IlSys *s, int round, int op, long i, char *buf)
{
  char name[4200];
  snprintf(name, sizeof name, "%s/il%d/f%06ld", s->dir, round, i);
  small_op(name, op, buf);
}

static void il_readdir(const IlSys *s, int round, long n)
{
  char name[4200];
  snprintf(name, sizeof name, "%s/il%d", s->dir, round);
  char what[256];
  snprintf(what, sizeof what, "readdir of %s", s->name);
  expect_entries(name, n, what);
}

static int interleave(int argc, char **argv)
{
  if (argc < 4) {
    fprintf(stderr, "usage: mount-work --interleave N ROUNDS BLOCK NAME=DIR[@PID]...\n");
    return 2;
  }
  long n = atol(argv[0]);
  int rounds = atoi(argv[1]);
  long block = atol(argv[2]);
  if (n < 1 || rounds < 1 || block < 1) return 2;
  IlSys sys[IL_MAX];
  int ns = 0;
  for (int a = 3; a < argc && ns < IL_MAX; a++, ns++) {
    IlSys *s = &sys[ns];
    memset(s, 0, sizeof *s);
    char *eq = strchr(argv[a], '=');
    if (!eq) return 2;
    *eq = '\0';
    s->name = argv[a];
    const char *spec = eq + 1;
    if (strcmp(spec, "-") == 0) {
      const char *d = getenv("BOXFS_DIR"), *p = getenv("BOXFS_DAEMON_PID");
      if (!d) return 2;
      snprintf(s->dir, sizeof s->dir, "%s", d);
      s->pid = p ? atoi(p) : 0;
    } else {
      snprintf(s->dir, sizeof s->dir, "%s", spec);
      char *at = strrchr(s->dir, '@');
      if (at) {
        *at = '\0';
        s->pid = atoi(at + 1);
      }
    }
  }
  char buf[128];
  memset(buf, 'x', sizeof buf);
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < ns; k++) {
      char d[4200];
      snprintf(d, sizeof d, "%s/il%d", sys[k].dir, r);
      if (mkdir(d, 0755) < 0) die("mkdir");
      memset(sys[k].t, 0, sizeof sys[k].t);
      memset(sys[k].cpu, 0, sizeof sys[k].cpu);
    }
    for (int op = 0; op < 5; op++) {
      /* the phase before's dirty pages and journal written back now, not
       * by the flusher in the middle of some system's block */
      sync();
      long blocks = op == 2 ? IL_LISTINGS : (n + block - 1) / block;
      for (long b = 0; b < blocks; b++) {
        /* a fresh order each block: with a rotation each system always
         * followed the same one, and paid for what that one left the
         * kernel to do (native's journal and writeback) */
        int order[IL_MAX];
        il_order(order, ns, (unsigned)(r * 7919 + op * 104729) ^ (unsigned)b * 2654435761u);
        for (int j = 0; j < ns; j++) {
          IlSys *s = &sys[order[j]];
          double c = pid_cpu(s->pid), t = now();
          if (op == 2)
            il_readdir(s, r, n);
          else
            for (long i = b * block; i < n && i < (b + 1) * block; i++) il_one(s, r, op, i, buf);
          s->t[op] += now() - t;
          s->cpu[op] += pid_cpu(s->pid) - c;
        }
      }
    }
    for (int k = 0; k < ns; k++) {
      char d[4200];
      snprintf(d, sizeof d, "%s/il%d", sys[k].dir, r);
      if (rmdir(d) < 0) die("rmdir");
      for (int op = 0; op < 5; op++)
        printf("il %d %s %s %.6f\n", r, sys[k].name, il_ops[op], sys[k].t[op]);
      if (sys[k].pid > 0)
        for (int op = 0; op < 5; op++)
          printf("il %d %s cpu-%s %.1f\n", r, sys[k].name, il_ops[op], sys[k].cpu[op] * 1e3);
    }
    fflush(stdout);
  }
  return 0;
}

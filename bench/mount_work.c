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
 * the figure.  Usage: mount-work [N] [SIZE_MIB] [ROUNDS] */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

static void small_files(const char *dir, long n, double out[5]);
static void big_file(long mib);

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000;
  long mib = argc > 2 ? atol(argv[2]) : 1024;
  int rounds = argc > 3 ? atoi(argv[3]) : 1;
  if (rounds < 1) rounds = 1;
  const char *base = getenv("BOXFS_DIR");
  if (base && chdir(base) < 0) die("chdir");
  double best[5] = {1e9, 1e9, 1e9, 1e9, 1e9};
  for (int r = 0; r < rounds; r++) {
    char dir[32];
    snprintf(dir, sizeof dir, "mw%d", r);
    double got[5];
    small_files(dir, n, got);
    for (int i = 0; i < 5; i++)
      if (got[i] < best[i]) best[i] = got[i];
  }
  static const char *const names[5] = {"create", "stat", "readdir", "read", "unlink"};
  for (int i = 0; i < 5; i++) printf("%s %.6f\n", names[i], best[i]);
  big_file(mib);
  return 0;
}

/* create, stat, readdir, read, unlink of n files in dir (removed after) */
static void small_files(const char *dir, long n, double out[5]) {
  if (mkdir(dir, 0755) < 0 && errno != EEXIST) die("mkdir");
  char name[96], buf[128];
  memset(buf, 'x', sizeof buf);
  double t = now();
  for (long i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s/f%06ld", dir, i);
    int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) die("create");
    if (write(fd, buf, 100) != 100) die("write");
    close(fd);
  }
  out[0] = now() - t;
  t = now();
  struct stat st;
  for (long i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s/f%06ld", dir, i);
    if (stat(name, &st) < 0) die("stat");
  }
  out[1] = now() - t;
  t = now();
  DIR *d = opendir(dir);
  if (!d) die("opendir");
  long seen = 0;
  while (readdir(d)) seen++;
  closedir(d);
  if (seen != n + 2) {
    fprintf(stderr, "readdir saw %ld entries, want %ld\n", seen, n + 2);
    exit(1);
  }
  out[2] = now() - t;
  t = now();
  for (long i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s/f%06ld", dir, i);
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) die("open");
    if (read(fd, buf, sizeof buf) != 100) die("read");
    close(fd);
  }
  out[3] = now() - t;
  t = now();
  for (long i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s/f%06ld", dir, i);
    if (unlink(name) < 0) die("unlink");
  }
  out[4] = now() - t;
  if (rmdir(dir) < 0) die("rmdir");
}

/* SIZE MiB written sequentially, read back twice */
static void big_file(long mib) {
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

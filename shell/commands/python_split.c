/* python_split.c — a worker of Python's zygote split in two before its
 * command comes: the command runs in the child, the parent keeps the
 * Shell's clean image for the interpreter's subprocesses.
 *
 * A python3 the Shell runs in a child of its own (interp.c) pays, on the
 * command's path, a fork of a process holding the warm interpreter and
 * then a copy-on-write fault for each page of it the run writes: some 600
 * pages for print(1), at 2-3 µs each on a virtual machine, more than half
 * of the command's time.  So the worker forks once while it waits in the
 * pool; the child, once it has said it is ready and has waited a while
 * unused, takes a private copy of every page the zygote had written
 * (MADV_POPULATE_WRITE: one system call per run of pages, no fault each)
 * at a low priority, until its command comes, and serves the
 * command as the worker, running a
 * python3 that is the text's only command in place, with no fork.  The
 * parent is the launcher (python_launcher.c) that the child's interpreter
 * asks to start its processes from a Shell that ran nothing, and reports
 * the child's end when the child could not (os._exit, a fatal signal). */
#include <errno.h>
#include <glib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shell/commands/python_launcher.h"
#include "shell/shell-private.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The zygote's private writable mappings (heap, the interpreter's arenas,
 * the libraries' data), noted before it forks: the worker rooted in the
 * mount has no /proc of its own to read them from. */
#define MAPPINGS_MAX 256
#define MAPPING_LARGEST (64u << 20) /* a reservation, not the interpreter's */
static struct {
  uintptr_t start, end;
} written[MAPPINGS_MAX];
static int nwritten;
static bool split_child;

void box_python_note_mappings(void)
{
  FILE *f = fopen("/proc/self/maps", "re");
  if (!f) return;
  char line[512];
  nwritten = 0;
  while (nwritten < MAPPINGS_MAX && fgets(line, sizeof line, f)) {
    unsigned long start, end;
    char perms[5];
    if (sscanf(line, "%lx-%lx %4s", &start, &end, perms) != 3) continue;
    if (perms[1] != 'w' || perms[3] != 'p' || end - start > MAPPING_LARGEST) continue;
    if (strstr(line, "[stack]") || strstr(line, "[v")) continue; /* vvar, vdso, vsyscall */
    written[nwritten].start = start;
    written[nwritten].end = end;
    nwritten++;
  }
  fclose(f);
}

/* The copy runs in a thread of its own at a low priority (nice 10: the
 * commands of the pool's other workers keep the CPUs), while the worker's
 * own thread waits for its command at the default one and stops the copy
 * when it comes, waiting for the step in hand.  Not SCHED_IDLE: on a busy
 * machine such a thread, stopped inside a step, could keep the command
 * waiting for as long as the CPUs stay busy. */
static pthread_t owner;
static bool owning;
static atomic_bool stop_owning;
static pthread_mutex_t owning_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t owning_stop = PTHREAD_COND_INITIALIZER;
/* Begun only after the worker has waited this long: commands that come
 * one right after another (a loop, a benchmark) take each worker sooner,
 * and the copy, pure cost when a command's own faults would come at once
 * anyway, would only compete with them. */
#define OWN_AFTER_MS 30

static void *own_pages(void *data)
{
  (void)data;
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_nsec += OWN_AFTER_MS * 1000000L;
  until.tv_sec += until.tv_nsec / 1000000000L;
  until.tv_nsec %= 1000000000L;
  pthread_mutex_lock(&owning_lock);
  int r = 0;
  while (!atomic_load(&stop_owning) && r != ETIMEDOUT)
    r = pthread_cond_timedwait(&owning_stop, &owning_lock, &until);
  pthread_mutex_unlock(&owning_lock);
  setpriority(PRIO_PROCESS, 0, 10); /* this thread's */
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  /* pages looked at, and copied, between two looks at the flag: some 40 µs */
  unsigned char vec[16];
  for (int m = 0; m < nwritten; m++) {
    for (uintptr_t at = written[m].start; at < written[m].end;) {
      if (atomic_load_explicit(&stop_owning, memory_order_relaxed)) return NULL;
      size_t n = MIN((written[m].end - at) / page, sizeof vec);
      if (mincore((void *)at, n * page, vec) != 0) break; /* unmapped since: skip it */
      for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && (vec[j] & 1)) j++;
        if (j > i) madvise((void *)(at + i * page), (j - i) * page, MADV_POPULATE_WRITE);
        i = j + 1;
      }
      at += n * page;
    }
  }
  return NULL;
}

void box_python_own_pages_start(void)
{
  if (!split_child || owning) return;
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&owning_stop, &attr);
  pthread_condattr_destroy(&attr);
  owning = pthread_create(&owner, NULL, own_pages, NULL) == 0;
}

void box_python_own_pages_stop(void)
{
  if (split_child) prctl(PR_SET_NAME, "box-shell");
  if (!owning) return;
  pthread_mutex_lock(&owning_lock);
  atomic_store(&stop_owning, true);
  pthread_cond_signal(&owning_stop);
  pthread_mutex_unlock(&owning_lock);
  pthread_join(owner, NULL); /* within a chunk's time */
  owning = false;
}

pid_t box_python_split(void)
{
  if (nwritten == 0 || !box_python_launcher_open()) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    box_python_launcher_stop();
    return -1;
  }
  if (pid == 0) {
    box_python_launcher_child(); /* the parent's end */
    split_child = true;
    /* named apart while it waits in the pool (box_python_own_pages_stop
     * gives the name back): no command's process yet */
    prctl(PR_SET_NAME, "box-runner");
    return 0;
  }
  return pid;
}

int box_python_split_serve(Shell *sh, pid_t child)
{
  BoxCmd c;
  memset(&c, 0, sizeof c);
  c.sh = sh;
  box_python_launcher_serve(&c, child);
  int ws = 0;
  while (waitpid(child, &ws, 0) < 0)
    if (errno != EINTR) return -1;
  return ws;
}

static bool here;

void box_python_here_note(const char *source)
{
  here = false;
  if (!split_child) return;
  g_autofree char *name = box_text_only_command(source);
  here = name && box_is_python_name(name);
}

bool box_python_here_take(const BoxCmd *c)
{
  bool was = here;
  here = false;
  return was && !c->sh->in_child;
}

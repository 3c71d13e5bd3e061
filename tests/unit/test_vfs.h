/* test_vfs.h — what the vfs tests share: the fixture, the policy
 * stand-in's records, and running code as a command's worker
 * (test_vfs_fixture.c). */
#ifndef BOX_TEST_VFS_H
#define BOX_TEST_VFS_H

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "vfs/vfs.h"

typedef struct {
  char *base;
  char *home;
  char *mnt;
  char *pass_home; /* <mnt>/pass<home> */
  char *floor_tree;
  char *floor_file;
  BoxVfs *vfs;
  GMutex mu;
  GPtrArray *records; /* "action path operation verdict" */
  GPtrArray *commands_seen;
  /* decisions on paths containing "pending" wait for release (10 s at most) */
  GCond cond;
  bool release;
  int pending_started;
  int decides;        /* calls of test_decide */
  int notes;          /* calls of test_note (verdicts reused from the cache) */
  int quiet;          /* calls of test_decide_quiet (a probe's verdict) */
  bool track_batches; /* history batches recorded as "batch begin" / "batch end" */
} Fx;

#define FX_CACHED GINT_TO_POINTER(1)
#define FX_CACHED_NO_PT GINT_TO_POINTER(2)   /* as FX_CACHED, without FUSE passthrough */
#define FX_CACHED_BENEATH GINT_TO_POINTER(3) /* as FX_CACHED, told what may lie below a directory */

void fx_setup(Fx *fx, gconstpointer data);
void fx_teardown(Fx *fx, gconstpointer data);
/* An assertion aborts the process before teardown: detach the mount then. */
void on_abort(int sig);
void release_pending(Fx *fx);
void write_file(const char *path, const char *text);
/* dir (made with its parents) holding name with text */
void write_file_in(const char *dir, const char *name, const char *text);
/* the records so far ("action path operation verdict"), taken */
GPtrArray *take_records(Fx *fx);
void dump_records(GPtrArray *r);
void assert_in_order(GPtrArray *r, const char *const *expected);
guint count_records(GPtrArray *r, const char *line);

/* ---- running code as a command's worker ---- */

typedef struct {
  Fx *fx;
  int cmd;
  char *ram; /* <mnt>/ram/c<N> */
  FILE *out; /* key=value lines to the parent */
} Ctx;

typedef void (*WorkerFn)(Ctx *ctx);

void put(Ctx *c, const char *key, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
int err_of(int rc);
char *slurp(const char *path, int *e);
void put_open(Ctx *c, const char *key, const char *path, int flags);
void put_read(Ctx *c, const char *key, const char *path);
void put_read_errno(Ctx *c, const char *key, const char *path);
void put_symlink(Ctx *c, const char *target, const char *path);
char *denial_text(Ctx *c);
gint cmp_names(gconstpointer a, gconstpointer b);
char *listdir(const char *path);
typedef void (*PlacedFn)(Fx *fx, int cmd, void *arg);
pid_t fork_placed(Fx *fx, int cmd, bool is_tool, const int *keep, int nkeep, int go_in,
                  PlacedFn body, void *arg);
GHashTable *run_worker(Fx *fx, int cmd, bool running, WorkerFn fn);
const char *val(GHashTable *h, const char *key);

/* the tests (test_vfs_*.c) */
void test_blanked_lookup(Fx *fx, gconstpointer data);
void test_concurrent(Fx *fx, gconstpointer data);
void test_create_raced(Fx *fx, gconstpointer data);
void test_decision_cache(Fx *fx, gconstpointer data);
void test_git(Fx *fx, gconstpointer data);
void test_history_batches(Fx *fx, gconstpointer data);
void test_nested_pidns(Fx *fx, gconstpointer data);
void test_outcomes(Fx *fx, gconstpointer data);
void test_pass_decisions(Fx *fx, gconstpointer data);
void test_passthrough(Fx *fx, gconstpointer data);
void test_pending_end(Fx *fx, gconstpointer data);
void test_pending_interrupt(Fx *fx, gconstpointer data);
void test_quiet_probe(Fx *fx, gconstpointer data);
void test_race(Fx *fx, gconstpointer data);
void test_ram(Fx *fx, gconstpointer data);
void test_readdirplus(Fx *fx, gconstpointer data);
void test_refused_dirs(Fx *fx, gconstpointer data);
void test_root_creates(Fx *fx, gconstpointer data);
void test_settled_stats(Fx *fx, gconstpointer data);
void test_setup_state(Fx *fx, gconstpointer data);
void test_unplaced(Fx *fx, gconstpointer data);
void test_watched_entries(Fx *fx, gconstpointer data);
void test_slot_root_kept(Fx *fx, gconstpointer data);

#endif

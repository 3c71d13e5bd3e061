/* tools-private.h — shared inside tools/ only: the box-wide context, the
 * environment, the seccomp program, and the planned mount view. */
#ifndef BOX_TOOLS_PRIVATE_H
#define BOX_TOOLS_PRIVATE_H

#include "tools/tools.h"
#include "policy/path.h"

/* The box-wide context (never NULL; fields may be). */
const BoxToolContext *tools_context(void);
/* envp (g_strfreev-able) plus extra "NAME=value" the box does not own; consumes envp. */
char **tools_env_merge(char **envp, char *const *extra);

/* The seccomp program of §5.8, compiled once: a struct sock_fprog *. */
const void *tools_seccomp_program(GError **error);
/* The same filter with every EPERM a notification to a listener instead
 * (installed with SECCOMP_FILTER_FLAG_NEW_LISTENER, box_tools_set_refusals). */
const void *tools_seccomp_observed(GError **error);

/* Drops every kept plan (the box-wide context changed). */
void tools_plans_forget(void);

/* A "." or ".." step of a path walked one component at a time: true when
 * name is one, after taking the last component off at for "..". */
bool tools_dot_step(const char *name, GString *at);

/* /etc entries a tool's view carries (the leaf set's runtime services). */
extern const char *const tools_etc_entries[];

/* ---- the planned mount view (view.c plans, launch.c replays) ---- */

typedef enum {
  MOUNT_READ,       /* ro, noexec */
  MOUNT_SYSTEM,     /* ro, exec: host system trees */
  MOUNT_EXEC,       /* ro, exec */
  MOUNT_SOCKET,     /* the broker socket */
  MOUNT_WRITE,      /* rw, noexec */
  MOUNT_WRITE_EXEC, /* rw, exec */
  MOUNT_ENTER,      /* empty ro tmpfs: chdir only */
  MOUNT_DENY,       /* empty ro file or tmpfs over a grant */
} MountKind;

typedef enum {
  STEP_MKDIR,
  STEP_FILE,
  STEP_SYMLINK,
  STEP_BIND,
  STEP_TMPFS,
  STEP_PROC,
  STEP_UNLINK
} StepKind;

typedef struct {
  StepKind kind;
  char *src;           /* bind source, symlink target, fs name */
  char *dst;           /* under the staging root */
  unsigned long flags; /* remount flags of a bind, mount flags otherwise */
  char *data;
  bool per_launch; /* the private /tmp and /proc: never in a prepared view */
  bool tmp_top;    /* a mount in /tmp not inside another: moved onto each launch's /tmp */
} Step;

/* What a plan read of the host: a path and the object it named (lstat,
 * no link followed; ino 0 = absent).  A cached plan holds while every
 * one still names the same object. */
typedef struct {
  char *path;
  dev_t dev;
  ino_t ino;
} Ident;

typedef struct {
  const char *root;
  GArray *steps;  /* Step */
  GArray *idents; /* Ident */
} View;

#define VIEW_EMPTY_FILE "/.box-refused"

/* The per-launch mounts, the same whether replayed or added to a prepared view. */
#define VIEW_TMP_SOURCE "box-tmp"
#define VIEW_TMP_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)
#define VIEW_TMP_DATA "mode=1777"
#define VIEW_PROC_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* userns.c: maps the user to 0 in pid's new user namespace (setgroups
 * denied first, as the kernel requires of an unprivileged writer). */
bool tools_map_user(pid_t pid, GError **error);

void tools_view_init(View *v, const char *root);
bool tools_view_plan(View *v, const BoxToolLaunch *l, GError **error);
/* The view's mount points and what each lets the sandbox do below it
 * (BoxToolAttachFn): paths, and in *reach one of 'n', 'r', 'w' each. */
char **tools_view_reach(const View *v, char **reach);
/* True when path is inside a bind or an entered tmpfs of the view. */
bool tools_view_contains(const View *v, const char *path);
void tools_view_clear(View *v);
/* True while every object the plan read is still the one it read. */
bool tools_view_still_valid(const View *v);
/* At most this many mounts (with what is mounted inside them) sit in /tmp
 * of a prepared view. */
#define VIEW_TMP_MOUNTS_MAX 64

/* True when the view can be prepared once and entered by each launch:
 * nothing in /proc, no mount on or above /tmp or /proc, at most
 * VIEW_TMP_MOUNTS_MAX mounts in /tmp.  Marks the mounts in /tmp that each
 * launch carries over onto its own /tmp (tmp_top). */
bool tools_view_preparable(View *v);

/* held.c: pid's mount namespace held (by its PID 1's *pidfd, taken)
 * until that PID 1 has ended; all of them let go at once. */
void tools_hold_mount_namespace(pid_t pid, int *pidfd);
void tools_release_held(void);

#endif

/* checkpoints/checkpoints.h — public interface of the per-command
 * checkpoints (libboxcheckpoints): a bare git repository, written with
 * libgit2, holding one commit of the workspace per command that changed it.
 *
 * A commit is built from the previous checkpoint's tree and the paths a
 * command wrote, renamed or removed (the mount reports them), read from the
 * workspace as they are when the command has ended: no scan of the tree but
 * the first.  The mount never links this; boxd and the `box` verbs do. */
#ifndef BOX_CHECKPOINTS_H
#define BOX_CHECKPOINTS_H

#include <stdbool.h>
#include <glib.h>

G_BEGIN_DECLS

typedef struct BoxCheckpoints BoxCheckpoints;

#define BOX_CHECKPOINTS_ERROR (box_checkpoints_error_quark())
GQuark box_checkpoints_error_quark(void);

/* `[checkpoints]` of box.toml. */
typedef struct {
  bool enabled;
  /* Files larger than this are kept by size and SHA-256 alone (a restore
   * leaves them as they are); 0: no limit. */
  guint64 max_file_size;
  /* How many checkpoints the log keeps (older ones are dropped when the
   * box starts); 0: all. */
  guint keep;
  /* Globs of workspace paths never recorded nor restored: "NAME/" names a
   * directory at any depth, a glob without '/' a base name, any other a
   * path relative to the workspace.  NULL-terminated.  A `.git` directory
   * is never recorded, listed or not. */
  char **exclude;
} BoxCheckpointsLimits;

#define BOX_CHECKPOINTS_MAX_FILE_SIZE_DEFAULT (16u * 1024u * 1024u)
#define BOX_CHECKPOINTS_KEEP_DEFAULT 1000u
/* NULL-terminated: the default exclude globs. */
extern const char *const box_checkpoints_exclude_default[];

/* Whether limits exclude rel (a path relative to the workspace; is_dir:
 * it names a directory). */
bool box_checkpoints_excluded(const BoxCheckpointsLimits *limits, const char *rel, bool is_dir);

/* Opens the bare repository at repo_dir, creating it when missing, for the
 * workspace (a canonical absolute path).  limits is copied. */
BoxCheckpoints *box_checkpoints_open(const char *repo_dir, const char *workspace,
                                     const BoxCheckpointsLimits *limits, GError **error);
void box_checkpoints_close(BoxCheckpoints *cp);
/* The repository itself, to read it (owned by cp). */
struct git_repository *box_checkpoints_repository(BoxCheckpoints *cp);

/* Records the workspace as the newest checkpoint: the previous one's tree
 * with each of paths (absolute; those outside the workspace are ignored;
 * a directory is read whole) as it is now, or the whole workspace when
 * paths is NULL.  subject is the commit's first line, body the rest (may be
 * NULL).  *id gets the new commit's id (hex, g_malloc'd), or NULL when the
 * tree did not change (no commit is made).  False with error when the
 * repository could not be written. */
bool box_checkpoints_record(BoxCheckpoints *cp, const char *const *paths, const char *subject,
                            const char *body, char **id, GError **error);

/* Keeps the newest keep checkpoints (0: all), the oldest of them made the
 * first: their ids change.  False when the repository could not be
 * rewritten (it is left as it was). */
bool box_checkpoints_prune(BoxCheckpoints *cp, guint keep);

/* The newest n checkpoints (0: all), newest first, one line each:
 * "<id12>  <time>  <files changed>  <subject>". */
bool box_checkpoints_log(BoxCheckpoints *cp, guint n, GString *out, GError **error);

/* Unified diff (stat: a diffstat) from checkpoint a to b; b NULL: what a
 * itself changed (from its parent).  paths NULL or empty: everything;
 * otherwise paths relative to the workspace (a directory: all below). */
bool box_checkpoints_diff(BoxCheckpoints *cp, const char *a, const char *b,
                          const char *const *paths, bool stat, GString *out, GError **error);

/* Puts the workspace (or only paths, relative to it) back as it was at
 * checkpoint id: contents, types and modes; what was not there is removed.
 * Then records the result as a checkpoint of its own (*new_id, may be
 * NULL).  Lines for the operator (files kept by hash only) go to notes. */
bool box_checkpoints_restore(BoxCheckpoints *cp, const char *id, const char *const *paths,
                             char **new_id, GString *notes, GError **error);

G_END_DECLS
#endif

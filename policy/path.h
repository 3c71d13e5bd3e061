/* path.h — how policy spells a resource's path: which directory a path is
 * within, and the `~/…` form of a path under a home that rules and
 * messages use.  Plain string work (no file system access), shared with
 * the mount, the tools' views and the CLI so that they all agree. */
#ifndef BOX_POLICY_PATH_H
#define BOX_POLICY_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* Whether path names dir or something beneath it, a whole component at a
 * time ("/ab" is not within "/a"; "/a" is within "/a").  dir's trailing
 * slashes do not count, and every absolute path is within "/" (a relative
 * one is not). */
bool box_path_within(const char *path, const char *dir);
/* The same for the first n bytes of path (a literal that need not end in
 * NUL). */
bool box_path_within_len(const char *path, size_t n, const char *dir);

/* The first n bytes of path spelled from home: "~" for home itself,
 * "~/rest" beneath it (the slashes that join rest to home, and trailing
 * ones, dropped), newly allocated; NULL when home is not absolute or path
 * is not within it.  A home of "/" spells every absolute path as "~/…":
 * callers that never treat "/" as a home check that first. */
char *box_path_tilde_len(const char *path, size_t n, const char *home);
char *box_path_tilde(const char *path, const char *home);
/* How a decision's input and a denial spell path: its `~` form when home
 * is set, absolute and not "/" (an operator whose home is the root has
 * no `~`), else path itself; newly allocated. */
char *box_path_spell(const char *path, const char *home);

#endif

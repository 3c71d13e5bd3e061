/* internal.h — shared inside tools/ only. */
#ifndef BOX_TOOLS_INTERNAL_H
#define BOX_TOOLS_INTERNAL_H

#include "tools/tools.h"
#include "policy/path.h"

#define TOOLS_ERROR (g_quark_from_static_string("box-tools"))

/* The box-wide context (never NULL; fields may be). */
const BoxToolContext *tools_context(void);
/* envp (g_strfreev-able) plus extra "NAME=value" the box does not own; consumes envp. */
char **tools_env_merge(char **envp, char *const *extra);


/* The seccomp program of §5.8, compiled once: a struct sock_fprog *. */
const void *tools_seccomp_program(GError **error);

/* Drops every kept plan (the box-wide context changed). */
void tools_plans_forget(void);

/* A "." or ".." step of a path walked one component at a time: true when
 * name is one, after taking the last component off at for "..". */
bool tools_dot_step(const char *name, GString *at);

/* /etc entries a tool's view carries (the leaf set's runtime services). */
extern const char *const tools_etc_entries[];

#endif

/* fastopen.h — the Shell's fast path for reading regular files (DESIGN.md
 * "The mount", Speed), boxd's side.  Private to box/. */
#ifndef BOX_FASTOPEN_H
#define BOX_FASTOPEN_H

#include <json-c/json.h>
#include <sys/types.h>

#include "box/boxd.h"

/* Most files one "open" request may name (each answer carries one
 * descriptor, and a message carries at most BOX_CTL_MAX_FDS). */
#define BOX_FASTOPEN_MAX 32

/* Answers a worker's {"op":"open","cwd":…,"paths":[…]} on reply_fd: for
 * each path, in order, {"fd":true} (its descriptor rides with the reply, in
 * the same order), {"err":E,"message":…} (decided and refused, or decided
 * and not openable), or {"fallback":true} (not for this path: the worker
 * opens it through the mount, which decides it there).  Only regular files
 * inside a bound root, reached without a symlink or "..", outside every
 * floor, are decided here — fs:read/read_content on the same spelled path,
 * logged, with the outcome descriptor_issued. */
void box_fastopen_handle(Boxd *d, int command, pid_t worker, json_object *msg, int reply_fd);

/* Answers a worker's {"op":"list","cwd":…,"path":…} on reply_fd: the
 * mount's OPENDIR decision (fs:read/enumerate) for a directory inside a
 * bound root reached without a symlink or "..", outside every floor; then
 * {"ok":1} and the directory's getdents64 records in messages tagged 'D',
 * ended by 'E' ('X' and an errno when reading failed), or {"err":E,
 * "message":…}, or {"fallback":true} (the worker lists it through the
 * mount).  With "open":N, after 'E' the answers of an "open" request for
 * the directory's leading regular files (up to N, up to the first entry
 * that is not one, "." and ".." aside), as a walk would ask next. */
void box_fastlist_handle(Boxd *d, int command, json_object *msg, int reply_fd);

#endif

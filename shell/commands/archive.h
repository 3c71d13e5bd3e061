/* archive.h — what tar, zip and unzip share: libarchive over the Shell's
 * descriptors.  An archive is read and written with read(2)/write(2) on a
 * descriptor from box_open_file, never through libarchive's own file
 * openers: those fstat (a decision on the mount) and open outside the
 * Shell's fast path. */
#ifndef BOX_SHELL_COMMANDS_ARCHIVE_H
#define BOX_SHELL_COMMANDS_ARCHIVE_H

#include <archive.h>
#include <archive_entry.h>

#include "shell/commands/commands-private.h"

/* Reads a's input from fd (closed with the archive when close_fd). */
int bx_archive_read_fd(struct archive *a, int fd, bool close_fd);
/* Writes a's output to fd, or to c->out when fd < 0. */
int bx_archive_write_fd(struct archive *a, BoxCmd *c, int fd);
/* Copies the data of a's current entry to fd (c->out when fd < 0).  0, or
 * the errno of a failed write (-1: the archive failed; archive_error_string
 * says why). */
int bx_archive_copy_data(struct archive *a, BoxCmd *c, int fd);
/* Creates the directories leading to path (mkdir -p of its dirname):
 * 0 or an errno. */
int bx_make_parents(const char *path);

#endif

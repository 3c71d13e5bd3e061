/* archive.h — what tar, zip and unzip share: libarchive over the Shell's
 * descriptors, and zip's own format (zip and unzip read and write it with
 * zlib: Info-ZIP's listings need each member's method and sizes, which
 * libarchive keeps to itself).  An archive is read and written with read(2)/write(2) on a
 * descriptor from box_open_file, never through libarchive's own file
 * openers: those fstat (a decision on the mount) and open outside the
 * Shell's fast path. */
#ifndef BOX_SHELL_COMMANDS_ARCHIVE_H
#define BOX_SHELL_COMMANDS_ARCHIVE_H

#include "shell/commands/archive_dl.h"

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

/* ---- zip's format (little-endian fields, DOS times) ---- */

#define BX_ZIP_LOCAL 0x04034b50u
#define BX_ZIP_CENTRAL 0x02014b50u
#define BX_ZIP_END 0x06054b50u

typedef struct {
  char *name;
  guint16 method, made_by;
  guint32 crc, csize, usize, offset, attr;
  time_t mtime;
} BxZipEntry;

guint32 bx_le32(const unsigned char *p);
guint16 bx_le16(const unsigned char *p);
void bx_put_le32(GString *s, guint32 v);
void bx_put_le16(GString *s, guint16 v);
/* A time as zip records it (local time, two-second steps), and back. */
void bx_zip_dos_time(time_t t, guint16 *time, guint16 *date);
time_t bx_zip_time(guint16 time, guint16 date);
/* The central directory of the archive in data[0..n): a GArray of
 * BxZipEntry (names g_malloc'd; free with bx_zip_entries_free), or NULL
 * when it has none. */
GArray *bx_zip_entries(const unsigned char *data, size_t n);
void bx_zip_entries_free(GArray *v);
/* Where entry e's data starts in data[0..n) (past its local header); 0
 * when the header is not there. */
size_t bx_zip_data_offset(const BxZipEntry *e, const unsigned char *data, size_t n);

#endif

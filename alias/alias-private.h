/* alias-private.h — what the files of box-alias share (libc only). */
#ifndef BOX_ALIAS_PRIVATE_H
#define BOX_ALIAS_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

/* alias.c: "box-alias: <message>" on stderr, exit 125. */
__attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...);
/* Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. */
bool valid_utf8(const unsigned char *s, size_t n);

/* alias.c: a growable buffer (out of memory dies). */
typedef struct {
  char *data;
  size_t len, cap;
} Buf;
void buf_reserve(Buf *b, size_t extra);
void buf_add(Buf *b, const void *p, size_t n);

/* frame_reader.c: what the alias reads of a frame from the box. */
typedef struct {
  char *frame_type, *kind, *reason, *stream, *data;
  size_t data_len;
  bool has_status, status_int;
  long long status;
} Frame;
/* Validates TEXT (LEN bytes) as a whole JSON frame, picking out frame_type
 * and, from body, status, kind, reason, stream and data; false when it is
 * not one.  The caller frees F with frame_clear either way. */
bool parse_frame(const char *text, size_t len, Frame *f);
void frame_clear(Frame *f);
/* Standard base64 with padding; returns decoded length or -1. */
long base64_decode(const char *in, size_t n, unsigned char *out);

#endif

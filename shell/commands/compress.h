/* compress.h — what gzip and xz share: the walk over the operands, the
 * output file named by a suffix and given the input's mode and times, the
 * input removed after (-k keeps it).  Each command brings its codec and its
 * tool's messages. */
#ifndef BOX_SHELL_COMMANDS_COMPRESS_H
#define BOX_SHELL_COMMANDS_COMPRESS_H

#include <sys/stat.h>
#include <time.h>

#include "shell/commands/commands-private.h"

#define BX_PACK_CHUNK (1 << 17)

enum {
  BX_PACK_EXISTS,
  BX_PACK_HAS_SUFFIX,
  BX_PACK_UNKNOWN_SUFFIX,
  BX_PACK_IS_DIR,
  BX_PACK_NOT_FORMAT
};

typedef struct BxPack BxPack;

typedef struct {
  const char *suffix;          /* what compressing adds */
  const char *const *suffixes; /* what decompressing takes off, NULL-ended */
  const char *magic;           /* a compressed file's first bytes */
  const char *stdin_name;      /* standard input in messages */
  bool format_first;           /* a wrong format is said before a wrong suffix */
  /* the messages, each about one name (%s): BX_PACK_EXISTS… */
  const char *texts[5];
  bool exists_is_error; /* status 1, else a warning (2) */
  int has_suffix_status;
  /* in to out (out -1: stdout, -2: nowhere); n bytes of in are in p->in
   * already.  stored: the name to record (NULL: none).  false after the
   * message. */
  bool (*pack)(BxPack *p, int in, int out, const char *name, const char *stored, time_t mtime,
               ssize_t n);
  bool (*unpack)(BxPack *p, int in, int out, const char *name, ssize_t n);
  bool force_copies_under_test; /* -tf passes what is not ours, as -dcf does */
  /* -l and -v: what was done to name, once done (to: -l, the name
   * without its suffix; -v, the file made, NULL for stdout); NULL name
   * after the last operand, for -l's totals */
  void (*report)(BxPack *p, const char *name, const char *to, const struct stat *st);
  /* a symbolic link it would replace (not -f, -c…): the warning that
   * passes it over (NULL: it is an open's error), and whether -k reads it */
  const char *link_text;
  bool keep_follows;
} BxCodec;

struct BxPack {
  BoxCmd *c;
  const char *cmd; /* the messages' prefix */
  const BxCodec *codec;
  bool to_stdout, decompress, keep, force, no_name, test;
  bool recursive, list, quiet, verbose;
  const char *suffix; /* -S: taken first, made instead of the codec's */
  void *seen;         /* the codec's record of the last file, for report */
  int operands;       /* how many were given */
  bool extreme;       /* xz -e */
  int threads;        /* xz -T */
  bool abort;         /* the operands left are not looked at */
  int level;
  int status;              /* 1 error, 2 warning (an error wins) */
  unsigned char *in, *out; /* BX_PACK_CHUNK each */
};

/* Runs p over c's operands (stdin when none); returns the status. */
int bx_pack_run(BxPack *p);
/* "cmd: " fmt with its arguments (a name first), as an error (1), a warning (2) or a note (0). */
void bx_pack_say(BxPack *p, int status, const char *fmt, ...);
/* Writes to fd (-1: stdout, -2: nowhere).  false with errno. */
bool bx_pack_put(BxPack *p, int fd, const void *data, size_t n);
/* -f's decompression of what is not compressed: n bytes at data, then the
 * rest of in, to out unchanged.  false after the message. */
bool bx_pack_copy(BxPack *p, int in, int out, const char *name, const void *data, size_t n);

#endif

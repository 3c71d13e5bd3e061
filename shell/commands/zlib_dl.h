/* zlib_dl.h — zlib, resolved at run time (see lazy_dl.h): only gzip, zip
 * and unzip need it, and each library more at a Shell start is more
 * symbols to bind and mappings for every fork to copy.  gzip.c, zip.c and
 * unzip.c include this header instead of <zlib.h>; the macros route their
 * calls through the table, so their code reads as ordinary zlib. */
#ifndef BOX_SHELL_COMMANDS_ZLIB_DL_H
#define BOX_SHELL_COMMANDS_ZLIB_DL_H

#include <zlib.h>

#include "shell/commands/lazy_dl.h"

#define BOX_ZLIB_FUNCTIONS(X)                                                                      \
  X(crc32)                                                                                         \
  X(compressBound)                                                                                 \
  X(deflateInit2_)                                                                                 \
  X(deflate)                                                                                       \
  X(deflateEnd)                                                                                    \
  X(inflateInit2_)                                                                                 \
  X(inflate)                                                                                       \
  X(inflateReset)                                                                                  \
  X(inflateEnd)

typedef struct {
  BOX_ZLIB_FUNCTIONS(BOX_DL_FIELD)
} BoxZlibApi;

extern const BoxZlibApi *box_zlib; /* set before any call (box_dl_command) */
#ifndef BOX_ZLIB_DL_IMPL
#define crc32(...) (box_zlib->crc32(__VA_ARGS__))
#define compressBound(...) (box_zlib->compressBound(__VA_ARGS__))
#define deflateInit2_(...) (box_zlib->deflateInit2_(__VA_ARGS__))
#define deflate(...) (box_zlib->deflate(__VA_ARGS__))
#define deflateEnd(...) (box_zlib->deflateEnd(__VA_ARGS__))
#define inflateInit2_(...) (box_zlib->inflateInit2_(__VA_ARGS__))
#define inflate(...) (box_zlib->inflate(__VA_ARGS__))
#define inflateReset(...) (box_zlib->inflateReset(__VA_ARGS__))
#define inflateEnd(...) (box_zlib->inflateEnd(__VA_ARGS__))
#endif

#endif

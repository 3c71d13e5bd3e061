/* magic_dl.h — libmagic, resolved at run time (see lazy_dl.h), for `file`.
 * file.c includes this header instead of <magic.h>; the macros route its
 * magic_* calls through the table, so its code reads as ordinary
 * libmagic.
 *
 * In a box the worker cannot open the magic database by name either: the
 * zygote keeps a descriptor of it (the library's data file), and `file`
 * loads it from memory (magic_load_buffers). */
#ifndef BOX_SHELL_COMMANDS_MAGIC_DL_H
#define BOX_SHELL_COMMANDS_MAGIC_DL_H

#include <magic.h>

#include "shell/commands/lazy_dl.h"

#define BOX_MAGIC_FUNCTIONS(X)                                                                     \
  X(magic_open)                                                                                    \
  X(magic_close)                                                                                   \
  X(magic_load)                                                                                    \
  X(magic_load_buffers)                                                                            \
  X(magic_file)                                                                                    \
  X(magic_error)

typedef struct {
  BOX_MAGIC_FUNCTIONS(BOX_DL_FIELD)
} BoxMagicApi;

extern const BoxMagicApi *box_magic; /* set before any call (box_dl_command) */
#ifndef BOX_MAGIC_DL_IMPL
#define magic_open(...) (box_magic->magic_open(__VA_ARGS__))
#define magic_close(...) (box_magic->magic_close(__VA_ARGS__))
#define magic_load(...) (box_magic->magic_load(__VA_ARGS__))
#define magic_load_buffers(...) (box_magic->magic_load_buffers(__VA_ARGS__))
#define magic_file(...) (box_magic->magic_file(__VA_ARGS__))
#define magic_error(...) (box_magic->magic_error(__VA_ARGS__))
#endif

#endif

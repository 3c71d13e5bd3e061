/* lzma_dl.h — liblzma, resolved at run time (see lazy_dl.h, zlib_dl.h):
 * only xz needs it (-l reads a file's index with the last seven).  xz.c includes this header instead of <lzma.h>; the
 * macros route its calls through the table, so its code reads as ordinary
 * liblzma. */
#ifndef BOX_SHELL_COMMANDS_LZMA_DL_H
#define BOX_SHELL_COMMANDS_LZMA_DL_H

#include <lzma.h>

#include "shell/commands/lazy_dl.h"

#define BOX_LZMA_FUNCTIONS(X)                                                                      \
  X(lzma_easy_encoder)                                                                             \
  X(lzma_stream_encoder_mt)                                                                        \
  X(lzma_stream_decoder)                                                                           \
  X(lzma_code)                                                                                     \
  X(lzma_end)                                                                                      \
  X(lzma_file_info_decoder)                                                                        \
  X(lzma_index_stream_count)                                                                       \
  X(lzma_index_block_count)                                                                        \
  X(lzma_index_file_size)                                                                          \
  X(lzma_index_uncompressed_size)                                                                  \
  X(lzma_index_checks)                                                                             \
  X(lzma_index_end)

typedef struct {
  BOX_LZMA_FUNCTIONS(BOX_DL_FIELD)
} BoxLzmaApi;

extern const BoxLzmaApi *box_lzma; /* set before any call (box_dl_command) */
#ifndef BOX_LZMA_DL_IMPL
#define lzma_easy_encoder(...) (box_lzma->lzma_easy_encoder(__VA_ARGS__))
#define lzma_stream_encoder_mt(...) (box_lzma->lzma_stream_encoder_mt(__VA_ARGS__))
#define lzma_stream_decoder(...) (box_lzma->lzma_stream_decoder(__VA_ARGS__))
#define lzma_code(...) (box_lzma->lzma_code(__VA_ARGS__))
#define lzma_end(...) (box_lzma->lzma_end(__VA_ARGS__))
#define lzma_file_info_decoder(...) (box_lzma->lzma_file_info_decoder(__VA_ARGS__))
#define lzma_index_stream_count(...) (box_lzma->lzma_index_stream_count(__VA_ARGS__))
#define lzma_index_block_count(...) (box_lzma->lzma_index_block_count(__VA_ARGS__))
#define lzma_index_file_size(...) (box_lzma->lzma_index_file_size(__VA_ARGS__))
#define lzma_index_uncompressed_size(...) (box_lzma->lzma_index_uncompressed_size(__VA_ARGS__))
#define lzma_index_checks(...) (box_lzma->lzma_index_checks(__VA_ARGS__))
#define lzma_index_end(...) (box_lzma->lzma_index_end(__VA_ARGS__))
#endif

#endif

/* lzma_dl.c — the functions xz.c calls in liblzma, opened on demand (see
 * lzma_dl.h). */
#define BOX_LZMA_DL_IMPL 1
#include "shell/commands/lzma_dl.h"

const BoxLzmaApi *box_lzma;
BOX_DL_DEFINE(box_lzma_dl, BoxLzmaApi, "liblzma.so.5", BOX_LZMA_FUNCTIONS, BOX_DL_NONE, NULL);

/* zlib_dl.c — the functions gzip.c, zip.c and unzip.c call in zlib, opened
 * on demand (see zlib_dl.h). */
#define BOX_ZLIB_DL_IMPL 1
#include "shell/commands/zlib_dl.h"

const BoxZlibApi *box_zlib;
BOX_DL_DEFINE(box_zlib_dl, BoxZlibApi, "libz.so.1", BOX_ZLIB_FUNCTIONS, BOX_DL_NONE, NULL);

/* archive_dl.c — the functions tar calls in libarchive, opened on demand
 * (see archive_dl.h). */
#define BOX_ARCHIVE_DL_IMPL 1
#include "shell/commands/archive_dl.h"

const BoxArchiveApi *box_archive;
BOX_DL_DEFINE(box_archive_dl, BoxArchiveApi, "libarchive.so.13", BOX_ARCHIVE_FUNCTIONS, BOX_DL_NONE,
              NULL);

/* archive_dl.c — the functions tar calls in libarchive, opened on demand
 * (see archive_dl.h). */
#define BOX_ARCHIVE_DL_IMPL 1
#include "shell/commands/archive_dl.h"

static BoxArchiveApi api;

#define SYMBOL(f) BOX_DL_SYMBOL(BoxArchiveApi, f)
static const BoxDlSymbol symbols[] = { BOX_ARCHIVE_FUNCTIONS(SYMBOL) };

BoxDl box_archive_dl = BOX_DL_INIT("libarchive.so.13", symbols, &api, NULL);

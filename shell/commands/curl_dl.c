/* curl_dl.c — the functions curl.c calls in libcurl, opened on demand
 * (see curl_dl.h). */
#define BOX_CURL_DL_IMPL 1
#include "shell/commands/curl_dl.h"

static BoxCurlApi api;

#define SYMBOL(f) BOX_DL_SYMBOL(BoxCurlApi, f)
static const BoxDlSymbol symbols[] = {
  BOX_CURL_FUNCTIONS(SYMBOL)
  /* searched in libcurl's dependencies too */
  { "OPENSSL_init_crypto", offsetof(BoxCurlApi, openssl_init_crypto), false },
};

BoxDl box_curl_dl = BOX_DL_INIT("libcurl.so.4", symbols, &api, NULL);

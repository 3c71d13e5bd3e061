/* curl_dl.c — the functions curl.c calls in libcurl, opened on demand
 * (see curl_dl.h). */
#define BOX_CURL_DL_IMPL 1
#include "shell/commands/curl_dl.h"

/* OpenSSL's, searched in libcurl's dependencies too */
#define OPTIONAL(X) X("OPENSSL_init_crypto", openssl_init_crypto)
BOX_DL_DEFINE(box_curl_dl, BoxCurlApi, "libcurl.so.4", BOX_CURL_FUNCTIONS, OPTIONAL, NULL);

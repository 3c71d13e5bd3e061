/* curl_dl.h — libcurl, resolved at run time (private to curl.c/curl_dl.c;
 * see lazy_dl.h for why box-shell does not link it and how a worker rooted
 * in the mount still loads it).
 *
 * curl.c includes this header instead of <curl/curl.h>; the macros at the
 * end route its curl_* calls through the table, so the command's code reads
 * as ordinary libcurl.
 */
#ifndef BOX_SHELL_CURL_DL_H
#define BOX_SHELL_CURL_DL_H

/* The type-checking wrappers are macros named like the functions. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <stdint.h>

#include "shell/commands/lazy_dl.h"

#define BOX_CURL_FUNCTIONS(X)                                                                      \
  X(curl_global_init)                                                                              \
  X(curl_easy_init)                                                                                \
  X(curl_easy_setopt)                                                                              \
  X(curl_easy_getinfo)                                                                             \
  X(curl_easy_perform)                                                                             \
  X(curl_easy_cleanup)                                                                             \
  X(curl_easy_strerror)                                                                            \
  X(curl_free)                                                                                     \
  X(curl_mime_init)                                                                                \
  X(curl_mime_free)                                                                                \
  X(curl_mime_addpart)                                                                             \
  X(curl_mime_name)                                                                                \
  X(curl_mime_filename)                                                                            \
  X(curl_mime_type)                                                                                \
  X(curl_mime_data)                                                                                \
  X(curl_slist_append)                                                                             \
  X(curl_slist_free_all)                                                                           \
  X(curl_url)                                                                                      \
  X(curl_url_cleanup)                                                                              \
  X(curl_url_get)                                                                                  \
  X(curl_url_set)

typedef struct {
  BOX_CURL_FUNCTIONS(BOX_DL_FIELD)
  /* OpenSSL's, reached through libcurl's own dependencies; NULL when
   * libcurl is built on another TLS library. */
  int (*openssl_init_crypto)(uint64_t opts, const void *settings);
} BoxCurlApi;

#ifndef BOX_CURL_DL_IMPL
extern const BoxCurlApi *box_curl; /* curl.c: set before any curl_* call */
/* curl.h defines these two as argument-count checks; replace them. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init(...) (box_curl->curl_global_init(__VA_ARGS__))
#define curl_easy_init(...) (box_curl->curl_easy_init(__VA_ARGS__))
#define curl_easy_setopt(...) (box_curl->curl_easy_setopt(__VA_ARGS__))
#define curl_easy_getinfo(...) (box_curl->curl_easy_getinfo(__VA_ARGS__))
#define curl_easy_perform(...) (box_curl->curl_easy_perform(__VA_ARGS__))
#define curl_easy_cleanup(...) (box_curl->curl_easy_cleanup(__VA_ARGS__))
#define curl_easy_strerror(...) (box_curl->curl_easy_strerror(__VA_ARGS__))
#define curl_free(...) (box_curl->curl_free(__VA_ARGS__))
#define curl_mime_init(...) (box_curl->curl_mime_init(__VA_ARGS__))
#define curl_mime_free(...) (box_curl->curl_mime_free(__VA_ARGS__))
#define curl_mime_addpart(...) (box_curl->curl_mime_addpart(__VA_ARGS__))
#define curl_mime_name(...) (box_curl->curl_mime_name(__VA_ARGS__))
#define curl_mime_filename(...) (box_curl->curl_mime_filename(__VA_ARGS__))
#define curl_mime_type(...) (box_curl->curl_mime_type(__VA_ARGS__))
#define curl_mime_data(...) (box_curl->curl_mime_data(__VA_ARGS__))
#define curl_slist_append(...) (box_curl->curl_slist_append(__VA_ARGS__))
#define curl_slist_free_all(...) (box_curl->curl_slist_free_all(__VA_ARGS__))
#define curl_url(...) (box_curl->curl_url(__VA_ARGS__))
#define curl_url_cleanup(...) (box_curl->curl_url_cleanup(__VA_ARGS__))
#define curl_url_get(...) (box_curl->curl_url_get(__VA_ARGS__))
#define curl_url_set(...) (box_curl->curl_url_set(__VA_ARGS__))
#endif

#endif

/* curl_dl.h — libcurl, resolved at run time (private to curl.c/curl_dl.c).
 *
 * box-shell does not link libcurl: loading its ~30 libraries would cost
 * every Shell start milliseconds that only `curl` needs.  The library is
 * opened on the first `curl`.  A worker rooted in the box's mount can no
 * longer reach the host's library files by name, so the zygote learns
 * beforehand which files libcurl needs and keeps their directories open
 * for its workers (box_curl_prepare); only if that fails does it map the
 * library itself (box_shell_preload), at the price of ~155 mappings more
 * in every fork.
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

typedef struct {
  __typeof__(curl_global_init) *global_init;
  __typeof__(curl_easy_init) *easy_init;
  __typeof__(curl_easy_setopt) *easy_setopt;
  __typeof__(curl_easy_getinfo) *easy_getinfo;
  __typeof__(curl_easy_perform) *easy_perform;
  __typeof__(curl_easy_cleanup) *easy_cleanup;
  __typeof__(curl_easy_strerror) *easy_strerror;
  __typeof__(curl_free) *free;
  __typeof__(curl_mime_init) *mime_init;
  __typeof__(curl_mime_free) *mime_free;
  __typeof__(curl_mime_addpart) *mime_addpart;
  __typeof__(curl_mime_name) *mime_name;
  __typeof__(curl_mime_filename) *mime_filename;
  __typeof__(curl_mime_type) *mime_type;
  __typeof__(curl_mime_data) *mime_data;
  __typeof__(curl_slist_append) *slist_append;
  __typeof__(curl_slist_free_all) *slist_free_all;
  __typeof__(curl_url) *url;
  __typeof__(curl_url_cleanup) *url_cleanup;
  __typeof__(curl_url_get) *url_get;
  __typeof__(curl_url_set) *url_set;
  /* OpenSSL's, reached through libcurl's own dependencies; NULL when
   * libcurl is built on another TLS library. */
  int (*openssl_init_crypto)(uint64_t opts, const void *settings);
} BoxCurlApi;

/* The table, loading libcurl on the first call (thread-safe).  NULL when
 * it cannot be loaded; *error (if given) then says why. */
const BoxCurlApi *box_curl_api(const char **error);

#ifndef BOX_CURL_DL_IMPL
extern const BoxCurlApi *box_curl; /* curl.c: set before any curl_* call */
/* curl.h defines these two as argument-count checks; replace them. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init(...) (box_curl->global_init(__VA_ARGS__))
#define curl_easy_init(...) (box_curl->easy_init(__VA_ARGS__))
#define curl_easy_setopt(...) (box_curl->easy_setopt(__VA_ARGS__))
#define curl_easy_getinfo(...) (box_curl->easy_getinfo(__VA_ARGS__))
#define curl_easy_perform(...) (box_curl->easy_perform(__VA_ARGS__))
#define curl_easy_cleanup(...) (box_curl->easy_cleanup(__VA_ARGS__))
#define curl_easy_strerror(...) (box_curl->easy_strerror(__VA_ARGS__))
#define curl_free(...) (box_curl->free(__VA_ARGS__))
#define curl_mime_init(...) (box_curl->mime_init(__VA_ARGS__))
#define curl_mime_free(...) (box_curl->mime_free(__VA_ARGS__))
#define curl_mime_addpart(...) (box_curl->mime_addpart(__VA_ARGS__))
#define curl_mime_name(...) (box_curl->mime_name(__VA_ARGS__))
#define curl_mime_filename(...) (box_curl->mime_filename(__VA_ARGS__))
#define curl_mime_type(...) (box_curl->mime_type(__VA_ARGS__))
#define curl_mime_data(...) (box_curl->mime_data(__VA_ARGS__))
#define curl_slist_append(...) (box_curl->slist_append(__VA_ARGS__))
#define curl_slist_free_all(...) (box_curl->slist_free_all(__VA_ARGS__))
#define curl_url(...) (box_curl->url(__VA_ARGS__))
#define curl_url_cleanup(...) (box_curl->url_cleanup(__VA_ARGS__))
#define curl_url_get(...) (box_curl->url_get(__VA_ARGS__))
#define curl_url_set(...) (box_curl->url_set(__VA_ARGS__))
#endif

#endif

/* curl_dl.c — open libcurl on demand and fill the table curl.c calls
 * through (see curl_dl.h for why box-shell does not link it). */
#define BOX_CURL_DL_IMPL 1
#include "shell/commands/curl_dl.h"

#include <dlfcn.h>
#include <glib.h>
#include <stdbool.h>
#include <string.h>

#include "shell/shell-private.h"

static BoxCurlApi api;
static const char *load_error;

/* dlsym returns void *; converting it to a function pointer goes through
 * memcpy so the code stays clean under -Wpedantic. */
static bool resolve(void *lib, const char *name, void *slot, bool required)
{
  void *sym = dlsym(lib, name);
  if (!sym) {
    if (required)
      load_error = g_strdup_printf("%s: missing symbol %s", "libcurl.so.4", name);
    return !required;
  }
  memcpy(slot, &sym, sizeof sym);
  return true;
}

static bool load(void)
{
  void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    load_error = g_strdup(why ? why : "libcurl.so.4: cannot be loaded");
    return false;
  }
  bool ok = resolve(lib, "curl_global_init", &api.global_init, true) &&
            resolve(lib, "curl_easy_init", &api.easy_init, true) &&
            resolve(lib, "curl_easy_setopt", &api.easy_setopt, true) &&
            resolve(lib, "curl_easy_getinfo", &api.easy_getinfo, true) &&
            resolve(lib, "curl_easy_perform", &api.easy_perform, true) &&
            resolve(lib, "curl_easy_cleanup", &api.easy_cleanup, true) &&
            resolve(lib, "curl_easy_strerror", &api.easy_strerror, true) &&
            resolve(lib, "curl_free", &api.free, true) &&
            resolve(lib, "curl_mime_init", &api.mime_init, true) &&
            resolve(lib, "curl_mime_free", &api.mime_free, true) &&
            resolve(lib, "curl_mime_addpart", &api.mime_addpart, true) &&
            resolve(lib, "curl_mime_name", &api.mime_name, true) &&
            resolve(lib, "curl_mime_filename", &api.mime_filename, true) &&
            resolve(lib, "curl_mime_type", &api.mime_type, true) &&
            resolve(lib, "curl_mime_data", &api.mime_data, true) &&
            resolve(lib, "curl_slist_append", &api.slist_append, true) &&
            resolve(lib, "curl_slist_free_all", &api.slist_free_all, true) &&
            resolve(lib, "curl_url", &api.url, true) &&
            resolve(lib, "curl_url_cleanup", &api.url_cleanup, true) &&
            resolve(lib, "curl_url_get", &api.url_get, true) &&
            resolve(lib, "curl_url_set", &api.url_set, true) &&
            /* searched in libcurl's dependencies too */
            resolve(lib, "OPENSSL_init_crypto", &api.openssl_init_crypto, false);
  if (!ok) {
    dlclose(lib);
    return false;
  }
  return true; /* kept open for the life of the process */
}

const BoxCurlApi *box_curl_api(const char **error)
{
  static gsize state = 0; /* 1 = loaded, 2 = failed */
  if (g_once_init_enter(&state))
    g_once_init_leave(&state, load() ? 1 : 2);
  if (state == 1)
    return &api;
  if (error)
    *error = load_error;
  return NULL;
}

bool box_curl_preload(void)
{
  return box_curl_api(NULL) != NULL;
}

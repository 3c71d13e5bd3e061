/* gateway/sigv4.c — aws:// credential routes: a request that names the
 * phantom key id is signed again with the real key (AWS Signature Version
 * 4) for the service and region its host names, its session token added.
 */
#include "gateway/gateway-private.h"

#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

static void hex_of(const unsigned char *d, size_t n, char *out)
{
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[d[i] >> 4];
    out[2 * i + 1] = digits[d[i] & 15];
  }
  out[2 * n] = '\0';
}

static void sha256_hex(const void *data, size_t n, char out[65])
{
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(data, n, md);
  hex_of(md, sizeof md, out);
}

static void hmac256(const void *key, size_t klen, const char *msg, unsigned char out[32])
{
  unsigned int len = 32;
  HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &len);
}

static bool aws_unreserved(unsigned char c)
{
  return g_ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

/* Each byte outside the unreserved set as %XX; keep_slash keeps '/'. */
static void aws_encode(GString *out, const char *s, size_t n, bool keep_slash)
{
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (aws_unreserved(c) || (keep_slash && c == '/'))
      g_string_append_c(out, (char)c);
    else
      g_string_append_printf(out, "%%%02X", c);
  }
}

static int pair_cmp(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The client's signature and the headers it signed with: all replaced. */
static void strip_signing(GwHead *req)
{
  static const char *const stripped[] = { "authorization",        "x-amz-date",
                                          "x-amz-security-token", "x-amz-content-sha256",
                                          "x-amz-signature",      NULL };
  for (guint i = req->headers->len; i-- > 0;) {
    GwHeader *hd = &g_array_index(req->headers, GwHeader, i);
    for (int k = 0; stripped[k]; k++)
      if (g_ascii_strcasecmp(hd->name, stripped[k]) == 0) {
        g_array_remove_index(req->headers, i);
        break;
      }
  }
}

/* The headers signed, as sorted "name:value" lines: host, content-type
 * and every x-amz-* one. */
static GPtrArray *signed_headers(const GwHead *req, const char *hosthdr, const char *payload,
                                 const char *date, const char *token)
{
  GPtrArray *signed_h = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(signed_h, g_strdup_printf("host:%s", hosthdr));
  g_ptr_array_add(signed_h, g_strdup_printf("x-amz-content-sha256:%s", payload));
  g_ptr_array_add(signed_h, g_strdup_printf("x-amz-date:%s", date));
  if (token) g_ptr_array_add(signed_h, g_strdup_printf("x-amz-security-token:%s", token));
  for (guint i = 0; i < req->headers->len; i++) {
    GwHeader *hd = &g_array_index(req->headers, GwHeader, i);
    g_autofree char *lower = g_ascii_strdown(hd->name, -1);
    if (strcmp(lower, "content-type") != 0 && !g_str_has_prefix(lower, "x-amz-")) continue;
    g_ptr_array_add(signed_h, g_strdup_printf("%s:%s", lower, hd->value));
  }
  g_ptr_array_sort(signed_h, pair_cmp);
  return signed_h;
}

/* The query's pairs sorted, each with its `=`. */
static void canonical_query(GString *canon, const char *q)
{
  if (!q || !q[1]) return;
  g_auto(GStrv) pairs = g_strsplit(q + 1, "&", -1);
  g_autoptr(GPtrArray) sorted = g_ptr_array_new_with_free_func(g_free);
  for (char **p = pairs; *p; p++)
    if (**p) g_ptr_array_add(sorted, strchr(*p, '=') ? g_strdup(*p) : g_strconcat(*p, "=", NULL));
  g_ptr_array_sort(sorted, pair_cmp);
  for (guint i = 0; i < sorted->len; i++)
    g_string_append_printf(canon, "%s%s", i ? "&" : "", (char *)g_ptr_array_index(sorted, i));
}

/* SigV4's canonical request; names receives the signed headers' names,
 * `;`-separated. */
static GString *canonical_request(const char *method, const char *origin, const char *service,
                                  const GPtrArray *signed_h, const char *payload, GString *names)
{
  GString *canon = g_string_new(NULL);
  g_string_append_printf(canon, "%s\n", method);
  /* The path: S3 signs it as sent; other services sign it encoded again. */
  const char *q = strchr(origin, '?');
  size_t plen = q ? (size_t)(q - origin) : strlen(origin);
  if (strcmp(service, "s3") == 0) {
    g_string_append_len(canon, origin, (gssize)plen);
  } else {
    g_autofree char *raw = g_strndup(origin, plen);
    g_autofree char *norm = box_gateway_canonical_path(raw);
    /* canonical_path decodes only unreserved escapes, which AWS's
     * normalisation does too, and keeps the others as sent. */
    aws_encode(canon, norm, strlen(norm), true);
  }
  g_string_append_c(canon, '\n');
  canonical_query(canon, q);
  g_string_append_c(canon, '\n');
  for (guint i = 0; i < signed_h->len; i++) {
    const char *line = g_ptr_array_index(signed_h, i);
    const char *colon = strchr(line, ':');
    g_string_append_printf(canon, "%s\n", line);
    g_string_append_printf(names, "%s%.*s", i ? ";" : "", (int)(colon - line), line);
  }
  g_string_append_printf(canon, "\n%s\n%s", names->str, payload);
  return canon;
}

/* The signature of to_sign under the key derived from the secret for
 * day, region and service; every key wiped after. */
static void signature(const GwRoute *r, const char *day, const char *region, const char *service,
                      const char *to_sign, char sig_hex[65])
{
  g_autofree char *k0 = g_strconcat("AWS4", r->secret, NULL);
  unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
  hmac256(k0, strlen(k0), day, k1);
  hmac256(k1, 32, region, k2);
  hmac256(k2, 32, service, k3);
  hmac256(k3, 32, "aws4_request", k4);
  hmac256(k4, 32, to_sign, sig);
  OPENSSL_cleanse(k0, strlen(k0));
  OPENSSL_cleanse(k1, 32);
  OPENSSL_cleanse(k2, 32);
  OPENSSL_cleanse(k3, 32);
  OPENSSL_cleanse(k4, 32);
  hex_of(sig, 32, sig_hex);
}

/* The new signing headers, their values held by owned. */
static void add_signing_headers(GwHead *req, GPtrArray *owned, char *authz, const char *date,
                                const char *payload, const char *token)
{
  g_ptr_array_add(owned, authz);
  char *date_v = g_strdup(date), *payload_v = g_strdup(payload);
  g_ptr_array_add(owned, date_v);
  g_ptr_array_add(owned, payload_v);
  GwHeader add[] = { { "Authorization", authz },
                     { "X-Amz-Date", date_v },
                     { "X-Amz-Content-Sha256", payload_v } };
  g_array_append_vals(req->headers, add, G_N_ELEMENTS(add));
  if (token) {
    char *tv = g_strdup(token);
    g_ptr_array_add(owned, tv);
    GwHeader th = { "X-Amz-Security-Token", tv };
    g_array_append_val(req->headers, th);
  }
}

/* The request re-signed for route r: the client's signature must name the
 * phantom key id; it and the signing headers are replaced. */
GwCredResult gw_cred_aws(const GwRoute *r, GwHead *req, const char *method, const char *host,
                         const char *origin, const GByteArray *body, GPtrArray *owned)
{
  const char *auth = gw_head_get(req, "authorization");
  g_autofree char *want = g_strdup_printf("Credential=%s/", r->phantom);
  if (!auth || !g_str_has_prefix(auth, "AWS4-HMAC-SHA256 ") || !strstr(auth, want))
    return GW_CRED_REFUSED;
  g_autofree char *service = NULL, *region = NULL;
  if (!box_gateway_aws_scope(host, &service, &region)) return GW_CRED_REFUSED;
  const char *hosthdr = gw_head_get(req, "host");
  if (!hosthdr) return GW_CRED_REFUSED;
  strip_signing(req);
  char date[17], day[9];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y%m%dT%H%M%SZ", &tm);
  memcpy(day, date, 8);
  day[8] = '\0';
  char payload[65];
  sha256_hex(body->len ? (const void *)body->data : "", body->len, payload);
  const char *token = r->spelled[0];
  g_autoptr(GPtrArray) signed_h = signed_headers(req, hosthdr, payload, date, token);
  g_autoptr(GString) names = g_string_new(NULL);
  g_autoptr(GString) canon = canonical_request(method, origin, service, signed_h, payload, names);
  char canon_hash[65];
  sha256_hex(canon->str, canon->len, canon_hash);
  g_autofree char *scope = g_strdup_printf("%s/%s/%s/aws4_request", day, region, service);
  g_autofree char *to_sign =
    g_strdup_printf("AWS4-HMAC-SHA256\n%s\n%s\n%s", date, scope, canon_hash);
  char sig_hex[65];
  signature(r, day, region, service, to_sign, sig_hex);
  char *authz = g_strdup_printf("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, "
                                "Signature=%s",
                                r->aws_key_id, scope, names->str, sig_hex);
  add_signing_headers(req, owned, authz, date, payload, token);
  return GW_CRED_SWAPPED;
}

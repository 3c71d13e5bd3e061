/* gateway/head.c — HTTP/1.1 message heads: the request or status line
 * and header fields split out of a head as read, header lookup, the
 * hop-by-hop set, and the authority a request names.
 */
#include "gateway/gateway-private.h"

#include <stdlib.h>
#include <string.h>

void gw_head_clear(GwHead *h)
{
  g_free(h->text);
  if (h->headers) g_array_free(h->headers, TRUE);
  memset(h, 0, sizeof *h);
}

bool gw_is_token_char(unsigned char c)
{
  return g_ascii_isalnum(c) || strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

bool gw_head_parse(char *text, GwHead *h)
{
  memset(h, 0, sizeof *h);
  h->text = text;
  h->headers = g_array_new(FALSE, FALSE, sizeof(GwHeader));
  char *save = NULL;
  char *line = strtok_r(text, "\n", &save);
  if (!line) return false;
  size_t n = strlen(line);
  if (n && line[n - 1] == '\r') line[n - 1] = '\0';
  char *sp1 = strchr(line, ' ');
  if (!sp1) return false;
  *sp1 = '\0';
  char *sp2 = strchr(sp1 + 1, ' ');
  h->a = line;
  h->b = sp1 + 1;
  if (sp2) {
    *sp2 = '\0';
    h->c = sp2 + 1;
  } else {
    h->c = sp1 + 1 + strlen(sp1 + 1);
  }
  if (!*h->a || !*h->b) return false;
  while ((line = strtok_r(NULL, "\n", &save))) {
    n = strlen(line);
    if (n && line[n - 1] == '\r') line[--n] = '\0';
    if (n == 0) break;
    if (line[0] == ' ' || line[0] == '\t') return false; /* obsolete line folding */
    char *colon = strchr(line, ':');
    if (!colon || colon == line) return false;
    for (char *p = line; p < colon; p++)
      if (!gw_is_token_char((unsigned char)*p)) return false;
    *colon = '\0';
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    char *e = v + strlen(v);
    while (e > v && (e[-1] == ' ' || e[-1] == '\t')) *--e = '\0';
    for (char *p = v; *p; p++)
      if ((unsigned char)*p < 0x20 && *p != '\t') return false;
    GwHeader hd = { line, v };
    g_array_append_val(h->headers, hd);
  }
  return true;
}

const char *gw_head_get(const GwHead *h, const char *name)
{
  for (guint i = 0; i < h->headers->len; i++) {
    GwHeader *hd = &g_array_index(h->headers, GwHeader, i);
    if (g_ascii_strcasecmp(hd->name, name) == 0) return hd->value;
  }
  return NULL;
}

int gw_head_count(const GwHead *h, const char *name)
{
  int n = 0;
  for (guint i = 0; i < h->headers->len; i++)
    n += g_ascii_strcasecmp(g_array_index(h->headers, GwHeader, i).name, name) == 0;
  return n;
}

/* Whether a comma-separated header value holds token (case-insensitive). */
bool gw_list_has(const char *value, const char *token)
{
  if (!value) return false;
  g_auto(GStrv) parts = g_strsplit(value, ",", -1);
  for (char **p = parts; *p; p++)
    if (g_ascii_strcasecmp(g_strstrip(*p), token) == 0) return true;
  return false;
}

bool gw_hop_by_hop(const GwHead *h, const char *name)
{
  static const char *const fixed[] = { "connection",
                                       "keep-alive",
                                       "proxy-connection",
                                       "proxy-authorization",
                                       "proxy-authenticate",
                                       "te",
                                       "trailer",
                                       "upgrade",
                                       NULL };
  for (int i = 0; fixed[i]; i++)
    if (g_ascii_strcasecmp(name, fixed[i]) == 0) return true;
  for (guint i = 0; i < h->headers->len; i++) {
    GwHeader *hd = &g_array_index(h->headers, GwHeader, i);
    if (g_ascii_strcasecmp(hd->name, "connection") == 0 && gw_list_has(hd->value, name))
      return true;
  }
  return false;
}

/* host[:port] or [v6][:port]; host lowercased, one trailing dot removed,
 * brackets removed.  port stays default_port when absent. */
bool gw_parse_authority(const char *auth, int default_port, char **host, int *port)
{
  const char *end_host, *port_text = NULL;
  const char *h = auth;
  if (*auth == '[') {
    const char *close = strchr(auth, ']');
    if (!close) return false;
    h = auth + 1;
    end_host = close;
    if (close[1] == ':')
      port_text = close + 2;
    else if (close[1])
      return false;
  } else {
    const char *colon = strrchr(auth, ':');
    if (colon && strchr(auth, ':') != colon) return false;
    end_host = colon ? colon : auth + strlen(auth);
    if (colon) port_text = colon + 1;
  }
  if (end_host == h) return false;
  for (const char *p = h; p < end_host; p++)
    if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f || *p == '/' || *p == '@' ||
        *p == '?' || *p == '#' || *p == '\\')
      return false; /* a name on the wire is ASCII (IDNs in punycode) */
  *port = default_port;
  if (port_text) {
    char *e = NULL;
    long v = strtol(port_text, &e, 10);
    if (!*port_text || *e || v < 1 || v > 65535) return false;
    *port = (int)v;
  }
  char *lower = g_ascii_strdown(h, end_host - h);
  size_t n = strlen(lower);
  if (n > 1 && lower[n - 1] == '.') lower[n - 1] = '\0';
  *host = lower;
  return true;
}

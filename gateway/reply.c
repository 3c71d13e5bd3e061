/* gateway/reply.c — the replies the gateway writes itself: marked
 * refusals (`x-strands-box-egress: refused`), 502s that name what failed,
 * and plain errors.  Each ends the connection.
 */
#include "gateway/gateway-private.h"

#include <string.h>

/* A reply the gateway writes itself.  extra: more header lines (each
 * ending CRLF) or NULL. */
static void send_reply(GwStream *to, int status, const char *reason, const char *body,
                       const char *extra)
{
  g_autofree char *msg = g_strdup_printf(
    "HTTP/1.1 %d %s\r\n%sContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
    "Connection: close\r\n\r\n%s",
    status, reason, extra ? extra : "", strlen(body), body);
  gw_stream_write(to, msg, strlen(msg));
}

void gw_send_simple(GwStream *to, int status, const char *reason, const char *body, bool marked)
{
  send_reply(to, status, reason, body, marked ? "x-strands-box-egress: refused\r\n" : NULL);
}

/* A header value: control characters become spaces. */
static char *header_safe(const char *text)
{
  char *v = g_strdup(text);
  for (char *p = v; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
  return v;
}

/* A marked refusal (spec/runtime.md §6.2).  The text rides in a header too,
 * because a client never sees the body of a refused CONNECT. */
void gw_refuse(GwConn *c, const char *gate, const char *message)
{
  g_autofree char *text = gate ? g_strdup_printf("%s gate: %s", gate, message) : g_strdup(message);
  g_autofree char *body = g_strdup_printf("%s\n", text);
  g_autofree char *safe = header_safe(text);
  g_autofree char *extra =
    g_strdup_printf("x-strands-box-egress: refused\r\nx-strands-box-egress-message: %s\r\n", safe);
  send_reply(&c->client, 403, "Forbidden", body, extra);
}

/* 502, not marked as a refusal; kind (resolve, connect, tls, upstream)
 * lets the Shell's curl give curl's exit status. */
void gw_bad_gateway(GwConn *c, const char *kind, const char *text)
{
  g_autofree char *body = g_strdup_printf("%s\n", text);
  g_autofree char *safe = header_safe(text);
  g_autofree char *extra = g_strdup_printf(
    "x-strands-box-egress-error: %s\r\nx-strands-box-egress-message: %s\r\n", kind, safe);
  send_reply(&c->client, 502, "Bad Gateway", body, extra);
}

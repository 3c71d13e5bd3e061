/* base64.c — GNU base64: encode with -w COLS (76; 0 = no wrapping),
 * -d decode (newlines ignored), -i ignore garbage when decoding. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "decode=d ignore-garbage=i wrap=w:";

static const char ALPHA[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int val(unsigned char ch)
{
  const char *p = ch ? strchr(ALPHA, ch) : NULL;
  return p ? (int)(p - ALPHA) : -1;
}

static void encode(BoxCmd *c, const GString *in, unsigned long long wrap)
{
  GString *o = g_string_sized_new(in->len / 3 * 4 + 8);
  const unsigned char *s = (const unsigned char *)in->str;
  size_t i = 0;
  for (; i + 3 <= in->len; i += 3) {
    unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
    char q[4] = { ALPHA[v >> 18], ALPHA[(v >> 12) & 63], ALPHA[(v >> 6) & 63], ALPHA[v & 63] };
    g_string_append_len(o, q, 4);
  }
  if (in->len - i == 1) {
    unsigned v = (unsigned)s[i] << 16;
    char q[4] = { ALPHA[v >> 18], ALPHA[(v >> 12) & 63], '=', '=' };
    g_string_append_len(o, q, 4);
  } else if (in->len - i == 2) {
    unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8;
    char q[4] = { ALPHA[v >> 18], ALPHA[(v >> 12) & 63], ALPHA[(v >> 6) & 63], '=' };
    g_string_append_len(o, q, 4);
  }
  if (wrap == 0) {
    bx_put(c, o->str, o->len);
  } else {
    for (size_t k = 0; k < o->len; k += wrap) {
      size_t n = MIN((size_t)wrap, o->len - k);
      bx_put(c, o->str + k, n);
      box_out_putc(c->out, '\n');
    }
  }
  g_string_free(o, TRUE);
}

/* false on invalid input (what decoded before it is still written) */
static bool decode(BoxCmd *c, const GString *in, bool ignore)
{
  GString *o = g_string_new(NULL);
  int q[4], n = 0;
  bool ok = true, ended = false;
  for (size_t i = 0; i < in->len; i++) {
    unsigned char ch = (unsigned char)in->str[i];
    if (ch == '\n') continue;
    if (ch == '=') {
      if (n < 2) {
        if (ignore) continue;
        ok = false;
        break;
      }
      /* padding: the rest of the quantum must be '=' */
      size_t need = (size_t)(4 - n), got = 0;
      while (i < in->len && got < need) {
        if (in->str[i] == '=')
          got++;
        else if (in->str[i] != '\n' && !ignore)
          break;
        i++;
      }
      if (got < need) {
        ok = false;
        break;
      }
      i--;
      unsigned v = (unsigned)q[0] << 18 | (unsigned)q[1] << 12 | (n > 2 ? (unsigned)q[2] << 6 : 0);
      g_string_append_c(o, (char)(v >> 16));
      if (n == 3) g_string_append_c(o, (char)((v >> 8) & 255));
      n = 0;
      ended = true;
      continue;
    }
    int v = val(ch);
    if (v < 0) {
      if (ignore) continue;
      ok = false;
      break;
    }
    (void)ended;
    if (ended && !ignore) { ended = false; }
    q[n++] = v;
    if (n == 4) {
      unsigned x =
        (unsigned)q[0] << 18 | (unsigned)q[1] << 12 | (unsigned)q[2] << 6 | (unsigned)q[3];
      char b[3] = { (char)(x >> 16), (char)((x >> 8) & 255), (char)(x & 255) };
      g_string_append_len(o, b, 3);
      n = 0;
    }
  }
  if (n) {
    /* a partial quantum (no padding, or cut by invalid input) */
    if (n >= 2) {
      unsigned v = (unsigned)q[0] << 18 | (unsigned)q[1] << 12 | (n > 2 ? (unsigned)q[2] << 6 : 0);
      g_string_append_c(o, (char)(v >> 16));
      if (n == 3) g_string_append_c(o, (char)((v >> 8) & 255));
    }
    ok = false;
  }
  bx_put(c, o->str, o->len);
  g_string_free(o, TRUE);
  return ok;
}

int box_cmd_base64(BoxCmd *c)
{
  bool dec = false, ignore = false;
  unsigned long long wrap = 76;
  BX_EACH_OPTION (o, c, "base64", "diw:", longopts) switch (o) {
    case 'd': dec = true; break;
    case 'i': ignore = true; break;
    case 'w': {
      char *end;
      errno = 0;
      wrap = strtoull(optarg, &end, 10);
      if (!*optarg || *end || errno || optarg[0] == '-') {
        bx_err_q(c, "base64", "invalid wrap size: %s", optarg, 0);
        return 1;
      }
      break;
    }
    default: return 1;
    }
  if (c->argc - optind > 1) {
    bx_usage_q(c, "base64", "extra operand %s", c->argv[optind + 1]);
    return 1;
  }
  const char *name = optind < c->argc ? c->argv[optind] : "-";
  GString *in = bx_slurp_new(c, "base64", name);
  if (!in) return 1;
  int st = 0;
  if (dec) {
    if (!decode(c, in, ignore)) {
      bx_err(c, "base64", "invalid input");
      st = 1;
    }
  } else {
    encode(c, in, wrap);
  }
  g_string_free(in, TRUE);
  return st;
}

/* message.c — resource labels (spec/policy.md §3.2) and decision messages
 * (§3.3), with the escaping rules of Rust's char::escape_debug (resource)
 * and escape_default on selected characters (annotations). */
#include "policy/message.h"
#include "policy/json_out.h"

#include <string.h>

#define RESOURCE_MAX 1024
#define MESSAGE_MAX 4096

/* Next character of s; invalid bytes decode as U+FFFD and advance one byte. */
static gunichar next_char(const char **p)
{
  const char *s = *p;
  gunichar u = g_utf8_get_char_validated(s, -1);
  if (u == (gunichar)-1 || u == (gunichar)-2) {
    *p = s + 1;
    return 0xFFFD;
  }
  *p = g_utf8_next_char(s);
  return u;
}

/* Grapheme_Extend approximated by nonspacing and enclosing marks plus the
 * Other_Grapheme_Extend characters. */
static bool grapheme_extend(gunichar c)
{
  GUnicodeType t = g_unichar_type(c);
  if (t == G_UNICODE_NON_SPACING_MARK || t == G_UNICODE_ENCLOSING_MARK) return true;
  switch (c) {
  case 0x09BE:
  case 0x09D7:
  case 0x0B3E:
  case 0x0B57:
  case 0x0BBE:
  case 0x0BD7:
  case 0x0CC2:
  case 0x0CD5:
  case 0x0CD6:
  case 0x0D3E:
  case 0x0D57:
  case 0x0DCF:
  case 0x0DDF:
  case 0x1B35:
  case 0x200C:
  case 0x302E:
  case 0x302F:
  case 0x1133E:
  case 0x11357:
  case 0x114B0:
  case 0x114BD:
  case 0x115AF:
  case 0x11930:
  case 0x1D165:
  case 0x1D16E:
  case 0x1D16F:
  case 0x1D170:
  case 0x1D171:
  case 0x1D172: return true;
  default: break;
  }
  if (c >= 0xFF9E && c <= 0xFF9F) return true;
  if (c >= 0xE0020 && c <= 0xE007F) return true;
  return false;
}

static bool printable(gunichar c)
{
  if (c == ' ') return true;
  switch (g_unichar_type(c)) {
  case G_UNICODE_CONTROL:
  case G_UNICODE_FORMAT:
  case G_UNICODE_SURROGATE:
  case G_UNICODE_PRIVATE_USE:
  case G_UNICODE_UNASSIGNED:
  case G_UNICODE_LINE_SEPARATOR:
  case G_UNICODE_PARAGRAPH_SEPARATOR:
  case G_UNICODE_SPACE_SEPARATOR: return false;
  default: return true;
  }
}

/* One character as escape_debug renders it. */
static void debug_unit(char buf[16], gunichar c)
{
  switch (c) {
  case 0: strcpy(buf, "\\0"); return;
  case '\t': strcpy(buf, "\\t"); return;
  case '\r': strcpy(buf, "\\r"); return;
  case '\n': strcpy(buf, "\\n"); return;
  case '\'': strcpy(buf, "\\'"); return;
  case '"': strcpy(buf, "\\\""); return;
  case '\\': strcpy(buf, "\\\\"); return;
  default: break;
  }
  if (grapheme_extend(c) || !printable(c)) {
    g_snprintf(buf, 16, "\\u{%x}", (unsigned)c);
    return;
  }
  int n = g_unichar_to_utf8(c, buf);
  buf[n] = '\0';
}

/* Printable ASCII that escape_debug leaves as it is. */
static bool debug_plain(unsigned char c)
{
  return c >= 0x20 && c < 0x7F && c != '\'' && c != '"' && c != '\\';
}

void policy_escape_debug(GString *out, const char *s, size_t maxbytes)
{
  size_t used = 0;
  const char *p = s;
  while (*p) {
    /* a run of plain ASCII (a path, mostly) goes in at once */
    size_t run = 0;
    while (debug_plain((unsigned char)p[run])) run++;
    if (run) {
      if (used + run > maxbytes) {
        policy_app_len(out, p, maxbytes - used);
        policy_app(out, "...");
        return;
      }
      policy_app_len(out, p, run);
      used += run;
      p += run;
      continue;
    }
    char buf[16];
    debug_unit(buf, next_char(&p));
    size_t n = strlen(buf);
    if (used + n > maxbytes) {
      policy_app(out, "...");
      return;
    }
    policy_app(out, buf);
    used += n;
  }
}

static bool annotation_escaped(gunichar c)
{
  return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || c == '\\' || c == 0x061C ||
         c == 0x200E || c == 0x200F || (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

void policy_escape_annotation(GString *out, const char *s)
{
  const char *p = s;
  while (*p) {
    const char *start = p;
    gunichar c = next_char(&p);
    if (!annotation_escaped(c)) {
      if (p - start == 1 && (unsigned char)*start >= 0x80)
        g_string_append(out, "\xEF\xBF\xBD");
      else
        g_string_append_len(out, start, p - start);
      continue;
    }
    switch (c) {
    case '\t': g_string_append(out, "\\t"); break;
    case '\r': g_string_append(out, "\\r"); break;
    case '\n': g_string_append(out, "\\n"); break;
    case '\\': g_string_append(out, "\\\\"); break;
    default: g_string_append_printf(out, "\\u{%x}", (unsigned)c); break;
    }
  }
}

/* Cuts s to at most max bytes on a character boundary; when cut, the text
 * is shortened further so that suffix fits in max as well. */
char *policy_cap_utf8(const char *s, size_t max, const char *suffix)
{
  size_t len = strlen(s);
  if (len <= max) return g_strdup(s);
  size_t room = max - strlen(suffix);
  const char *p = s, *last = s;
  while (*p) {
    const char *q = p;
    next_char(&q);
    if ((size_t)(q - s) > room) break;
    p = last = q;
  }
  GString *out = g_string_new_len(s, last - s);
  g_string_append(out, suffix);
  return g_string_free(out, FALSE);
}

static void message_buffer_free(gpointer p)
{
  g_string_free(p, TRUE);
}
static GPrivate message_buffer = G_PRIVATE_INIT(message_buffer_free);

const char *policy_build_message(const BoxDecision *d, const Rule *const *forbids, size_t nforbids,
                                 char **capped)
{
  /* built in a buffer the thread keeps: the decision is made around it,
   * in one allocation, for nearly every file operation */
  GString *m = g_private_get(&message_buffer);
  if (!m) {
    m = g_string_sized_new(512);
    g_private_set(&message_buffer, m);
  }
  g_string_truncate(m, 0);
  policy_app_len(m, "policy ", 7);
  policy_app(m, d->verdict == BOX_VERDICT_PERMIT ? "permitted" : "denied");
  policy_app(m, " this operation");
  bool blank = true;
  for (const char *q = d->resource ? d->resource : ""; *q; q++)
    if (!g_ascii_isspace(*q)) blank = false;
  if (!blank) {
    policy_app(m, " on '");
    policy_escape_debug(m, d->resource, RESOURCE_MAX);
    policy_app_c(m, '\'');
  }
  switch (d->cause) {
  case BOX_CAUSE_PERMITTED: policy_app_c(m, '.'); break;
  case BOX_CAUSE_NO_MATCH:
    policy_app(m, " [default-deny]: No permit policy matched this request.");
    break;
  case BOX_CAUSE_INTERNAL_FAULT:
    policy_app(m, " because the request could not be evaluated.");
    break;
  case BOX_CAUSE_POLICY_PENDING:
    policy_app(m, " [policy-pending]: The complete policy bundle is not installed.");
    break;
  case BOX_CAUSE_FORBIDDEN:
    for (size_t i = 0; i < nforbids; i++) {
      policy_app(m, i ? "; [policy: " : " [policy: ");
      policy_escape_annotation(m, forbids[i]->label);
      policy_app_c(m, ']');
      if (forbids[i]->description) {
        policy_app(m, ": ");
        policy_escape_annotation(m, forbids[i]->description);
      }
    }
    if (m->len == 0 || !strchr(".!?", m->str[m->len - 1])) policy_app_c(m, '.');
    break;
  case BOX_CAUSE_ENFORCEMENT: policy_app_c(m, '.'); break;
  }
  *capped = NULL;
  if (m->len <= MESSAGE_MAX) return m->str;
  *capped = policy_cap_utf8(m->str, MESSAGE_MAX, "...");
  if (m->allocated_len > 64 * 1024) { /* a huge message's buffer is not kept */
    g_private_replace(&message_buffer, g_string_sized_new(512));
  }
  return *capped;
}

/* ---- resource label -------------------------------------------------------- */

static const char *field_str(json_object *input, const char *key)
{
  json_object *v = NULL;
  if (!input || !json_object_object_get_ex(input, key, &v) || !v) return NULL;
  if (json_object_is_type(v, json_type_string)) return json_object_get_string(v);
  return NULL;
}

static void append_field(GString *s, json_object *input, const char *key)
{
  json_object *v = NULL;
  if (!input || !json_object_object_get_ex(input, key, &v) || !v) return;
  if (json_object_is_type(v, json_type_string))
    g_string_append(s, json_object_get_string(v));
  else if (json_object_is_type(v, json_type_int))
    g_string_append_printf(s, "%" G_GINT64_FORMAT, (gint64)json_object_get_int64(v));
  else
    g_string_append(s, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

static char *label_built(const char *action, json_object *input);

const char *policy_resource_label_borrowed(const char *action, json_object *input, char **owned)
{
  *owned = NULL;
  if (!action || !input || !json_object_is_type(input, json_type_object))
    return *owned = g_strdup("");
  json_object *v = NULL;
  /* every file decision asks this: its label is its path, the input's own string */
  if (strncmp(action, "fs:", 3) == 0) {
    if (!json_object_object_get_ex(input, "path", &v) || !v) return *owned = g_strdup("");
    if (json_object_is_type(v, json_type_string)) return json_object_get_string(v);
  }
  return *owned = label_built(action, input);
}

char *box_policy_resource_label(const char *action, json_object *input)
{
  char *owned;
  const char *label = policy_resource_label_borrowed(action, input, &owned);
  return owned ? owned : g_strdup(label);
}

static char *label_built(const char *action, json_object *input)
{
  GString *s = g_string_new(NULL);
  if (strncmp(action, "fs:", 3) == 0)
    append_field(s, input, "path");
  else if (strcmp(action, "net:connect") == 0) {
    append_field(s, input, "host");
    g_string_append_c(s, ':');
    append_field(s, input, "port");
  } else if (strcmp(action, "http:request") == 0) {
    append_field(s, input, "host");
    g_string_append_c(s, ':');
    append_field(s, input, "port");
    append_field(s, input, "path");
  } else if (strcmp(action, "shell:exec") == 0)
    append_field(s, input, "program");
  else if (strcmp(action, "shell:spawn") == 0)
    append_field(s, input, "program_path");
  else if (strcmp(action, "mcp:call") == 0) {
    append_field(s, input, "server");
    g_string_append_c(s, '/');
    const char *keys[] = { "tool", "prompt", "uri", "method" };
    for (int i = 0; i < 4; i++) {
      if (field_str(input, keys[i])) {
        g_string_append(s, field_str(input, keys[i]));
        break;
      }
    }
  } else if (policy_action_index(action) >= POLICY_BOX_ACTIONS) {
    /* a tool's own action: labelled as its mcp:call is */
    const ActionDecl *ad = &policy_actions[policy_action_index(action)];
    g_string_append_printf(s, "%s/%s", ad->server, ad->id);
  }
  return g_string_free(s, FALSE);
}

char *policy_rule_name(const Rule *r)
{
  if (r->id) return g_strdup_printf("rule @id(\"%s\")", r->id);
  return g_strdup_printf("the %s rule with no @id", r->forbid ? "forbid" : "permit");
}

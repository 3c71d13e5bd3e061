/* history_store.c — the event history of spec/policy.md §2.5 and §3.5.
 *
 * In memory: the events of the deepest window, in seq order.  On disk (when
 * a box opens it): <box_dir>/private/history.jsonl, one record a line,
 * "CRC32HEX JSON\n":
 *   {"s":SEQ,"t":NS,"a":"fs:read","k":0|1|2,"i":{input},"o":{output}}
 *   {"f":"canonical formula","s":SEQ}      (a formula's history starts at SEQ)
 * Each append is one write(2) made before the decision is answered, so a
 * crash of the process never loses an answered decision; fsync is batched
 * by a flusher thread (50 ms after a round's first record; asleep while
 * nothing is written), so no decision waits for a flush.  A file operation's records (between
 * box_policy_history_batch_begin and _end on its thread) are the
 * exception: they wait in memory for the flusher's next round, or for the
 * next other record (written after them, so the file keeps seq order), or
 * box_policy_history_sync, which boxd calls before it reports a command's
 * end.  On an ext4 workspace that write per operation cost a decided stat
 * or unlink 2-4 us on the path its caller waits on; a SIGKILL of boxd now
 * loses the last 50 ms of file operations' records (the memory the policy
 * decides on has them all until then).  At open a torn last line is cut with a
 * warning; a damaged line before the tail refuses the history.
 */
#include "policy/history_store.h"
#include "policy/json_out.h"
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define HISTORY_FILE "history.jsonl"

struct History {
  GPtrArray *events; /* Event*, events->pdata[off + k] has seq base + k */
  guint off;
  uint64_t base; /* seq of events->pdata[off] */
  uint64_t next_seq;
  int64_t last_ts;
  bool any;
  size_t bytes;         /* event memory */
  GHashTable *formulas; /* canonical → seq (as pointer-size int) */
  /* file */
  int fd;
  char *path;
  GThread *flusher;
  GMutex flock;
  GCond fcond;
  bool dirty, stop;
  bool idle; /* the flusher waits, without a deadline, for the next record */
  /* records not yet written, in seq order (under flock); written under
   * wlock, which keeps one write at a time so the file keeps that order */
  GString *pending;
  GString *writing; /* under wlock */
  GMutex wlock;
  char *deferred_why;   /* the flusher's write failed: every later record fails */
  guint64 id;           /* > 0, unique in the process */
  HistoryWatcher watch; /* told of each event kept in memory, or NULL */
  void *watch_data;
};

#define PENDING_MAX (1u << 20) /* beyond, a deferred record writes them all */

/* The history whose batch this thread is in (by id, which no later
 * history reuses as an address could): its records are deferred. */
static __thread guint64 tls_deferring;
static guint64 history_ids;

/* CRC-32 (IEEE, reflected), eight bytes a step: it runs over every record
 * written, the hot path of a box reading many files. */
static uint32_t crc_table[8][256];
static void crc_init(void)
{
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int k = 1; k < 8; k++)
      crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^ crc_table[0][crc_table[k - 1][i] & 0xFF];
}
static uint32_t crc32_of(const char *s, size_t n)
{
  static gsize once = 0;
  if (g_once_init_enter(&once)) {
    crc_init();
    g_once_init_leave(&once, 1);
  }
  const unsigned char *p = (const unsigned char *)s;
  uint32_t c = 0xFFFFFFFFu;
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo =
      c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    uint32_t hi =
      (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
    c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF] ^
        crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
        crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
  }
  for (; n; n--, p++) c = crc_table[0][(c ^ *p) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

History *history_new(HistoryWatcher watch, void *data)
{
  History *h = g_new0(History, 1);
  h->watch = watch;
  h->watch_data = data;
  h->events = g_ptr_array_new();
  h->formulas = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  h->fd = -1;
  g_mutex_init(&h->flock);
  g_mutex_init(&h->wlock);
  h->id = __atomic_add_fetch(&history_ids, 1, __ATOMIC_RELAXED);
  h->pending = g_string_sized_new(64 * 1024);
  h->writing = g_string_sized_new(64 * 1024);
  g_cond_init(&h->fcond);
  return h;
}

static bool write_pending(History *h, char **why);

/* Something was written or queued (h->flock held): the flusher's next
 * round has it; an idle flusher is woken for it, the only record of a
 * round that signals. */
static void mark_dirty(History *h)
{
  h->dirty = true;
  if (h->idle) {
    h->idle = false;
    g_cond_signal(&h->fcond);
  }
}

static gpointer flusher_main(gpointer data)
{
  History *h = data;
  g_mutex_lock(&h->flock);
  while (!h->stop) {
    /* With nothing written since the last round it sleeps until a record
     * wakes it (mark_dirty): an idle box's boxd stays asleep instead of
     * waking 20 times a second.  The round then waits its 50 ms, so the
     * records of that time share one fdatasync. */
    if (!h->dirty) {
      h->idle = true;
      while (h->idle && !h->stop) g_cond_wait(&h->fcond, &h->flock);
      h->idle = false;
      continue;
    }
    gint64 until = g_get_monotonic_time() + 50 * G_TIME_SPAN_MILLISECOND;
    while (!h->stop && g_cond_wait_until(&h->fcond, &h->flock, until)) {}
    if (h->dirty) {
      h->dirty = false;
      int fd = h->fd;
      g_mutex_unlock(&h->flock);
      char *why = NULL;
      bool ok = write_pending(h, &why);
      if (fd >= 0) fdatasync(fd);
      g_mutex_lock(&h->flock);
      if (!ok && !h->deferred_why)
        h->deferred_why = why;
      else
        g_free(why);
    }
  }
  g_mutex_unlock(&h->flock);
  return NULL;
}

bool history_has_file(const History *h)
{
  return h->fd >= 0;
}

void history_flush(History *h)
{
  if (!h || h->fd < 0) return;
  char *why = NULL;
  if (!write_pending(h, &why)) g_free(why);
  fdatasync(h->fd);
}

/* The flusher's failure, if its write failed: *why set, false. */
static bool deferred_ok(History *h, char **why)
{
  g_mutex_lock(&h->flock);
  char *failed = g_strdup(h->deferred_why);
  g_mutex_unlock(&h->flock);
  if (!failed) return true;
  *why = failed;
  return false;
}

bool history_sync(History *h, char **why)
{
  if (!h || h->fd < 0) return true;
  return deferred_ok(h, why) && write_pending(h, why);
}

void history_free(History *h)
{
  if (!h) return;
  if (h->flusher) {
    g_mutex_lock(&h->flock);
    h->stop = true;
    g_cond_signal(&h->fcond);
    g_mutex_unlock(&h->flock);
    g_thread_join(h->flusher);
  }
  if (h->fd >= 0) {
    char *why = NULL;
    if (!write_pending(h, &why)) {
      g_printerr("box: warning: %s\n", why);
      g_free(why);
    }
    fdatasync(h->fd);
    close(h->fd);
  }
  if (tls_deferring == h->id) tls_deferring = 0;
  g_string_free(h->pending, TRUE);
  g_string_free(h->writing, TRUE);
  g_free(h->deferred_why);
  g_mutex_clear(&h->wlock);
  for (guint i = h->off; i < h->events->len; i++) event_free(h->events->pdata[i]);
  g_ptr_array_free(h->events, TRUE);
  g_hash_table_destroy(h->formulas);
  g_mutex_clear(&h->flock);
  g_cond_clear(&h->fcond);
  g_free(h->path);
  g_free(h);
}

int64_t history_last_ts(const History *h)
{
  return h->any ? h->last_ts : INT64_MIN;
}
uint64_t history_next_seq(const History *h)
{
  return h->next_seq;
}
uint64_t history_first_seq(const History *h)
{
  return h->base;
}
size_t history_count(const History *h)
{
  return h->events->len - h->off;
}

const Event *history_get(const History *h, uint64_t seq)
{
  if (seq < h->base || seq >= h->next_seq) return NULL;
  return h->events->pdata[h->off + (seq - h->base)];
}

uint64_t history_seq_at_or_after(const History *h, int64_t ts)
{
  size_t lo = 0, hi = history_count(h);
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const Event *e = h->events->pdata[h->off + mid];
    if (e->ts < ts)
      lo = mid + 1;
    else
      hi = mid;
  }
  return h->base + lo;
}

size_t history_memory(const History *h)
{
  return sizeof *h + h->bytes + h->events->len * sizeof(gpointer);
}

void history_prune(History *h, int64_t keep_from_ts)
{
  while (h->off < h->events->len) {
    Event *e = h->events->pdata[h->off];
    if (e->ts >= keep_from_ts) break;
    /* always keep the newest event: `previous` looks one back */
    if (h->off + 1 == h->events->len) break;
    h->bytes -= event_size(e);
    event_free(e);
    h->events->pdata[h->off] = NULL;
    h->off++;
    h->base++;
  }
  if (h->off > 1024 && h->off > h->events->len / 2) {
    g_ptr_array_remove_range(h->events, 0, h->off);
    h->off = 0;
  }
}

/* ---- file records --------------------------------------------------------- */

static bool write_all(History *h, const char *buf, size_t total, char **why)
{
  size_t done = 0;
  while (done < total) {
    ssize_t w = write(h->fd, buf + done, total - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      *why = g_strdup_printf("cannot write the history file %s: %s", h->path,
                             w < 0 ? g_strerror(errno) : "short write");
      return false;
    }
    done += (size_t)w;
  }
  g_mutex_lock(&h->flock);
  mark_dirty(h);
  g_mutex_unlock(&h->flock);
  return true;
}

/* Everything pending, written now, after whatever another thread is
 * writing. */
static bool write_pending(History *h, char **why)
{
  g_mutex_lock(&h->wlock);
  g_mutex_lock(&h->flock);
  GString *w = h->pending;
  h->pending = h->writing;
  h->writing = w;
  g_mutex_unlock(&h->flock);
  bool ok = true;
  if (w->len) ok = write_all(h, w->str, w->len, why);
  g_string_truncate(w, 0);
  if (w->allocated_len > 4 * PENDING_MAX) { /* a burst's buffer is not kept */
    g_string_free(w, TRUE);
    h->writing = g_string_sized_new(64 * 1024);
  }
  g_mutex_unlock(&h->wlock);
  return ok;
}

/* Frames the JSON text at o->str + at (with 9 bytes kept free before it)
 * as a record line: its CRC, a space, the text, a newline. */
static void frame(GString *o, size_t at)
{
  static const char hex[] = "0123456789abcdef";
  uint32_t crc = crc32_of(o->str + at + 9, o->len - at - 9);
  for (int i = 7; i >= 0; i--, crc >>= 4) o->str[at + (size_t)i] = hex[crc & 15];
  o->str[at + 8] = ' ';
  g_string_append_c(o, '\n');
}

/* The record line at line->str + at, framed and queued; written at once
 * unless this thread is in a file operation's batch (the caller holds the
 * lock that guards h, so records are queued in seq order). */
static bool put_line(History *h, GString *line, size_t at, char **why)
{
  frame(line, at);
  g_mutex_lock(&h->flock);
  char *failed = g_strdup(h->deferred_why);
  if (!failed) {
    g_string_append_len(h->pending, line->str + at, (gssize)(line->len - at));
    mark_dirty(h);
  }
  bool now = tls_deferring != h->id || h->pending->len > PENDING_MAX;
  g_mutex_unlock(&h->flock);
  g_string_truncate(line, at);
  if (failed) {
    *why = failed;
    return false;
  }
  return now ? write_pending(h, why) : true;
}

static void scratch_free(gpointer p)
{
  g_string_free(p, TRUE);
}
static GPrivate scratch_key = G_PRIVATE_INIT(scratch_free);

/* A thread's buffer for building one record line, with room for its CRC. */
static GString *line_buffer(size_t *at)
{
  GString *o = g_private_get(&scratch_key);
  if (!o) {
    o = g_string_sized_new(1024);
    g_private_set(&scratch_key, o);
  } else if (o->allocated_len > 64 * 1024) {
    o = g_string_sized_new(1024);
    g_private_replace(&scratch_key, o);
  }
  g_string_truncate(o, 0);
  *at = 0;
  g_string_append(o, "         "); /* the CRC and its space, filled in by frame() */
  return o;
}

static bool write_record(History *h, json_object *rec, char **why)
{
  if (h->fd < 0) return true;
  size_t n = 0;
  const char *js = json_object_to_json_string_length(
    rec, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
  size_t at;
  GString *o = line_buffer(&at);
  g_string_append_len(o, js, (gssize)n);
  return put_line(h, o, at, why);
}

static void put_u64(GString *o, uint64_t v)
{
  char buf[24];
  policy_app_len(o, buf, policy_put_decimal(buf, v));
}

static const int json_flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;

/* An event's record, the text json-c gives for
 * {"s":…,"t":…,"a":…,"k":…,"i":…[,"o":…][,"q":…]} without building it:
 * one is written per decision and per outcome. */
static bool write_event(History *h, uint64_t seq, int64_t ts, int action, EventKind kind,
                        json_object *input, json_object *output, uint64_t request_seq, char **why)
{
  if (h->fd < 0) return true;
  size_t at;
  GString *o = line_buffer(&at);
  policy_app_len(o, "{\"s\":", 5);
  put_u64(o, seq);
  policy_app_len(o, ",\"t\":", 5);
  if (ts < 0) {
    policy_app_c(o, '-');
    put_u64(o, (uint64_t)0 - (uint64_t)ts);
  } else {
    put_u64(o, (uint64_t)ts);
  }
  policy_app_len(o, ",\"a\":\"", 6);
  /* a generated action's term holds quotes, its tool's name anything */
  const char *term = policy_actions[action].term;
  policy_json_escaped(o, term, strlen(term));
  policy_app_len(o, "\",\"k\":", 6);
  policy_app_c(o, (char)('0' + (int)kind)); /* 0, 1 or 2 */
  policy_app_len(o, ",\"i\":", 5);
  if (input) {
    policy_json_append(o, input, json_flags);
  } else {
    policy_app(o, "{}");
  }
  if (kind == EV_RESPONSE && output) {
    policy_app(o, ",\"o\":");
    policy_json_append(o, output, json_flags);
  }
  if (request_seq != seq) {
    policy_app_len(o, ",\"q\":", 5);
    put_u64(o, request_seq);
  }
  policy_app_c(o, '}');
  return put_line(h, o, at, why);
}

void history_batch_begin(History *h)
{
  if (h->fd >= 0) tls_deferring = h->id;
}

bool history_batch_end(History *h, char **why)
{
  if (tls_deferring == h->id) tls_deferring = 0;
  return h->fd < 0 || deferred_ok(h, why);
}

static void add_event(History *h, Event *e, uint64_t seq)
{
  g_ptr_array_add(h->events, e);
  if (!h->any) h->base = seq;
  h->any = true;
  h->next_seq = seq + 1;
  h->last_ts = e->ts;
  h->bytes += event_size(e);
  if (h->watch) h->watch(h->watch_data, seq, e);
}

bool history_append(History *h, int action, EventKind kind, json_object *input, json_object *output,
                    int64_t ts, uint64_t request_seq, uint64_t *seq_out, char **why)
{
  if (h->any && ts < h->last_ts) ts = h->last_ts + 1; /* clock stepped back */
  uint64_t seq = h->next_seq;
  if (request_seq == T_OWN_REQUEST) request_seq = seq;
  if (!write_event(h, seq, ts, action, kind, input, output, request_seq, why)) return false;
  if (!h->watch && h->events->len == h->off) {
    /* No rule reads the history: the record on disk is all it keeps (a
     * policy that reads it is given the file at open), so the event is not
     * built in memory only to be pruned at once. */
    h->any = true;
    h->next_seq = seq + 1;
    h->last_ts = ts;
    h->base = seq + 1; /* nothing held: the first seq held would be the next */
  } else {
    Event *e =
      event_build(action, kind, input, kind == EV_RESPONSE ? output : NULL, ts, request_seq);
    add_event(h, e, seq);
  }
  if (seq_out) *seq_out = seq;
  return true;
}

uint64_t history_formula_seq(History *h, const char *canonical, char **why)
{
  gpointer v;
  if (g_hash_table_lookup_extended(h->formulas, canonical, NULL, &v))
    return (uint64_t)GPOINTER_TO_SIZE(v);
  uint64_t seq = h->next_seq;
  json_object *rec = json_object_new_object();
  json_object_object_add(rec, "f", json_object_new_string(canonical));
  json_object_object_add(rec, "s", json_object_new_uint64(seq));
  bool ok = write_record(h, rec, why);
  json_object_put(rec);
  if (!ok) return UINT64_MAX;
  g_hash_table_insert(h->formulas, g_strdup(canonical), GSIZE_TO_POINTER((gsize)seq));
  return seq;
}

/* ---- open and recovery ---------------------------------------------------- */

/* A line of the file: [off, off + len) of the text, newline included. */
typedef struct {
  size_t off, len;
} Span;

static bool rewrite(const char *path, const char *text, GArray *lines, GError **error)
{
  char *tmp = g_strconcat(path, ".tmp", NULL);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  for (guint i = 0; ok && i < lines->len; i++) {
    const Span *sp = &g_array_index(lines, Span, i);
    const char *l = text + sp->off;
    size_t done = 0;
    while (ok && done < sp->len) {
      ssize_t w = write(fd, l + done, sp->len - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        ok = false;
      else
        done += (size_t)w;
    }
  }
  if (ok) ok = fsync(fd) == 0;
  if (fd >= 0) close(fd);
  if (ok) ok = rename(tmp, path) == 0;
  if (!ok) {
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO,
                "policy history failure: cannot compact %s: %s", path, g_strerror(errno));
    unlink(tmp);
  }
  g_free(tmp);
  return ok;
}

/* Does the line at l (n bytes before its newline, nl: the newline or NULL)
 * carry the CRC of its text? */
static bool line_sound(const char *l, size_t n, bool nl)
{
  if (!nl || n <= 9 || l[8] != ' ') return false;
  uint32_t want = 0;
  for (int i = 0; i < 8; i++) {
    int d = g_ascii_xdigit_value(l[i]);
    if (d < 0) return false;
    want = want << 4 | (uint32_t)d;
  }
  return want == crc32_of(l + 9, n - 9);
}

static bool quick_u64(const char **p, const char *end, uint64_t *out)
{
  const char *q = *p;
  uint64_t v = 0;
  if (q >= end || !g_ascii_isdigit(*q)) return false;
  while (q < end && g_ascii_isdigit(*q)) v = v * 10 + (uint64_t)(*q++ - '0');
  *p = q;
  *out = v;
  return true;
}

/* seq and timestamp of an event record as write_event spells it
 * ({"s":N,"t":N,…}), without parsing the rest: most of a long history is
 * older than anything kept and is only counted.  False for other shapes. */
static bool quick_event(const char *js, size_t n, uint64_t *seq, int64_t *ts)
{
  const char *end = js + n, *p = js;
  if (n < 12 || memcmp(p, "{\"s\":", 5) != 0) return false;
  p += 5;
  if (!quick_u64(&p, end, seq)) return false;
  if (end - p < 5 || memcmp(p, ",\"t\":", 5) != 0) return false;
  p += 5;
  bool neg = p < end && *p == '-';
  if (neg) p++;
  uint64_t t;
  if (!quick_u64(&p, end, &t) || p >= end || *p != ',') return false;
  *ts = neg ? -(int64_t)t : (int64_t)t;
  return true;
}

static json_object *parse_line(const char *l, size_t n)
{
  json_tokener *tok = json_tokener_new();
  json_object *rec = json_tokener_parse_ex(tok, l + 9, (int)(n - 9));
  if (json_tokener_get_error(tok) != json_tokener_success) {
    json_object_put(rec);
    rec = NULL;
  }
  json_tokener_free(tok);
  return rec;
}

/* The record's "t", if it has one. */
static bool line_ts(const char *l, size_t n, int64_t *ts)
{
  uint64_t seq;
  if (quick_event(l + 9, n - 9, &seq, ts)) return true;
  json_object *rec = parse_line(l, n), *tv;
  bool got = rec && json_object_object_get_ex(rec, "t", &tv);
  if (got) *ts = json_object_get_int64(tv);
  json_object_put(rec);
  return got;
}

/* The file is read through a mapping, line by line: a day of history at
 * thousands of file operations a second is gigabytes, which a copy in memory
 * and a JSON tree per record would not survive (a box could not restart).
 * Only the records within the deepest window become events. */
/* The file's text, mapped (*len 0 and NULL when it is absent or empty). */
static bool map_file(const char *path, const char **text, size_t *len, GError **error)
{
  *text = NULL;
  *len = 0;
  int rfd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (rfd < 0 && errno != ENOENT) {
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO,
                "policy history failure: cannot read %s: %s", path, g_strerror(errno));
    return false;
  }
  if (rfd >= 0 && fstat(rfd, &st) == 0 && st.st_size > 0) {
    size_t n = (size_t)st.st_size;
    void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, rfd, 0);
    if (m == MAP_FAILED) {
      g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO,
                  "policy history failure: cannot read %s: %s", path, g_strerror(errno));
      close(rfd);
      return false;
    }
    *text = m;
    *len = n;
    madvise(m, n, MADV_SEQUENTIAL);
  }
  if (rfd >= 0) close(rfd);
  return true;
}

/* The end of the sound lines (*good_end) and their count; a damaged line
 * is allowed only as the last one (a torn tail, *torn), else false. */
static bool sound_prefix(const char *path, const char *text, size_t len, size_t *good_end,
                         guint *nrecs, bool *torn, GError **error)
{
  size_t line_no = 0;
  const char *bad = NULL;
  *good_end = 0;
  *nrecs = 0;
  for (size_t at = 0; at < len;) {
    const char *l = text + at;
    const char *nl = memchr(l, '\n', len - at);
    line_no++;
    size_t n = nl ? (size_t)(nl - l) : len - at;
    if (!line_sound(l, n, nl != NULL)) {
      bad = l;
      break;
    }
    (*nrecs)++;
    at += n + 1;
    *good_end = at;
  }
  *torn = bad != NULL;
  if (!bad) return true;
  const char *nl = memchr(bad, '\n', len - (size_t)(bad - text));
  bool last = !nl || (size_t)(nl - text) + 1 >= len;
  if (!last) {
    g_set_error(
      error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO,
      "policy history failure: %s is damaged at line %zu, before its last record; refusing to "
      "guess at the history (move the file away to start an empty history)",
      path, line_no);
    return false;
  }
  fprintf(
    stderr,
    "box: warning: policy history %s ended in a torn record (%zu bytes at offset %zu); cut it, "
    "keeping the %u records before it\n",
    path, len - *good_end, *good_end, *nrecs);
  return true;
}

/* The last record's timestamp, INT64_MIN when none has one. */
static int64_t last_timestamp(const char *text, size_t good_end)
{
  int64_t last_ts = INT64_MIN;
  for (size_t end = good_end; end > 0 && last_ts == INT64_MIN;) {
    size_t b = end - 1; /* end's newline */
    while (b > 0 && text[b - 1] != '\n') b--;
    int64_t ts;
    if (line_ts(text + b, end - 1 - b, &ts)) last_ts = ts;
    end = b;
  }
  return last_ts;
}

/* One sound line read back: a formula's first seq, or an event kept in
 * memory when it is within keep_from.  Lines the file still needs go to
 * compacted; events older than file_keep_from are counted in *old. */
static void replay_line(History *h, const char *l, size_t n, Span line, int64_t keep_from,
                        int64_t file_keep_from, uint64_t *next, size_t *old, GArray *compacted)
{
  uint64_t seq = 0;
  int64_t ts = 0;
  bool quick = quick_event(l + 9, n - 9, &seq, &ts);
  if (quick && ts < file_keep_from) {
    if (seq + 1 > *next) *next = seq + 1;
    (*old)++;
    return;
  }
  if (quick && ts < keep_from) {
    if (seq + 1 > *next) *next = seq + 1;
    g_array_append_val(compacted, line);
    return;
  }
  json_object *rec = parse_line(l, n), *v;
  if (!rec) return; /* sound but not JSON: nothing our writer makes */
  if (json_object_object_get_ex(rec, "f", &v)) {
    json_object *s;
    uint64_t fseq = json_object_object_get_ex(rec, "s", &s) ? json_object_get_uint64(s) : 0;
    if (!g_hash_table_contains(h->formulas, json_object_get_string(v)))
      g_hash_table_insert(h->formulas, g_strdup(json_object_get_string(v)),
                          GSIZE_TO_POINTER((gsize)fseq));
    g_array_append_val(compacted, line);
    json_object_put(rec);
    return;
  }
  json_object *s, *tv, *a, *k, *in = NULL, *out = NULL;
  if (!json_object_object_get_ex(rec, "s", &s) || !json_object_object_get_ex(rec, "t", &tv) ||
      !json_object_object_get_ex(rec, "a", &a) || !json_object_object_get_ex(rec, "k", &k)) {
    json_object_put(rec);
    return;
  }
  seq = json_object_get_uint64(s);
  ts = json_object_get_int64(tv);
  int action = policy_action_index(json_object_get_string(a));
  if (action < 0) action = policy_action_recovered(json_object_get_string(a));
  int kind = json_object_get_int(k);
  if (seq + 1 > *next) *next = seq + 1;
  if (ts < file_keep_from) {
    (*old)++;
    json_object_put(rec);
    return;
  }
  g_array_append_val(compacted, line);
  if (action < 0 || kind < 0 || kind > 2 || ts < keep_from || (h->any && seq < h->next_seq)) {
    json_object_put(rec); /* the last: a duplicate */
    return;
  }
  json_object_object_get_ex(rec, "i", &in);
  json_object_object_get_ex(rec, "o", &out);
  json_object *q;
  uint64_t rq = json_object_object_get_ex(rec, "q", &q) ? json_object_get_uint64(q) : seq;
  Event *ev = event_build(action, (EventKind)kind, in, out, ts, rq);
  json_object_put(rec);
  if (h->any && seq != h->next_seq) {
    /* a gap (records older than what we keep were compacted away):
     * restart the in-memory run at this seq */
    for (guint j = h->off; j < h->events->len; j++) event_free(h->events->pdata[j]);
    g_ptr_array_set_size(h->events, 0);
    h->off = 0;
    h->bytes = 0;
    h->any = false;
  }
  add_event(h, ev, seq);
}

bool history_attach_file(History *h, const char *dir, int64_t depth, GError **error)
{
  if (g_mkdir_with_parents(dir, 0700) != 0) {
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO,
                "policy history failure: cannot create %s: %s", dir, g_strerror(errno));
    return false;
  }
  g_autofree char *path = g_build_filename(dir, HISTORY_FILE, NULL);
  const char *text;
  size_t len, good_end;
  guint nrecs;
  bool torn;
  if (!map_file(path, &text, &len, error)) return false;
  if (!sound_prefix(path, text, len, &good_end, &nrecs, &torn, error)) {
    munmap((void *)text, len);
    return false;
  }
  /* the last record's timestamp bounds what is kept */
  int64_t last_ts = last_timestamp(text, good_end);
  int64_t keep_from = last_ts == INT64_MIN ? INT64_MIN : last_ts - depth;
  int64_t file_keep_from = last_ts == INT64_MIN ? INT64_MIN : last_ts - T_MAX_WINDOW_NS;
  uint64_t next = 0;
  size_t old = 0;
  GArray *compacted = g_array_new(FALSE, FALSE, sizeof(Span));
  for (size_t at = 0; at < good_end;) {
    const char *l = text + at;
    size_t n = (size_t)((const char *)memchr(l, '\n', good_end - at) - l);
    Span line = { at, n + 1 };
    at += n + 1;
    replay_line(h, l, n, line, keep_from, file_keep_from, &next, &old, compacted);
  }
  if (next > h->next_seq) h->next_seq = next;
  if (!h->any) h->base = h->next_seq;
  bool ok = true, rewritten = old > 10000 && old > nrecs / 2;
  if (rewritten) ok = rewrite(path, text, compacted, error); /* the torn tail left behind too */
  g_array_free(compacted, TRUE);
  if (text) munmap((void *)text, len);
  if (ok && torn && !rewritten && truncate(path, (off_t)good_end) != 0) {
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO,
                "policy history failure: cannot cut %s: %s", path, g_strerror(errno));
    ok = false;
  }
  if (!ok) return false;
  h->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (h->fd < 0) {
    g_set_error(error, BOX_POLICY_ERROR, BOX_POLICY_ERROR_IO,
                "policy history failure: cannot open %s: %s", path, g_strerror(errno));
    return false;
  }
  h->path = g_steal_pointer(&path);
  h->flusher = g_thread_new("box-history", flusher_main, h);
  return true;
}

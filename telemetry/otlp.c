/* otlp.c — one OTLP/HTTP target (spec/runtime.md §2.6, §8.7): export lines
 * queued by whoever records them, sent by a thread of the target's own as
 * OTLP/JSON export requests to <url>/v1/logs and <url>/v1/traces.
 *
 * The lines arrive as the file target writes them, one export request
 * each; a batch is their resource entries joined into one request per
 * signal, the records of consecutive lines of one resource and scope (every
 * decision's) in one entry, so the receiver gets exactly the records a file
 * would hold, without the resource repeated for each.  Whoever queues holds
 * the lock for one copy of the lines as they are, into a buffer that is
 * already there: the splitting by signal, the joining (a list of pieces of
 * the queued blocks, which curl reads straight from them), any protobuf
 * encoding and the network are the thread's, so a decision never waits for
 * them.  The queue is bounded in bytes; lines that do not fit, and a batch
 * the receiver fails or does not answer in time, are dropped
 * and counted (best effort, no retry, §8.7). */
#include "telemetry/telemetry-private.h"

#include <string.h>
#include <curl/curl.h>

#define QUEUE_BYTES (8u * 1024 * 1024) /* beyond, lines are dropped */
#define BATCH_BYTES (512u * 1024)      /* the thread is woken to send this much */
#define SEND_EVERY_MS 200              /* or sends what it has this often */
#define CONNECT_TIMEOUT_MS 1000
#define REQUEST_TIMEOUT_MS 2000
#define FINAL_TIMEOUT_MS 1000     /* at the run's end, per request */
#define BLOCK_BYTES (128u * 1024) /* the queue's unit */
#define UPLOAD_BUFFER_BYTES (512L * 1024)
#define KEEP_PIECES 65536 /* a request's list a burst grew past this is not kept */

#define LOGS_OPEN "{\"resourceLogs\":["
#define SPANS_OPEN "{\"resourceSpans\":["

/* A piece of a request's body, sent as it is: most point into the queued
 * blocks, which are kept until the request is sent. */
typedef struct {
  const char *p;
  size_t len;
} Piece;

/* One request being built by the thread: the opening, then the batch's
 * lines of its signal.  Consecutive lines of one resource and scope (every
 * decision's) become one resource entry whose list holds their records:
 * the receiver gets the same records in a quarter fewer bytes, and nothing
 * is copied but by curl, straight from the blocks. */
typedef struct {
  GArray *pieces; /* Piece */
  size_t bytes;
  guint lines;
  const char *group; /* the open entry's resource and scope, up to its list */
  size_t group_len;
  guint at; /* reading: the piece, and how far into it */
  size_t off;
} Pending;

/* Queued lines, whole: a line never spans two blocks. */
typedef struct Block {
  struct Block *next;
  size_t len, size;
  char data[];
} Block;

struct BoxOtlp {
  char *label;
  char *logs_url;
  char *traces_url;
  char *metrics_url;
  struct curl_slist *headers;
  CURL *curl;          /* the thread's: one connection kept alive */
  CURL *relay_curl;    /* box_otlp_post_now's, made at its first use */
  Pending logs, spans; /* the thread's, kept from batch to batch */
  GMutex lock;
  GCond wake; /* the thread: a batch is full, or stop */
  /* under lock: the lines queued since the thread took the last batch, as
   * they came, oldest block first; and the blocks of the batches sent,
   * emptied and kept for the run (as many as the queue and the batch being
   * sent ever held together: twice the queue's bound at most).  Appending reuses those, so a line queued neither allocates nor
   * faults in a fresh page, nor moves what is queued: one growing buffer,
   * freed on the thread once sent, was faulted back in page by page on the
   * deciding thread, and copied whole when it grew. */
  Block *head, *tail;
  size_t bytes;
  Block *spare;
  guint64 dropped;
  uint64_t *drops; /* the run's count, shared by every target */
  bool protobuf;   /* sent as OTLP/protobuf, re-encoded from the JSON batch */
  bool stopping;
  /* the thread told a batch is full and not yet taken it: one futex wake
   * per batch (GCond's signal is a system call, waiter or not) */
  bool woken;
  GThread *thread;
};

static gsize curl_ready;

static void piece(Pending *p, const char *s, size_t len)
{
  Piece x = { s, len };
  g_array_append_val(p->pieces, x);
  p->bytes += len;
}

static void pending_reset(Pending *p, const char *open)
{
  if (!p->pieces || p->pieces->len > KEEP_PIECES) {
    if (p->pieces) g_array_free(p->pieces, TRUE);
    p->pieces = g_array_sized_new(FALSE, FALSE, sizeof(Piece), 1024);
  }
  g_array_set_size(p->pieces, 0);
  p->bytes = 0;
  p->lines = 0;
  p->group = NULL;
  p->at = 0;
  p->off = 0;
  piece(p, open, strlen(open));
}

/* what closes an entry opened by a line, less the request's own "]}":
 * its list, its scope, its scope list, itself */
#define GROUP_CLOSE "]}]}"

static void pending_finish(Pending *p)
{
  if (p->group) piece(p, GROUP_CLOSE, strlen(GROUP_CLOSE));
  p->group = NULL;
  piece(p, "]}", 2);
}

/* CURLOPT_READFUNCTION: the pieces, in order */
static size_t read_pieces(char *buf, size_t size, size_t n, void *data)
{
  Pending *p = data;
  size_t room = size * n, done = 0;
  while (done < room && p->at < p->pieces->len) {
    const Piece *x = &g_array_index(p->pieces, Piece, p->at);
    size_t k = MIN(room - done, x->len - p->off);
    memcpy(buf + done, x->p + p->off, k);
    done += k;
    p->off += k;
    if (p->off == x->len) {
      p->at++;
      p->off = 0;
    }
  }
  return done;
}

static size_t discard_reply(char *p, size_t size, size_t n, void *data)
{
  (void)p;
  (void)data;
  return size * n;
}

/* CURLOPT_SEEKFUNCTION: curl rewinds a body to send it again (a kept
 * connection the receiver had closed) */
static int seek_pieces(void *data, curl_off_t offset, int origin)
{
  Pending *p = data;
  if (origin != SEEK_SET || offset < 0 || (size_t)offset > p->bytes) return CURL_SEEKFUNC_FAIL;
  size_t left = (size_t)offset;
  for (p->at = 0, p->off = 0; p->at < p->pieces->len; p->at++) {
    size_t len = g_array_index(p->pieces, Piece, p->at).len;
    if (left < len) break;
    left -= len;
  }
  p->off = left;
  return CURL_SEEKFUNC_OK;
}

/* One export request of req's pieces; false when the receiver did not
 * take it. */
static bool post(BoxOtlp *o, const char *url, Pending *req, long timeout_ms)
{
  pending_finish(req);
  GByteArray *binary = NULL;
  if (o->protobuf) { /* re-encoded from the JSON the pieces spell, whole */
    GString *json = g_string_sized_new(req->bytes + 1);
    for (guint i = 0; i < req->pieces->len; i++) {
      const Piece *x = &g_array_index(req->pieces, Piece, i);
      g_string_append_len(json, x->p, (gssize)x->len);
    }
    binary = box_otlp_protobuf(json->str, json->len);
    g_string_free(json, TRUE);
    if (!binary) return false;
    g_array_set_size(req->pieces, 0);
    req->bytes = 0;
    piece(req, (const char *)binary->data, binary->len);
  }
  curl_easy_setopt(o->curl, CURLOPT_URL, url);
  curl_easy_setopt(o->curl, CURLOPT_POST, 1L);
  curl_easy_setopt(o->curl, CURLOPT_READFUNCTION, read_pieces);
  curl_easy_setopt(o->curl, CURLOPT_READDATA, req);
  curl_easy_setopt(o->curl, CURLOPT_SEEKFUNCTION, seek_pieces);
  curl_easy_setopt(o->curl, CURLOPT_SEEKDATA, req);
  curl_easy_setopt(o->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->bytes);
  curl_easy_setopt(o->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  CURLcode rc = curl_easy_perform(o->curl);
  long code = 0;
  if (rc == CURLE_OK) curl_easy_getinfo(o->curl, CURLINFO_RESPONSE_CODE, &code);
  if (binary) g_byte_array_unref(binary);
  return rc == CURLE_OK && code >= 200 && code < 300;
}

/* One line's resource entry (the line less its opening and its "]}") to
 * the request: its records joined to the open entry's when it has the
 * same resource and scope (the same bytes up to the list, which a string
 * cannot fake: its quotes are escaped), else a new entry. */
static void add_entry(Pending *to, const char *e, size_t n, const char *list_key)
{
  size_t key_len = strlen(list_key), close_len = strlen(GROUP_CLOSE);
  const char *key = memmem(e, n, list_key, key_len);
  const char *records = key ? key + key_len : NULL;
  bool shaped = records && (size_t)(e + n - records) >= close_len &&
                memcmp(e + n - close_len, GROUP_CLOSE, close_len) == 0;
  size_t group_len = shaped ? (size_t)(records - e) : 0;
  if (shaped && to->group && to->group_len == group_len && memcmp(to->group, e, group_len) == 0) {
    piece(to, ",", 1);
    piece(to, records, (size_t)(e + n - close_len - records));
    return;
  }
  if (to->group) piece(to, GROUP_CLOSE, close_len);
  if (to->lines) piece(to, ",", 1);
  if (shaped) {
    piece(to, e, n - close_len);
    to->group = e;
    to->group_len = group_len;
  } else {
    piece(to, e, n);
    to->group = NULL;
  }
}

/* The lines of a block, each to the request of its signal. */
static void split(BoxOtlp *o, const Block *b)
{
  const char *end = b->data + b->len;
  for (const char *p = b->data; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *stop = nl ? nl : end;
    size_t n = (size_t)(stop - p);
    if (n > sizeof LOGS_OPEN && memcmp(p, LOGS_OPEN, sizeof LOGS_OPEN - 1) == 0) {
      add_entry(&o->logs, p + sizeof LOGS_OPEN - 1, n - (sizeof LOGS_OPEN - 1) - 2,
                "\"logRecords\":[");
      o->logs.lines++;
    } else if (n > sizeof SPANS_OPEN && memcmp(p, SPANS_OPEN, sizeof SPANS_OPEN - 1) == 0) {
      add_entry(&o->spans, p + sizeof SPANS_OPEN - 1, n - (sizeof SPANS_OPEN - 1) - 2,
                "\"spans\":[");
      o->spans.lines++;
    }
    p = stop + 1;
  }
}

/* lock held on entry and exit, and the thread's buffers free (the thread,
 * or whoever queues once it has ended): sends what is queued */
static void send_queued(BoxOtlp *o, long timeout_ms)
{
  Block *batch = o->head;
  o->head = o->tail = NULL;
  o->bytes = 0;
  o->woken = false;
  g_mutex_unlock(&o->lock);
  pending_reset(&o->logs, LOGS_OPEN);
  pending_reset(&o->spans, SPANS_OPEN);
  for (const Block *b = batch; b; b = b->next) split(o, b);
  guint64 lost = 0;
  if (o->logs.lines && !post(o, o->logs_url, &o->logs, timeout_ms)) lost += o->logs.lines;
  if (o->spans.lines && !post(o, o->traces_url, &o->spans, timeout_ms)) lost += o->spans.lines;
  g_mutex_lock(&o->lock);
  while (batch) {
    Block *b = batch;
    batch = b->next;
    if (b->size != BLOCK_BYTES) { /* one huge line's */
      g_free(b);
      continue;
    }
    b->len = 0;
    b->next = o->spare;
    o->spare = b;
  }
  o->dropped += lost;
  __atomic_add_fetch(o->drops, lost, __ATOMIC_RELAXED);
}

static CURL *easy_new(BoxOtlp *o)
{
  CURL *c = curl_easy_init();
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, o->headers);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_reply);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  /* the box's own records go straight to the receiver, never through a
   * proxy the operator's environment names */
  curl_easy_setopt(c, CURLOPT_PROXY, "");
  /* a batch goes out in a few large writes, not 64 KiB ones: about a
   * third less of the thread's time per batch, measured */
  curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, (long)UPLOAD_BUFFER_BYTES);
  return c;
}

bool box_otlp_post_now(BoxOtlp *o, BoxOtlpSignal signal, json_object *request)
{
  if (!o->relay_curl) o->relay_curl = easy_new(o);
  const char *url = signal == BOX_OTLP_TRACES ? o->traces_url
                    : signal == BOX_OTLP_LOGS ? o->logs_url
                                              : o->metrics_url;
  GByteArray *binary = o->protobuf ? box_otlp_encode(signal, request) : NULL;
  const char *text =
    binary ? NULL : json_object_to_json_string_ext(request, JSON_C_TO_STRING_PLAIN);
  curl_easy_setopt(o->relay_curl, CURLOPT_URL, url);
  curl_easy_setopt(o->relay_curl, CURLOPT_POSTFIELDS, binary ? (const char *)binary->data : text);
  curl_easy_setopt(o->relay_curl, CURLOPT_POSTFIELDSIZE_LARGE,
                   (curl_off_t)(binary ? binary->len : strlen(text)));
  curl_easy_setopt(o->relay_curl, CURLOPT_TIMEOUT_MS, (long)REQUEST_TIMEOUT_MS);
  CURLcode rc = curl_easy_perform(o->relay_curl);
  long code = 0;
  if (rc == CURLE_OK) curl_easy_getinfo(o->relay_curl, CURLINFO_RESPONSE_CODE, &code);
  if (binary) g_byte_array_unref(binary);
  return rc == CURLE_OK && code >= 200 && code < 300;
}

static gpointer exporter_main(gpointer data)
{
  BoxOtlp *o = data;
  g_mutex_lock(&o->lock);
  while (!o->stopping) {
    gint64 until = g_get_monotonic_time() + SEND_EVERY_MS * G_TIME_SPAN_MILLISECOND;
    while (!o->stopping && o->bytes < BATCH_BYTES && g_cond_wait_until(&o->wake, &o->lock, until))
      ;
    if (o->stopping) break;
    if (o->head) send_queued(o, REQUEST_TIMEOUT_MS);
  }
  if (o->head) send_queued(o, FINAL_TIMEOUT_MS);
  g_mutex_unlock(&o->lock);
  return NULL;
}

BoxOtlp *box_otlp_start(const char *label, const char *url, const char *header, bool protobuf,
                        uint64_t *drops)
{
  if (g_once_init_enter(&curl_ready)) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    g_once_init_leave(&curl_ready, 1);
  }
  BoxOtlp *o = g_new0(BoxOtlp, 1);
  o->label = g_strdup(label);
  o->drops = drops;
  size_t n = strlen(url);
  while (n > 0 && url[n - 1] == '/') n--;
  o->logs_url = g_strdup_printf("%.*s/v1/logs", (int)n, url);
  o->traces_url = g_strdup_printf("%.*s/v1/traces", (int)n, url);
  o->metrics_url = g_strdup_printf("%.*s/v1/metrics", (int)n, url);
  o->protobuf = protobuf;
  o->headers = curl_slist_append(NULL, protobuf ? "Content-Type: application/x-protobuf"
                                                : "Content-Type: application/json");
  /* no "Expect: 100-continue": a receiver that never answers it costs a
   * second per batch */
  o->headers = curl_slist_append(o->headers, "Expect:");
  if (header) o->headers = curl_slist_append(o->headers, header);
  o->curl = easy_new(o);
  g_mutex_init(&o->lock);
  g_cond_init(&o->wake);
  o->thread = g_thread_new("box-otlp", exporter_main, o);
  return o;
}

/* lock held: room for len more bytes at the queue's end */
static Block *queue_room(BoxOtlp *o, size_t len)
{
  Block *b = o->tail;
  if (b && b->size - b->len >= len) return b;
  if (len <= BLOCK_BYTES && o->spare) {
    b = o->spare;
    o->spare = b->next;
  } else {
    size_t size = MAX(len, BLOCK_BYTES);
    b = g_malloc(sizeof *b + size);
    b->len = 0;
    b->size = size;
  }
  b->next = NULL;
  if (o->tail)
    o->tail->next = b;
  else
    o->head = b;
  o->tail = b;
  return b;
}

void box_otlp_queue(BoxOtlp *o, const char *lines, size_t len)
{
  if (!len) return;
  g_mutex_lock(&o->lock);
  if (o->bytes + len > QUEUE_BYTES) {
    guint64 n = 0;
    for (const char *p = lines, *end = lines + len; p < end; n++) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      p = nl ? nl + 1 : end;
    }
    o->dropped += n;
    __atomic_add_fetch(o->drops, n, __ATOMIC_RELAXED);
  } else {
    Block *b = queue_room(o, len);
    memcpy(b->data + b->len, lines, len);
    b->len += len;
    o->bytes += len;
  }
  if (!o->thread) {
    if (o->head) send_queued(o, FINAL_TIMEOUT_MS); /* the thread has ended: sent now */
  } else if (o->bytes >= BATCH_BYTES && !o->woken) {
    o->woken = true;
    g_cond_signal(&o->wake);
  }
  g_mutex_unlock(&o->lock);
}

void box_otlp_end(BoxOtlp *o)
{
  g_mutex_lock(&o->lock);
  o->stopping = true;
  g_cond_signal(&o->wake);
  g_mutex_unlock(&o->lock);
}

void box_otlp_join(BoxOtlp *o)
{
  if (!o->thread) return;
  box_otlp_end(o);
  g_thread_join(o->thread);
  o->thread = NULL;
}

uint64_t box_otlp_dropped(BoxOtlp *o)
{
  g_mutex_lock(&o->lock);
  uint64_t n = o->dropped;
  g_mutex_unlock(&o->lock);
  return n;
}

const char *box_otlp_label(const BoxOtlp *o)
{
  return o->label;
}

static void free_blocks(Block *b)
{
  while (b) {
    Block *next = b->next;
    g_free(b);
    b = next;
  }
}

void box_otlp_stop(BoxOtlp *o)
{
  if (!o) return;
  box_otlp_join(o);
  curl_easy_cleanup(o->curl);
  if (o->relay_curl) curl_easy_cleanup(o->relay_curl);
  curl_slist_free_all(o->headers);
  free_blocks(o->head);
  free_blocks(o->spare);
  for (Pending *p = &o->logs; p; p = p == &o->logs ? &o->spans : NULL)
    if (p->pieces) g_array_free(p->pieces, TRUE);
  g_cond_clear(&o->wake);
  g_mutex_clear(&o->lock);
  char *strings[] = { o->label, o->logs_url, o->traces_url, o->metrics_url };
  for (size_t i = 0; i < G_N_ELEMENTS(strings); i++) g_free(strings[i]);
  g_free(o);
}

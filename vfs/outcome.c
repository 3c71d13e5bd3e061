/* outcome.c — the history raiser: a permitted decision's outcome, told
 * when its request is answered, and one history batch per request. */
#include "vfs/vfs-private.h"

typedef struct {
  BoxVfs *v;
  int cmd;
  const char *action; /* a literal (vfs_outcome_push) */
  json_object *input;
} Raised;

static __thread GArray *tls_raised;   /* Raised: permits awaiting their outcome */
static __thread BoxVfs *tls_batching; /* this thread's request has a history batch open */

/* Every decision is answered through vfs_outcome_flush (reply.c),
 * which closes the batch on the same thread. */
void vfs_history_batch_open(BoxVfs *v)
{
  if (!v->history_batch || tls_batching) return;
  v->history_batch(v->decide_data, true);
  tls_batching = v;
}

static void history_batch_close(void)
{
  BoxVfs *v = tls_batching;
  if (!v) return;
  tls_batching = NULL;
  v->history_batch(v->decide_data, false);
}

void vfs_outcome_push(BoxVfs *v, int cmd, const char *action, json_object *input)
{
  if (!tls_raised) tls_raised = g_array_new(FALSE, FALSE, sizeof(Raised));
  Raised r = { v, cmd, action, json_object_get(input) };
  g_array_append_val(tls_raised, r);
}

void vfs_outcome_flush(const char *result)
{
  for (guint i = 0; tls_raised && i < tls_raised->len; i++) {
    Raised *r = &g_array_index(tls_raised, Raised, i);
    r->v->outcome(r->v->decide_data, r->cmd, r->action, r->input, result);
    /* the last reference (neither policy nor the log keeps an input): the
     * thread's spare again */
    vfs_fs_input_done(r->input, false);
  }
  if (tls_raised) g_array_set_size(tls_raised, 0);
  history_batch_close();
}

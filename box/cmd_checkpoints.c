/* cmd_checkpoints.c — the operator's verbs on a box's checkpoints
 * (<box_dir>/private/checkpoints.git, written by boxd, checkpoint_wire.c):
 *   box checkpoints --config FILE [-n N]
 *   box diff --config FILE A [B] [--stat] [-- PATHS...]
 *   box restore --config FILE ID [PATHS...]
 * Never offered to the agent: they run on the host, as the operator. */
#include "box/box-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "checkpoints/checkpoints.h"

/* The workspace the running box records (private/live/box.json), else the
 * config's, else the current directory (as `box run` takes it). */
static char *workspace_of(BoxConfig *cfg)
{
  g_autofree char *live = g_build_filename(cfg->box_dir, "private", "live", "box.json", NULL);
  json_object *o = json_object_from_file(live);
  json_object *x;
  char *ws = NULL;
  if (o && json_object_object_get_ex(o, "workspace", &x)) ws = g_strdup(json_object_get_string(x));
  if (o) json_object_put(o);
  if (ws) return ws;
  g_autofree char *cwd = g_get_current_dir();
  return box_canonical_path(cfg->agent.workspace ? cfg->agent.workspace : cwd);
}

/* The options every verb takes, parsed; the checkpoints opened.  argv
 * after a "--" is left in *after. */
typedef struct {
  const char *prgname, *operands, *summary;
} VerbText;

static const VerbText log_text = {
  "box checkpoints", "", "The box's checkpoints, newest first: id, time, files changed, command."
};
static const VerbText diff_text = {
  "box diff", "A [B] [-- PATHS...]",
  "What changed from checkpoint A to B, or what A itself changed (from the one before it),\n"
  "as a unified diff; PATHS (relative to the workspace) narrow it."
};
static const VerbText restore_text = {
  "box restore", "ID [PATHS...]",
  "Puts the workspace (or PATHS in it) back as it was at checkpoint ID, and records that as a\n"
  "checkpoint.  Refused while a command runs in the box."
};

static BoxCheckpoints *open_verb(const VerbText *text, GOptionEntry *extra, int *argc, char ***argv,
                                 char ***rest, BoxConfig **cfg_out, int *status)
{
  const char *prgname = text->prgname, *operands = text->operands, *summary = text->summary;
  g_autofree char *config_path = NULL;
  GOptionEntry entries[] = {
    { "config", 0, 0, G_OPTION_ARG_FILENAME, &config_path, "The box's configuration", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, rest, NULL, operands },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_set_prgname(prgname);
  g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
  g_option_context_set_summary(ctx, summary);
  g_option_context_add_main_entries(ctx, entries, NULL);
  if (extra) g_option_context_add_main_entries(ctx, extra, NULL);
  g_autoptr(GError) error = NULL;
  *status = 2;
  if (!g_option_context_parse(ctx, argc, argv, &error)) {
    fprintf(stderr, "box: error: %s\n", error->message);
    return NULL;
  }
  if (!config_path) {
    fprintf(stderr, "box: error: --config FILE is required\n");
    return NULL;
  }
  *status = 1;
  const char *h = getenv("HOME");
  g_autofree char *home = box_canonical_path(h && *h ? h : "/");
  BoxConfig *cfg = box_config_load(config_path, home, &error);
  if (!cfg) {
    box_fail("%s", error->message);
    return NULL;
  }
  g_autofree char *repo = g_build_filename(cfg->box_dir, "private", "checkpoints.git", NULL);
  if (!g_file_test(repo, G_FILE_TEST_IS_DIR)) {
    box_fail("the box %s has no checkpoints (%s)", cfg->name, repo);
    box_config_free(cfg);
    return NULL;
  }
  g_autofree char *ws = workspace_of(cfg);
  BoxCheckpoints *cp = ws ? box_checkpoints_open(repo, ws, &cfg->checkpoints, &error) : NULL;
  if (!cp) {
    box_fail("%s", error ? error->message : "cannot resolve the workspace");
    box_config_free(cfg);
    return NULL;
  }
  *cfg_out = cfg;
  *status = 0;
  return cp;
}

/* Splits argv at its first "--": what follows goes to *after. */
static void split_dashes(int *argc, char **argv, char ***after)
{
  *after = NULL;
  for (int i = 1; i < *argc; i++)
    if (strcmp(argv[i], "--") == 0) {
      *after = g_strdupv(argv + i + 1);
      argv[i] = NULL;
      *argc = i;
      return;
    }
}

/* A usage error after the checkpoints were opened: status 2. */
static int refuse(BoxCheckpoints *cp, BoxConfig *cfg, const char *why)
{
  box_checkpoints_close(cp);
  box_config_free(cfg);
  fprintf(stderr, "box: error: %s\n", why);
  return 2;
}

static int finish(BoxCheckpoints *cp, BoxConfig *cfg, bool ok, GString *out, GError *error)
{
  if (ok) fputs(out->str, stdout);
  g_string_free(out, TRUE);
  box_checkpoints_close(cp);
  box_config_free(cfg);
  if (!ok) box_fail("%s", error->message);
  g_clear_error(&error);
  return ok ? 0 : 1;
}

int box_verb_checkpoints(int argc, char **argv)
{
  gint n = 0;
  g_auto(GStrv) rest = NULL;
  GOptionEntry extra[] = {
    { "count", 'n', 0, G_OPTION_ARG_INT, &n, "Show the newest N only", "N" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  BoxConfig *cfg = NULL;
  int status;
  BoxCheckpoints *cp = open_verb(&log_text, extra, &argc, &argv, &rest, &cfg, &status);
  if (!cp) return status;
  if ((rest && rest[0]) || n < 0)
    return refuse(cp, cfg, "box checkpoints takes no operand and N >= 0");
  GString *out = g_string_new(NULL);
  GError *error = NULL;
  bool ok = box_checkpoints_log(cp, (guint)n, out, &error);
  return finish(cp, cfg, ok, out, error);
}

int box_verb_diff(int argc, char **argv)
{
  gboolean stat = FALSE;
  g_auto(GStrv) rest = NULL, paths = NULL;
  split_dashes(&argc, argv, &paths);
  GOptionEntry extra[] = {
    { "stat", 0, 0, G_OPTION_ARG_NONE, &stat, "A diffstat instead of the diff", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  BoxConfig *cfg = NULL;
  int status;
  BoxCheckpoints *cp = open_verb(&diff_text, extra, &argc, &argv, &rest, &cfg, &status);
  if (!cp) return status;
  guint nops = rest ? g_strv_length(rest) : 0;
  if (nops < 1 || nops > 2) return refuse(cp, cfg, "box diff takes one or two checkpoints");
  GString *out = g_string_new(NULL);
  GError *error = NULL;
  bool ok = box_checkpoints_diff(cp, rest[0], nops > 1 ? rest[1] : NULL, (const char *const *)paths,
                                 stat, out, &error);
  return finish(cp, cfg, ok, out, error);
}

int box_verb_restore(int argc, char **argv)
{
  g_auto(GStrv) rest = NULL;
  BoxConfig *cfg = NULL;
  int status;
  BoxCheckpoints *cp = open_verb(&restore_text, NULL, &argc, &argv, &rest, &cfg, &status);
  if (!cp) return status;
  if (!rest || !rest[0]) return refuse(cp, cfg, "box restore needs a checkpoint ID");
  /* boxd holds it shared from a command's start to its checkpoint */
  g_autofree char *lock = g_build_filename(cfg->box_dir, "private", "checkpoints.lock", NULL);
  int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
    bool busy = fd >= 0 && errno == EWOULDBLOCK;
    if (fd >= 0) close(fd);
    box_checkpoints_close(cp);
    box_config_free(cfg);
    return busy ? box_fail("a command is running in the box; restore refused")
                : box_fail("cannot lock %s: %s", lock, g_strerror(errno));
  }
  GString *out = g_string_new(NULL);
  GError *error = NULL;
  char *made = NULL;
  bool ok =
    box_checkpoints_restore(cp, rest[0], (const char *const *)(rest + 1), &made, out, &error);
  if (ok)
    g_string_append_printf(out, "restored %s%s%s\n", rest[0], made ? " as " : "", made ? made : "");
  g_free(made);
  close(fd);
  return finish(cp, cfg, ok, out, error);
}

/* disclosure.c — the startup disclosure of a process table (spec §5.7). */
#include "tools/tools-private.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const credential_stores[] = { ".aws",           ".ssh",
                                                 ".gnupg",         ".netrc",
                                                 ".docker",        ".kube",
                                                 ".config/gcloud", ".config/google-chrome",
                                                 ".mozilla",       NULL };

static bool is_credential_store(const char *path, const char *home)
{
  for (int i = 0; home && credential_stores[i]; i++) {
    g_autofree char *p = g_build_filename(home, credential_stores[i], NULL);
    if (strcmp(p, path) == 0) return true;
  }
  return false;
}

static void line(GString *s, const char *key, const char *path, const char *note)
{
  g_string_append_printf(s, "  %-10s  %s", key, path);
  if (note) g_string_append_printf(s, "  (%s)", note);
  g_string_append_c(s, '\n');
}

static bool listed_exactly(char *const *list, const char *path)
{
  for (int i = 0; list && list[i]; i++)
    if (strcmp(list[i], path) == 0) return true;
  return false;
}

char *box_tools_disclosure(const BoxToolTable *t, bool is_agent, const char *program,
                           const char *operator_home, const char *operator_path)
{
  const BoxToolContext *ctx = tools_context();
  g_autofree char *label = is_agent ? g_strdup("[agent]") : g_strdup_printf("[tool.%s]", t->label);
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "strands-box: %s runs %s with no policy decision over these paths:\n",
                         label, program);
  struct {
    const char *key;
    char *const *list;
  } lists[] = { { "read", t->read },           { "write", t->write },
                { "read_file", t->read_file }, { "write_file", t->write_file },
                { "exec", t->exec },           { "deny", t->deny } };
  bool any = false;
  for (size_t k = 0; k < G_N_ELEMENTS(lists); k++)
    for (int i = 0; lists[k].list && lists[k].list[i]; i++) {
      const char *p = lists[k].list[i];
      const char *note = NULL;
      if (is_credential_store(p, operator_home))
        note = "credential store";
      else if (g_str_has_prefix(lists[k].key, "write"))
        note = is_agent ? "readable too: a writable bind reads"
                        : "readable too: a writable bind reads; a tool runs what it builds there";
      line(s, lists[k].key, p, note);
      any = true;
    }
  if (!listed_exactly(t->exec, program)) {
    line(s, "exec", program,
         t->box_tmp ? "command, implicit: the box's /tmp file, executable alone"
                    : "command, implicit");
    any = true;
  }
  if (!any) g_string_append(s, "  (no filesystem entry)\n");
  g_string_append_printf(s, "strands-box: %s runtime minimum, added by Core:\n", label);
  if (is_agent) {
    line(s, "read", "/usr/share/zoneinfo", NULL);
    line(s, "read_file", "/etc/localtime", NULL);
    line(s, "read_file", "/etc/ld.so.cache", NULL);
  } else {
    line(s, "read", "/usr", "system tree: code maps and runs here");
    for (int i = 0; tools_etc_entries[i]; i++) {
      g_autofree char *p = g_strconcat("/etc/", tools_etc_entries[i], NULL);
      struct stat st;
      if (lstat(p, &st) == 0) line(s, "read", p, NULL);
    }
  }
  const char *devices[] = { "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", NULL };
  for (int i = 0; devices[i]; i++) line(s, "read_file", devices[i], NULL);
  line(s, "write_file", "/dev/null", NULL);
  line(s, "write", "/tmp", "private to each launch, noexec");
  /* a file of the box's /tmp is not the host's: its closure is known at a run */
  GPtrArray *closure = t->box_tmp ? NULL : box_tools_loader_closure(program, NULL);
  for (guint i = 0; closure && i < closure->len; i++) {
    const char *img = g_ptr_array_index(closure, i);
    char *canon = realpath(img, NULL);
    bool in_usr = canon && g_str_has_prefix(canon, "/usr/");
    free(canon);
    if (is_agent || !in_usr) line(s, "exec", img, "loader closure");
  }
  if (closure) g_ptr_array_free(closure, TRUE);
  if (is_agent) {
    if (ctx->alias_dir) line(s, "exec", ctx->alias_dir, "aliases");
    if (ctx->broker_socket) line(s, "connect", ctx->broker_socket, "broker");
    if (t->workspace) {
      bool covered = false;
      char *const *all[] = { t->read, t->write, t->exec };
      for (int k = 0; k < 3; k++)
        for (int i = 0; all[k] && all[k][i]; i++)
          covered |= box_path_within(t->workspace, all[k][i]);
      if (!covered) line(s, "enter", t->workspace, "workspace, entry only");
    }
  }
  if (ctx->ca_cert) line(s, "read_file", ctx->ca_cert, "gateway CA");
  if (!is_agent && t->host_network)
    g_string_append_printf(s,
                           "strands-box: %s native egress: connects to the network directly, with "
                           "the arguments the agent passes, with no egress gateway, no net:connect "
                           "or http:request decision, and no credential injection\n",
                           label);
  char **env = box_tools_compose_env(t, is_agent, operator_home, operator_path,
                                     t->workspace ? t->workspace : "/");
  const char *home = "", *path = "";
  for (char **e = env; *e; e++) {
    if (g_str_has_prefix(*e, "HOME="))
      home = *e + 5;
    else if (g_str_has_prefix(*e, "PATH="))
      path = *e + 5;
  }
  g_string_append_printf(s, "strands-box: %s HOME=%s PATH=%s\n", label, home, path);
  g_strfreev(env);
  char *const *writable[] = { t->write, t->write_file };
  for (int k = 0; k < 2; k++)
    for (int i = 0; writable[k] && writable[k][i]; i++)
      if (box_path_within(program, writable[k][i]))
        g_string_append_printf(s,
                               "strands-box: warning: %s command %s lies inside the writable "
                               "grant %s, so the process can replace the program it runs\n",
                               label, program, writable[k][i]);
  return g_string_free(s, FALSE);
}

/* config_check.c — filesystem checks of [agent] and [tool.*] lists
 * (spec/runtime.md §2.1–§2.2, floors of §5.5), run after box_dir exists and
 * before the workload; then the tools' shared context and the startup
 * disclosure (§5.7).  Spelling checks (absolute, no pattern, no `..`, no
 * duplicate) are config.c's, at parse.
 */
#include "box/box-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* §5.5 exact floors: a grant naming exactly one of these is refused. */
static const char *const exact_floors[] = {
  "/",      "/home",    "/bin",       "/boot",       "/dev",         "/etc",         "/opt",
  "/proc",  "/root",    "/run",       "/sbin",       "/srv",         "/sys",         "/tmp",
  "/usr",   "/usr/bin", "/usr/local", "/usr/sbin",   "/usr/share",   "/var",         "/lib",
  "/lib64", "/usr/lib", "/usr/lib64", "/etc/shadow", "/etc/gshadow", "/etc/sudoers", NULL,
};
static const char *const loader_dirs[] = { "/lib", "/lib64", "/usr/lib", "/usr/lib64", NULL };
static const char *const overlap_floors[] = { "/etc/sudoers.d", NULL };
static const char *const credential_stores[] = { ".aws",           ".ssh",
                                                 ".gnupg",         ".netrc",
                                                 ".docker",        ".kube",
                                                 ".config/gcloud", ".config/google-chrome",
                                                 ".mozilla",       NULL };

typedef struct {
  Boxd *d;
  const char *label; /* "[agent]" or "[tool.x]" */
  const BoxProcessSpec *spec;
  GError **error;
} Check;

static bool refuse(Check *c, const char *entry, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static bool refuse(Check *c, const char *entry, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *reason = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(c->error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
              "`%s` filesystem entry \"%s\" is refused: %s", c->label + 0, entry, reason);
  return false;
}

static bool floors(Check *c, const char *list, const char *e, const char *p)
{
  for (int i = 0; exact_floors[i]; i++) {
    if (strcmp(p, exact_floors[i]) != 0) continue;
    bool loader = false;
    for (int k = 0; loader_dirs[k]; k++) loader |= strcmp(p, loader_dirs[k]) == 0;
    if (loader && strcmp(list, "read") == 0) return true;
    return refuse(c, e,
                  "%s is refused beneath every grant: it is a system tree, and a grant "
                  "names what a process needs inside it",
                  p);
  }
  for (int i = 0; overlap_floors[i]; i++)
    if (box_path_within(p, overlap_floors[i]) || box_path_within(overlap_floors[i], p))
      return refuse(c, e,
                    "%s is refused beneath every grant: it holds the machine's privilege "
                    "configuration",
                    p);
  const char *home = c->d->operator_home;
  for (int i = 0; home && credential_stores[i]; i++) {
    g_autofree char *store = g_build_filename(home, credential_stores[i], NULL);
    if (strcmp(p, store) != 0 && box_path_within(store, p) && access(store, F_OK) == 0)
      return refuse(c, e,
                    "%s is refused beneath every grant: it encloses the credential store "
                    "%s; name the store exactly to expose it",
                    p, store);
  }
  const char *box_dir = c->d->config->box_dir;
  if (box_path_within(p, box_dir) || box_path_within(box_dir, p))
    return refuse(c, e, "the grant would expose the Box's own directory %s", box_dir);
  return true;
}

static bool check_entry(Check *c, const char *list, const char *e)
{
  struct stat st;
  if (lstat(e, &st) != 0)
    return refuse(c, e,
                  "%s is not there: No such file or directory (os error 2). A grant on a "
                  "path that does not exist grants nothing and says so nowhere",
                  e);
  if (S_ISLNK(st.st_mode))
    return refuse(c, e,
                  "%s is a symbolic link. A grant carries the identity the kernel checks, "
                  "so a link renders a rule that matches nothing; name what it points at",
                  e);
  g_autofree char *canon = box_canonical_path(e);
  if (!canon) return refuse(c, e, "%s cannot be resolved: %s", e, g_strerror(errno));
  if (strcmp(canon, e) != 0)
    return refuse(c, e,
                  "%s is not the path the kernel checks, which is %s. A grant carries the "
                  "identity it acts on, so name that path instead",
                  e, canon);
  if ((strcmp(list, "read_file") == 0 || strcmp(list, "write_file") == 0) && S_ISDIR(st.st_mode))
    return refuse(c, e, "%s is a directory; `%s` names one file, and a tree belongs in `%s`", e,
                  list, strcmp(list, "read_file") == 0 ? "read" : "write");
  if (strcmp(list, "exec") == 0 && !S_ISDIR(st.st_mode)) {
    if (!S_ISREG(st.st_mode) || access(e, X_OK) != 0)
      return refuse(c, e, "%s is not an executable regular file", e);
    if (st.st_mode & (S_ISUID | S_ISGID))
      return refuse(c, e, "%s is refused beneath every grant: it is setuid or setgid", e);
  }
  if (strcmp(list, "deny") == 0) return true;
  return floors(c, list, e, canon);
}

static bool check_nesting(Check *c, const char *list, char *const *entries, char *const *deny)
{
  for (int i = 0; entries && entries[i]; i++) {
    for (int k = 0; entries[k]; k++)
      if (k != i && strcmp(entries[i], entries[k]) != 0 && box_path_within(entries[i], entries[k]))
        return refuse(c, entries[i],
                      "%s lies inside %s, granted by `%s`. The union is the "
                      "wider grant, so the narrower one enforces nothing it appears to",
                      entries[i], entries[k], list);
    for (int k = 0; deny && deny[k]; k++)
      if (box_path_within(entries[i], deny[k]))
        return refuse(c, entries[i],
                      "%s is at or inside %s, which no grant reaches. The grant "
                      "would render and reach nothing, so it is refused rather than left "
                      "enforcing nothing",
                      entries[i], deny[k]);
  }
  return true;
}

static bool check_spec_as(Boxd *d, const BoxProcessSpec *spec, const char *kind, GError **error)
{
  g_autofree char *label = strcmp(kind, "agent") == 0
                             ? g_strdup("[agent]")
                             : g_strdup_printf("[%s.%s]", kind, spec->label);
  Check c = { d, label, spec, error };
  struct {
    const char *name;
    char *const *list;
  } lists[] = { { "read", spec->fs.read },           { "write", spec->fs.write },
                { "read_file", spec->fs.read_file }, { "write_file", spec->fs.write_file },
                { "exec", spec->fs.exec },           { "deny", spec->fs.deny } };
  for (size_t k = 0; k < G_N_ELEMENTS(lists); k++)
    for (int i = 0; lists[k].list && lists[k].list[i]; i++)
      if (!check_entry(&c, lists[k].name, lists[k].list[i])) return false;
  for (size_t k = 0; k + 1 < G_N_ELEMENTS(lists); k++)
    if (!check_nesting(&c, lists[k].name, lists[k].list, spec->fs.deny)) return false;
  /* A writable grant that reaches an authority file without subtraction. */
  const char *authority[] = { d->config->path, d->config->policy, NULL };
  char *const *writable[] = { spec->fs.write, spec->fs.write_file };
  for (int w = 0; w < 2; w++)
    for (int i = 0; writable[w] && writable[w][i]; i++)
      for (int a = 0; authority[a]; a++) {
        g_autofree char *canon = box_canonical_path(authority[a]);
        if (canon && box_path_within(canon, writable[w][i]))
          return refuse(&c, writable[w][i],
                        "`write` reaches this box's policy file, %s. A grant "
                        "may enclose it only when it is subtracted, and nothing subtracts it here",
                        canon);
      }
  return true;
}

static bool check_spec(Boxd *d, const BoxProcessSpec *spec, bool agent, GError **error)
{
  return check_spec_as(d, spec, agent ? "agent" : "tool", error);
}

/* A table's command (README, "Programs"): a bare word, or a path the host
 * holds at start, is that host program, as ever.  A path the host does not
 * hold names a program the agent or a tool writes later, so it must lie
 * inside the box: in a bound root (the same file on the host, looked up at
 * each run) or in the box's /tmp (the command's RAM /tmp, looked up on the
 * mount at each run and run from the tool's view of it).  Anywhere else
 * nothing the box writes could ever be there. */
static bool check_command(Boxd *d, const BoxProcessSpec *spec, BoxToolTable *t, GError **error)
{
  const char *word = spec->command[0];
  const char *search = g_hash_table_lookup(spec->env, "PATH");
  g_autofree char *prog =
    box_tools_resolve(word, "/", search && *search ? search : d->operator_path);
  g_autofree char *named = word[0] == '/' ? box_tools_named_path(word, "/") : NULL;
  BoxPlace place = boxd_place_of(d, named);
  if (prog && place == BOX_PLACE_TMP) /* the host's /tmp is anyone's: say whose file this is */
    g_printerr("box: warning: `[tool.%s]` `command` \"%s\" is the host's file, which exists "
               "now; the box's /tmp is another place, and a program written there under that "
               "name does not run as this table\n",
               spec->label, word);
  if (prog) return true;
  if (!strchr(word, '/')) {
    g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                "containment config failed: path does not exist: %s", word);
    return false;
  }
  if (place == BOX_PLACE_TMP) t->box_tmp = true;
  if (place != BOX_PLACE_ELSEWHERE) return true;
  g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
              "`[tool.%s]` `command` \"%s\" is refused: the host has no such program, and %s",
              spec->label, word,
              named ? "the path lies outside the box, where nothing the box writes could ever "
                      "be; name a host program, or a path in the workspace, a home or /tmp"
                    : "a program the box writes later is named by its absolute path");
  return false;
}

static bool host_network(const BoxConfig *config, const char *label)
{
  json_object *tool, *t, *net, *ce;
  return json_object_object_get_ex(config->doc, "tool", &tool) &&
         json_object_object_get_ex(tool, label, &t) &&
         json_object_object_get_ex(t, "network", &net) &&
         json_object_object_get_ex(net, "contain_egress", &ce) &&
         json_object_is_type(ce, json_type_boolean) && !json_object_get_boolean(ce);
}

bool box_config_check(Boxd *d, GError **error)
{
  if (!check_spec(d, &d->config->agent, true, error)) return false;
  /* the tables are the config's tools, in order (cmd_run.c) */
  for (guint i = 0; i < d->config->tools->len; i++)
    if (!check_spec(d, g_ptr_array_index(d->config->tools, i), false, error) ||
        !check_command(d, g_ptr_array_index(d->config->tools, i), d->tool_tables[i], error))
      return false;
  for (int i = 0; d->tool_tables && d->tool_tables[i]; i++)
    d->tool_tables[i]->host_network = host_network(d->config, d->tool_tables[i]->label);
  /* A stdio MCP server's lists are judged like a tool's; its program, a
   * bare name, must resolve now, since nothing the box writes is one. */
  for (guint i = 0; i < d->config->mcp->len; i++) {
    const BoxMcpServer *m = g_ptr_array_index(d->config->mcp, i);
    if (m->http) continue;
    if (!check_spec_as(d, &m->spec, "mcp", error)) return false;
    const char *search = g_hash_table_lookup(m->spec.env, "PATH");
    g_autofree char *prog =
      box_tools_resolve(m->spec.command[0], "/", search && *search ? search : d->operator_path);
    if (!prog) {
      g_set_error(error, BOX_BOXD_ERROR, BOX_BOXD_ERROR_FAILED,
                  "containment config failed: path does not exist: %s", m->spec.command[0]);
      return false;
    }
  }
  if (!d->agent_table->workspace) d->agent_table->workspace = d->workspace;

  g_autofree char *box_dir = box_canonical_path(d->config->box_dir);
  if (!box_dir) box_dir = g_strdup(d->config->box_dir);
  g_autofree char *alias_dir = g_build_filename(box_dir, "bin", NULL);
  g_autofree char *socket = g_build_filename(box_dir, "run", "box.sock", NULL);
  g_autofree char *config_dir = g_path_get_dirname(d->config->path);
  g_autofree char *policy_dir = d->config->policy ? g_path_get_dirname(d->config->policy) : NULL;
  const char *authority[] = { d->config->path, d->config->policy, NULL };
  /* The directories holding the authority files are subtracted from any
   * grant that strictly encloses them (never the workspace itself). */
  const char *hidden[3] = { NULL, NULL, NULL };
  int nh = 0;
  if (!box_path_within(d->workspace, config_dir)) hidden[nh++] = config_dir;
  if (policy_dir && !box_path_within(d->workspace, policy_dir) &&
      strcmp(policy_dir, config_dir) != 0)
    hidden[nh++] = policy_dir;
  BoxToolContext ctx = {
    .box_dir = box_dir,
    .authority = authority,
    .hidden = hidden,
    .alias_dir = alias_dir,
    .broker_socket = socket,
  };
  box_tools_set_context(&ctx);

  /* §5.7: what each table reaches with no decision, before anything runs. */
  const char *declared = g_hash_table_lookup(d->config->agent.env, "PATH");
  g_autofree char *program = box_tools_resolve(d->config->agent.command[0], d->workspace,
                                               declared && *declared ? declared : d->operator_path);
  if (program && !d->quiet) {
    g_autofree char *text =
      box_tools_disclosure(d->agent_table, true, program, d->agent_home, d->operator_path);
    fputs(text, stderr);
  }
  for (int i = 0; d->tool_tables && d->tool_tables[i]; i++) {
    BoxToolTable *t = d->tool_tables[i];
    g_autofree char *prog = box_tools_table_program(t, d->operator_path);
    /* a program in a bound root that is written later: its path, as declared */
    if (!prog && t->command[0][0] == '/') prog = box_tools_named_path(t->command[0], "/");
    if (!prog || d->quiet) continue;
    g_autofree char *text =
      box_tools_disclosure(t, false, prog, d->operator_home, d->operator_path);
    fputs(text, stderr);
  }
  return true;
}

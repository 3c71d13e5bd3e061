/* registry.c — the one table of what the Shell implements itself.
 * Each command lives in its own file in this directory. */
#include <stdlib.h>
#include <string.h>

#include "shell/shell-private.h"
#include "shell/commands/util.h"   /* issue 5: the commands */

int box_cmd_sh(BoxCmd *c);  /* issue 4: sh/bash/lash inside the Shell */

/* Sorted by name (bsearch). */
static const BoxCommandDef commands[] = {
  { ".", box_cmd_source },
  { ":", box_cmd_true },
  { "[", box_cmd_test },
  { "alias", box_cmd_alias },
  { "base64", box_cmd_base64 },
  { "basename", box_cmd_basename },
  { "bash", box_cmd_sh },
  { "break", box_cmd_break },
  { "cat", box_cmd_cat },
  { "cd", box_cmd_cd },
  { "chmod", box_cmd_chmod },
  { "comm", box_cmd_comm },
  { "command", box_cmd_command },
  { "continue", box_cmd_continue },
  { "cp", box_cmd_cp },
  { "curl", box_cmd_curl },
  { "cut", box_cmd_cut },
  { "date", box_cmd_date },
  { "declare", box_cmd_declare },
  { "diff", box_cmd_diff },
  { "dirname", box_cmd_dirname },
  { "du", box_cmd_du },
  { "echo", box_cmd_echo },
  { "env", box_cmd_env },
  { "eval", box_cmd_eval },
  { "exec", box_cmd_exec },
  { "exit", box_cmd_exit },
  { "expand", box_cmd_expand },
  { "export", box_cmd_export },
  { "expr", box_cmd_expr },
  { "false", box_cmd_false },
  { "find", box_cmd_find },
  { "fold", box_cmd_fold },
  { "getopts", box_cmd_getopts },
  { "grep", box_cmd_grep },
  { "hash", box_cmd_hash },
  { "head", box_cmd_head },
  { "hostname", box_cmd_hostname },
  { "id", box_cmd_id },
  { "jobs", box_cmd_jobs },
  { "jq", box_cmd_jq },
  { "kill", box_cmd_kill },
  { "lash", box_cmd_sh },
  { "let", box_cmd_let },
  { "ln", box_cmd_ln },
  { "local", box_cmd_local },
  { "ls", box_cmd_ls },
  { "lua", box_cmd_lua },
  { "mapfile", box_cmd_mapfile },
  { "md5sum", box_cmd_md5sum },
  { "mkdir", box_cmd_mkdir },
  { "mktemp", box_cmd_mktemp },
  { "mv", box_cmd_mv },
  { "nl", box_cmd_nl },
  { "nproc", box_cmd_nproc },
  { "od", box_cmd_od },
  { "paste", box_cmd_paste },
  { "printenv", box_cmd_printenv },
  { "printf", box_cmd_printf },
  { "pwd", box_cmd_pwd },
  { "read", box_cmd_read },
  { "readarray", box_cmd_mapfile },
  { "readlink", box_cmd_readlink },
  { "readonly", box_cmd_readonly },
  { "realpath", box_cmd_realpath },
  { "return", box_cmd_return },
  { "rev", box_cmd_rev },
  { "rm", box_cmd_rm },
  { "rmdir", box_cmd_rmdir },
  { "sed", box_cmd_sed },
  { "seq", box_cmd_seq },
  { "set", box_cmd_set },
  { "sh", box_cmd_sh },
  { "sha1sum", box_cmd_sha1sum },
  { "sha256sum", box_cmd_sha256sum },
  { "shift", box_cmd_shift },
  { "shopt", box_cmd_shopt },
  { "sleep", box_cmd_sleep },
  { "sort", box_cmd_sort },
  { "source", box_cmd_source },
  { "stat", box_cmd_stat },
  { "tail", box_cmd_tail },
  { "tee", box_cmd_tee },
  { "test", box_cmd_test },
  { "timeout", box_cmd_timeout },
  { "times", box_cmd_times },
  { "touch", box_cmd_touch },
  { "tr", box_cmd_tr },
  { "trap", box_cmd_trap },
  { "true", box_cmd_true },
  { "type", box_cmd_type },
  { "typeset", box_cmd_typeset },
  { "ulimit", box_cmd_ulimit },
  { "umask", box_cmd_umask },
  { "unalias", box_cmd_unalias },
  { "uname", box_cmd_uname },
  { "uniq", box_cmd_uniq },
  { "unset", box_cmd_unset },
  { "wait", box_cmd_wait },
  { "wc", box_cmd_wc },
  { "which", box_cmd_which },
  { "whoami", box_cmd_whoami },
  { "xargs", box_cmd_xargs },
  { "xxd", box_cmd_xxd },
  { "yes", box_cmd_yes },
};

static int cmp(const void *key, const void *elem) {
  return strcmp(key, ((const BoxCommandDef *)elem)->name);
}

static int cmp_def(const void *a, const void *b) {
  return strcmp(((const BoxCommandDef *)a)->name, ((const BoxCommandDef *)b)->name);
}

/* A sorted copy made once, so an entry added out of order still works. */
const BoxCommandDef *box_command_lookup(const char *name) {
  static BoxCommandDef *sorted;
  if (!sorted) {
    BoxCommandDef *s = g_memdup2(commands, sizeof commands);
    qsort(s, G_N_ELEMENTS(commands), sizeof commands[0], cmp_def);
    sorted = s;
  }
  return bsearch(name, sorted, G_N_ELEMENTS(commands), sizeof commands[0], cmp);
}

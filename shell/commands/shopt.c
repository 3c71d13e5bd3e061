/* shopt.c — `shopt [-psuq] [-o] [NAME…]`. */
#include <string.h>

#include "shell/commands/builtins.h"

static const struct {
  const char *name;
  unsigned flag;
} opts[] = {
  { "dotglob", SH_DOTGLOB },         { "expand_aliases", SH_EXPAND_ALIASES },
  { "extglob", SH_EXTGLOB },         { "failglob", SH_FAILGLOB },
  { "globstar", SH_GLOBSTAR },       { "inherit_errexit", SH_INHERIT_ERREXIT },
  { "lastpipe", SH_LASTPIPE },       { "nocaseglob", SH_NOCASEGLOB },
  { "nocasematch", SH_NOCASEMATCH }, { "nullglob", SH_NULLGLOB },
};

int box_cmd_shopt(BoxCmd *c)
{
  Shell *sh = c->sh;
  int mode = 0; /* 0 show, 1 set, -1 unset */
  bool quiet = false, print = false;
  int i = 1;
  for (; i < c->argc && c->argv[i][0] == '-' && c->argv[i][1]; i++) {
    for (const char *p = c->argv[i] + 1; *p; p++) {
      if (*p == 's')
        mode = 1;
      else if (*p == 'u')
        mode = -1;
      else if (*p == 'q')
        quiet = true;
      else if (*p == 'p')
        print = true;
      else if (*p == 'o')
        continue;
      else
        return bx_bad_option(c, *p, "shopt: usage: shopt [-pqsu] [-o] [optname ...]");
    }
  }
  int st = 0;
  if (i >= c->argc) {
    for (size_t k = 0; k < G_N_ELEMENTS(opts); k++) {
      bool on = sh->shopts & opts[k].flag;
      if (mode == 1 && !on) continue;
      if (mode == -1 && on) continue;
      if (print)
        box_out_printf(c->out, "shopt %s %s\n", on ? "-s" : "-u", opts[k].name);
      else
        box_out_printf(c->out, "%-15s\t%s\n", opts[k].name, on ? "on" : "off");
    }
    return 0;
  }
  for (; i < c->argc; i++) {
    size_t k = 0;
    for (; k < G_N_ELEMENTS(opts); k++)
      if (strcmp(opts[k].name, c->argv[i]) == 0) break;
    if (k == G_N_ELEMENTS(opts)) {
      box_cmd_error(c, "%s: invalid shell option name", c->argv[i]);
      st = 1;
      continue;
    }
    if (mode == 1)
      sh->shopts |= opts[k].flag;
    else if (mode == -1)
      sh->shopts &= ~opts[k].flag;
    else {
      bool on = sh->shopts & opts[k].flag;
      if (!quiet) {
        if (print)
          box_out_printf(c->out, "shopt %s %s\n", on ? "-s" : "-u", opts[k].name);
        else
          box_out_printf(c->out, "%-15s\t%s\n", opts[k].name, on ? "on" : "off");
      }
      if (!on) st = 1;
    }
  }
  return st;
}

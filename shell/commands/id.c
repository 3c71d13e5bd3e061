/* id.c — GNU id: uid=…(…) gid=…(…) groups=…; -u -g -G -n -r, a user name. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "shell/commands/commands-private.h"

static const char longopts[] = "user=u group=g groups=G name=n real=r zero=z";

static void put_id(BoxCmd *c, unsigned id, bool name, bool user)
{
  if (name) {
    const char *n = user ? bx_user_name(id) : bx_group_name(id);
    if (n) {
      box_out_puts(c->out, n);
      return;
    }
  }
  box_out_printf(c->out, "%u", id);
}

int box_cmd_id(BoxCmd *c)
{
  bool ou = false, og = false, oG = false, name = false, real = false, zero = false;
  bool *const flags[] = { &ou, &og, &oG, &name, &real, &zero };
  BX_EACH_OPTION (ch, c, "id", "ugGnrza", longopts) {
    if (!bx_set_flag(ch, "ugGnrz", flags) && ch != 'a') return 1;
  }
  if (ou + og + oG > 1) {
    bx_usage(c, "id", "cannot print \"only\" of more than one choice");
    return 1;
  }
  if ((name || real) && !(ou || og || oG)) {
    bx_err(c, "id", "cannot print only names or real IDs in default format");
    return 1;
  }
  uid_t uid = real ? getuid() : geteuid();
  gid_t gid = real ? getgid() : getegid();
  gid_t groups[256];
  int ng = 0;
  if (optind < c->argc) {
    struct passwd *pw = getpwnam(c->argv[optind]);
    if (!pw) {
      bx_err_q(c, "id", "%s: no such user", c->argv[optind], 0);
      return 1;
    }
    uid = pw->pw_uid;
    gid = pw->pw_gid;
    ng = 256;
    if (getgrouplist(pw->pw_name, gid, groups, &ng) < 0) ng = 0;
  } else {
    groups[0] = gid;
    int k = getgroups(255, groups + 1);
    ng = 1 + (k > 0 ? k : 0);
    /* drop a duplicate of the primary group */
    for (int i = 1; i < ng; i++)
      if (groups[i] == gid) {
        memmove(groups + i, groups + i + 1, (size_t)(ng - i - 1) * sizeof *groups);
        ng--;
        i--;
      }
  }
  char end = zero ? '\0' : '\n';
  if (ou) {
    put_id(c, uid, name, true);
    box_out_putc(c->out, end);
    return 0;
  }
  if (og) {
    put_id(c, gid, name, false);
    box_out_putc(c->out, end);
    return 0;
  }
  if (oG) {
    for (int i = 0; i < ng; i++) {
      if (i) box_out_putc(c->out, zero ? '\0' : ' ');
      put_id(c, groups[i], name, false);
    }
    box_out_putc(c->out, end);
    return 0;
  }
  const char *un = bx_user_name(uid), *gn = bx_group_name(gid);
  box_out_printf(c->out, "uid=%u", (unsigned)uid);
  if (un) box_out_printf(c->out, "(%s)", un);
  box_out_printf(c->out, " gid=%u", (unsigned)gid);
  if (gn) box_out_printf(c->out, "(%s)", gn);
  box_out_puts(c->out, " groups=");
  for (int i = 0; i < ng; i++) {
    if (i) box_out_putc(c->out, ',');
    box_out_printf(c->out, "%u", (unsigned)groups[i]);
    const char *g = bx_group_name(groups[i]);
    if (g) box_out_printf(c->out, "(%s)", g);
  }
  box_out_putc(c->out, '\n');
  return 0;
}

/* agent.h — the agent in its sandbox, and the filesystem checks of its
 * tables (private to box/). */
#ifndef BOX_AGENT_H
#define BOX_AGENT_H

#include "box/boxd.h"

/* §2.1–§2.2 checks that need the filesystem (after box_dir exists, before
 * the workload), the tools' shared context, and the startup disclosure of
 * §5.7 on stderr.  Fills each table's host_network from box.toml. */
bool box_config_check(Boxd *d, GError **error);

/* Starts the agent through the tools launcher with its own lists; returns
 * the pid of its sandbox's init (a process group leader). */
pid_t box_agent_start(Boxd *d, char **argv, GError **error);

#endif

/* cp-private.h — what the files of libboxcheckpoints share. */
#ifndef BOX_CP_PRIVATE_H
#define BOX_CP_PRIVATE_H

#include <git2.h>
#include "checkpoints/checkpoints.h"

/* The message section listing modes git would not give back. */
#define CP_MODES_HEAD "box-modes:"
/* The first line of the blob that stands for a file kept by hash only. */
#define CP_HASH_ONLY_HEAD "box-checkpoints: kept by hash only\n"

struct BoxCheckpoints {
  git_repository *repo;
  char *workspace;
  BoxCheckpointsLimits limits; /* exclude owned */
  GHashTable *modes;           /* relative path -> mode, as of modes_of */
  char *modes_text;            /* modes rendered, as in modes_of's message */
  git_oid modes_of;
  bool modes_known;
};

/* record.c */
bool cp_git_fail(GError **error, const char *what);
#define cp_excluded(cp, rel, is_dir) box_checkpoints_excluded(&(cp)->limits, (rel), (is_dir))
void cp_modes_parse(const char *message, GHashTable *into);
/* The newest checkpoint (*head NULL when there is none); 0 or a libgit2 code. */
int cp_head(BoxCheckpoints *cp, git_commit **head);

#endif

/* cp-private.h — what the files of libboxcheckpoints share. */
#ifndef BOX_CP_PRIVATE_H
#define BOX_CP_PRIVATE_H

#include <git2.h>
#include "checkpoints/checkpoints.h"

/* The message section listing modes git would not give back. */
#define CP_MODES_HEAD "box-modes:"
/* The first line of the blob that stands for a file kept by hash only. */
#define CP_HASH_ONLY_HEAD "box-checkpoints: kept by hash only\n"

typedef struct CpPack CpPack;

struct BoxCheckpoints {
  git_repository *repo;
  CpPack *pack; /* pack.c's backend, owned by the repository's odb; or NULL */
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

/* pack.c: while a batch is open (begin to end), every object written goes
 * to one new pack; end(keep false) drops it.  0 or -1 (libgit2's error
 * set).  attach adds the backend to cp->repo (false: objects stay loose). */
bool cp_pack_attach(BoxCheckpoints *cp);
bool cp_pack_begin(BoxCheckpoints *cp);
int cp_pack_end(BoxCheckpoints *cp, bool keep);
/* A blob of data: into the batch, unless the repository has it, or loose
 * when no batch is open. */
int cp_pack_blob(BoxCheckpoints *cp, git_oid *out, const void *data, size_t len);

#endif

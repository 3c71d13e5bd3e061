/* sed.h — what sed.c (options, input and the run) and sed_script.c (the
 * script compiler) share: the compiled commands and the run's state. */
#ifndef BOX_SHELL_COMMANDS_SED_H
#define BOX_SHELL_COMMANDS_SED_H

#include <regex.h>

#include "shell/commands/commands-private.h"

typedef enum { A_NONE, A_LINE, A_LAST, A_RE, A_STEP, A_ZERO, A_PLUS, A_MULT } AddrKind;

typedef struct {
  AddrKind kind;
  unsigned long n, step;
  regex_t *re; /* NULL with A_RE: the last regex used */
} Addr;

typedef struct {
  char *name;
  int fd;
} OutFile;

typedef struct {
  Addr a1, a2;
  bool negate;
  char cmd;
  /* s */
  regex_t *re;
  char *rep;
  size_t rep_len;
  bool global, print, eval;
  unsigned long nth;
  int print_count;
  OutFile *wfile;
  /* y */
  unsigned char ymap[256];
  /* a i c text, labels, file names */
  char *text;
  size_t text_len;
  size_t jump; /* b t T: target index; {: index of the matching } */
  int exit_code;
  unsigned long lwidth;
  /* range state */
  bool in_range;
  unsigned long range_end;
} SedCmd;

/* A compiled regex and, when its text is plain (ASCII, no character a
 * regex treats specially, no I flag), that text: memmem then finds what
 * regexec would, for a fraction of the work (s/a/b/g over 100 MB spent
 * two thirds of its time in regexec).  A regex_t* of sed's is a SedRe*. */
typedef struct {
  regex_t re; /* first */
  char *literal;
  size_t literal_len;
} SedRe;

typedef struct {
  BoxCmd *c;
  GArray *cmds;       /* SedCmd */
  GPtrArray *regexes; /* SedRe* to free */
  GPtrArray *files;   /* OutFile* */
  GHashTable *rfiles; /* R: name → BxReader* */
  bool quiet, ere, separate, null_data, in_place, debug;
  const char *suffix;
  unsigned long lwidth;
  /* script parsing */
  const char *src;
  size_t pos, len;
  int expr_no;
  const char *file_name;
  bool error;
  /* running */
  GString *ps, *hs;
  GString *append;   /* text queued for the end of the cycle */
  GPtrArray *rqueue; /* r file names queued */
  regex_t *last_re;
  unsigned long lineno;
  bool replaced, quit;
  int exit_status;
  /* input */
  char **inputs;
  int ninputs, cur;
  int fd;
  BxReader rd;
  bool rd_open;
  bool have_next;
  GString *next;
  bool next_has_nl;
  bool cur_has_nl;
  const char *cur_name;
  BoxOut *out;
  BoxOut file_out;
  int status;
  GString *inplace_buf;
  bool missing_nl;
} Sed;

/* Compiles the scripts (scripts[i] from -f file script_names[i], or from
 * the i-th -e when that is NULL) into s->cmds with the labels resolved;
 * false after sed's message, with s->status the exit status. */
bool bx_sed_compile(Sed *s, GPtrArray *scripts, GPtrArray *script_names);
/* GNU's \xHH, \dNNN, \oNNN and \cX at p[0..n): the byte, with *used the
 * length of the escape; -1 when p begins no such escape */
int bx_sed_num_escape(const char *p, size_t n, size_t *used);

#endif

/* commands-private.h — helpers shared by the commands of shell/commands/
 * (messages.c, options.c, input.c, files.c, values.c, nested.c).
 *
 * Files are opened with open(2) and read with read(2): never stdio on a
 * file (glibc stdio fstat()s, and every stat on the mount is a decision). */
#ifndef BOX_SHELL_COMMANDS_PRIVATE_H
#define BOX_SHELL_COMMANDS_PRIVATE_H

#include <getopt.h>
#include <stdbool.h>
#include <sys/types.h>

#include "shell/shell-private.h"

/* ---- messages.c: quoting, error messages ------------------------------------- */

/* GNU quoting of a file name for a message (C locale): `quotef` leaves a
 * plain name bare, `quoteaf` always quotes.  g_malloc'd. */
char *bx_quote(const char *s);
char *bx_quote_always(const char *s);
/* The text for err (policy text for EACCES when the host has it). */
char *bx_errtext(BoxCmd *c, int err);
/* "cmd: MESSAGE\n" on the command's stderr (stdout flushed first). */
void bx_err(BoxCmd *c, const char *cmd, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
/* "cmd: NAME: TEXT\n", NAME quoted as GNU does, TEXT the policy's message
 * after EACCES (host's last denial) or strerror. */
void bx_ferr(BoxCmd *c, const char *cmd, const char *name, int err);
/* A message about one name, quoted as GNU's quoteaf does, into fmt's one
 * %s: "cmd: MESSAGE: TEXT" (TEXT as bx_errtext gives err; none when err is
 * 0). */
void bx_err_q(BoxCmd *c, const char *cmd, const char *fmt, const char *name, int err);

/* ---- options.c: options, usage errors, operands ------------------------------ */

/* "cmd: MESSAGE\nTry 'cmd --help' for more information.\n" */
void bx_usage(BoxCmd *c, const char *cmd, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
/* bx_usage about one name, quoted into fmt's one %s as bx_err_q does. */
void bx_usage_q(BoxCmd *c, const char *cmd, const char *fmt, const char *name);
/* The option word at c->argv[*i]: NULL at the first operand, or after
 * "--" (with *i stepped past it).  A word is an option when it starts with
 * one of signs and has more after that. */
const char *bx_option_word(BoxCmd *c, int *i, const char *signs);
/* Starts a parse; usage: a line printed before "Try …" after an option
 * error (grep's "Usage: grep [OPTION]... PATTERNS [FILE]..."), or NULL. */
void bx_getopt_start(const char *usage);
/* The same, for diffutils' "cmd: Try 'cmd --help' …" (its line carries the
 * command's name); bx_usage then prints that form too. */
void bx_getopt_start_try_prefixed(void);
/* The parse's usage errors end in line, its "@" the command's name
 * (gzip's "Try `@ --help' for more information.") */
void bx_getopt_start_try(const char *line);
/* getopt_long over c->argv with GNU's error texts printed on c->err; '?'
 * after an error (message printed, caller returns its usage status).
 * optarg/optind as usual.  longspec: the long options, one string of
 * "name=c" (no argument), "name=c:" (an argument), "name=c::" (an optional
 * one) separated by spaces, c the code bx_getopt returns for it (a
 * long-only option takes a code from 1 up, written "\1"…). */
int bx_getopt(BoxCmd *c, const char *cmd, const char *shortopts, const char *longspec);
/* An option that only sets a flag: when ch is one of letters, sets the bool
 * vars gives for it (in the same order) and answers true. */
bool bx_set_flag(int ch, const char *letters, bool *const *vars);
/* A command's option loop: `BX_EACH_OPTION(ch, c, "cmd", "ab:", "all=a")
 * switch (ch) { … }` starts the parse (no usage line) and runs its body
 * once per option, ch in scope of the body only; optind is the first
 * operand after it. */
#define BX_EACH_OPTION(ch, c, cmd, shortopts, longopts)                                            \
  BX_EACH_OPTION_TRY (ch, c, cmd, shortopts, longopts, NULL)
/* The same, the usage errors ending in try (bx_getopt_start_try). */
#define BX_EACH_OPTION_TRY(ch, c, cmd, shortopts, longopts, try)                                   \
  for (int ch = (bx_getopt_start_try(try), 0);                                                     \
       ((ch) = bx_getopt((c), (cmd), (shortopts), (longopts))) != -1;)

/* At most max operands from optind on: else GNU's "extra operand"
 * usage message (naming the first one too many) and false. */
bool bx_operands_at_most(BoxCmd *c, const char *cmd, int max);
/* cp's and mv's operands (n of them at args): GNU's usage message and false
 * when there is none, no destination (no -t), or more than two with -T. */
bool bx_move_operands_ok(BoxCmd *c, const char *cmd, int n, char **args, const char *target_dir,
                         bool no_target);
/* The loop of the commands that make or remove each operand (mkdir,
 * mkfifo): GNU's "missing operand" usage error and 1 when there is none;
 * else each operand from optind on through one, which prints its own
 * error, and 1 when one answered false for any. */
int bx_each_operand(BoxCmd *c, const char *cmd,
                    bool (*one)(BoxCmd *c, const char *name, void *data), void *data);

/* cd.c: the directory change of cd, pushd and popd: dir against the
 * logical cwd, PWD and OLDPWD set; 1 after "strands-shell: cmd: dir: why". */
int bx_chdir(BoxCmd *c, const char *cmd, const char *dir);

/* ---- input.c: inputs --------------------------------------------------------- */

/* The file operands from optind on; "-" (standard input) alone when there
 * are none.  *n: how many. */
char **bx_file_operands(BoxCmd *c, int *n);
/* read(2), again after EINTR. */
ssize_t bx_read(int fd, void *buf, size_t n);
/* "-" is stdin (c->in); else open(O_RDONLY).  -1 with errno. */
int bx_open_in(BoxCmd *c, const char *name);
void bx_close_in(BoxCmd *c, int fd);
/* Reads all of fd into s.  false with errno. */
bool bx_read_all(int fd, GString *s);
/* Reads a whole named input ("-" = stdin); prints the error itself. */
bool bx_slurp(BoxCmd *c, const char *cmd, const char *name, GString *s);
/* The same into a new string; NULL after the message. */
GString *bx_slurp_new(BoxCmd *c, const char *cmd, const char *name);

/* A line reader over a descriptor: lines of any length. */
typedef struct {
  int fd;
  char *buf;
  size_t cap, start, end;
  bool eof;
  int err; /* errno of a failed read, else 0 */
} BxReader;
void bx_reader_init(BxReader *r, int fd);
void bx_reader_free(BxReader *r);
/* Next record ending in delim (delim included when present).  false at
 * end of input or on error (r->err). The pointer is valid until the next call. */
bool bx_reader_next(BxReader *r, char delim, const char **rec, size_t *len);
/* Puts back what r read past its last record, and the last `also` bytes of
 * the records it gave, where the input can seek: the next reader of a
 * shared descriptor starts there, as after GNU's head, grep -m and sed q. */
void bx_reader_give_back(BxReader *r, size_t also);

/* Writes the whole buffer, or stops on error (c->out->error). */
static inline void bx_put(BoxCmd *c, const void *p, size_t n)
{
  box_out_write(c->out, p, n);
}

/* ---- files.c: owners, modes, directories, paths ------------------------------ */

/* The name of a user or group as the user database gives it.  A worker's
 * root holds no /etc/passwd or /etc/group, so there id 0 is still named
 * root, as in any container.  NULL when it has no name. */
const char *bx_user_name(uid_t uid);
const char *bx_group_name(gid_t gid);
/* An octal or symbolic (chmod) mode applied to cur.  false when invalid. */
bool bx_parse_mode(const char *s, mode_t cur, bool is_dir, mode_t *out);
/* GNU's name for a file's type: "regular file", "directory", "fifo"…,
 * "weird file" for none it knows. */
const char *bx_file_type_name(mode_t m);
/* ls -l's "drwxr-xr-x" (10 characters + NUL). */
void bx_mode_string(mode_t m, char out[11]);
/* A directory's entries without "." and "..", in the order the directory
 * gives them: open(O_DIRECTORY) + getdents64, so no stat (glibc's opendir
 * fstat()s the descriptor, and a stat on the mount is a decision).  NULL
 * with *err set on failure.  Free with bx_dir_free. */
typedef struct {
  char *name;
  unsigned long long ino;
  unsigned char type; /* DT_* */
} BxDirEnt;
GArray *bx_list_dir(const char *path, int *err);
/* bx_list_dir that also has the directory's leading regular files (up to
 * open_first, up to its first entry of another type) decided and opened
 * for reading on the fast path, for a walk that reads them next, spelled
 * prefix/name ("" for the bare name); *opened: how many were asked for
 * (0 when the listing went through the mount). */
GArray *bx_list_dir_opening(const char *path, const char *prefix, guint open_first, guint *opened,
                            int *err);
void bx_dir_free(GArray *v);
/* a/b joined with one '/'. g_malloc'd. */
char *bx_path_join(const char *dir, const char *name);
/* path as seen from the directory base (both absolute and canonical):
 * realpath --relative-to's answer, "." for base itself.  g_malloc'd. */
char *bx_relative_path(const char *path, const char *base);
/* readlink -f (mode 0: all but the last must exist), -e (1: all), -m (2:
 * none): the absolute path with links resolved by readlink(2) (never stat).
 * NULL with *err set. */
char *bx_canonicalize(const char *path, int mode, int *err);

/* ---- values.c: sizes, escapes, dates ----------------------------------------- */

/* Parses a non-negative decimal with an optional GNU size suffix
 * (b, K, KB, KiB, M, …) as head/tail/split accept.  false when invalid. */
bool bx_parse_size(const char *s, unsigned long long *out);
/* GNU -h sizes: 1023, 1.0K, 9.9K, 10K (rounded up); si: powers of 1000. */
void bx_human_size(unsigned long long n, bool si, char *buf, size_t cap);
/* The byte a backslash escape's letter stands for ('n' newline, 'e' and 'E'
 * ESC, '0' NUL, '\\', '\'', '"', '?' themselves…) when accepted holds the
 * letter (each command takes its own set); -1 otherwise. */
int bx_escape_byte(char letter, const char *accepted);
/* The other way, as od -c and sed's l show a byte: "\\n" for a newline…,
 * for \a \b \f \n \r \t \v; NULL for any other. */
const char *bx_escape_name(unsigned char ch);
/* A date as GNU date -d / touch -d read it (the common forms: @N, ISO
 * dates and times with zones, now/today/yesterday/tomorrow, N units [ago],
 * next/last unit).  false when not understood. */
struct timespec;
bool bx_parse_date(const char *s, bool utc, struct timespec *out);

/* ---- nested.c: shell text through the decision point (find -exec, xargs) ----- */

/* Quotes one word for shell text (single quotes as needed). g_malloc'd. */
char *bx_shell_quote(const char *s);
/* Runs argv (NULL-terminated) as one simple command through the Shell's
 * decision point (box_run_argv), so it gets its own shell:exec /
 * shell:spawn decision.  Flushes c->out first.  Returns its status. */
int bx_run_argv(BoxCmd *c, char **argv, int argc, int in, int out, int err);

#endif

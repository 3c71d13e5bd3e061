/* jq.c — jq through the real libjq (jq 1.6's language, formatting, messages
 * and exit statuses).  Inputs are read with open(2)/read(2) and fed to the
 * jv parser line by line (so error positions count lines as jq does); never
 * stdio on a file (its fstat would be a decision). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <jq.h>
#include <jv.h>

#include "shell/commands/commands-private.h"

enum {
  O_RAW = 1,
  O_JOIN = 2,
  O_NULL = 4,
  O_SLURP = 8,
  O_EXIT = 16,
  O_RAWIN = 32,
  O_SEQ = 64,
  O_ASCII = 128,
};

typedef struct {
  BoxCmd *c;
  GPtrArray *files;  /* names; empty = stdin */
  guint fi;          /* next file to open */
  int fd;            /* current input, -1 none */
  const char *fname; /* current name for positions (NULL: none yet) */
  unsigned long line;
  char *buf;
  size_t len, pos;
  bool eof_all, final_fed;
  jv_parser *parser;
  unsigned opts;
  GString *rawline;
  int open_errors;
  bool parse_error;
} JqIn;

/* The next piece of input text (up to and including a newline).  false at
 * the end of all inputs. */
static bool next_piece(JqIn *in, const char **p, size_t *n)
{
  for (;;) {
    if (in->pos < in->len) {
      const char *s = in->buf + in->pos;
      const char *nl = memchr(s, '\n', in->len - in->pos);
      size_t k = nl ? (size_t)(nl - s) + 1 : in->len - in->pos;
      in->pos += k;
      if (nl) in->line++;
      *p = s;
      *n = k;
      return true;
    }
    if (in->fd >= 0) {
      ssize_t r = bx_read(in->fd, in->buf, 65536);
      if (r > 0) {
        in->len = (size_t)r;
        in->pos = 0;
        continue;
      }
      if (r < 0) {
        g_autofree char *q = bx_quote(in->fname);
        g_autofree char *t = bx_errtext(in->c, errno);
        box_out_flush(in->c->out);
        box_fdprintf(in->c->err, "jq: error: %s: %s\n", q, t);
        in->open_errors++;
      }
      bx_close_in(in->c, in->fd);
      in->fd = -1;
      in->len = in->pos = 0;
      continue;
    }
    if (in->fi >= MAX(in->files->len, 1)) return false;
    const char *name = in->files->len ? in->files->pdata[in->fi] : "-";
    in->fi++;
    bool is_stdin = in->files->len == 0;
    int fd = is_stdin ? in->c->in : box_open_file(name, O_RDONLY);
    if (fd < 0) {
      g_autofree char *t = bx_errtext(in->c, is_stdin ? EBADF : errno);
      box_out_flush(in->c->out);
      box_fdprintf(in->c->err, "jq: error: Could not open file %s: %s\n", name, t);
      in->open_errors++;
      continue;
    }
    in->fd = is_stdin ? dup(fd) : fd;
    in->fname = is_stdin ? "<stdin>" : name;
    in->line = 0;
  }
}

/* The next input value: valid, invalid (end), or invalid with a message
 * (a parse error). */
static jv next_value(JqIn *in)
{
  if (in->opts & O_RAWIN) {
    for (;;) {
      const char *p;
      size_t n;
      if (!next_piece(in, &p, &n)) {
        if (in->rawline->len > 0) {
          jv v = jv_string_sized(in->rawline->str, (int)in->rawline->len);
          g_string_truncate(in->rawline, 0);
          return v;
        }
        return jv_invalid();
      }
      if (n > 0 && p[n - 1] == '\n') {
        jv v;
        if (in->rawline->len) {
          g_string_append_len(in->rawline, p, (gssize)n - 1);
          v = jv_string_sized(in->rawline->str, (int)in->rawline->len);
          g_string_truncate(in->rawline, 0);
        } else {
          v = jv_string_sized(p, (int)n - 1);
        }
        return v;
      }
      g_string_append_len(in->rawline, p, (gssize)n);
    }
  }
  for (;;) {
    jv v = jv_parser_next(in->parser);
    if (jv_is_valid(v) || jv_invalid_has_msg(jv_copy(v))) return v;
    jv_free(v);
    if (in->final_fed) return jv_invalid();
    const char *p;
    size_t n;
    if (next_piece(in, &p, &n)) {
      jv_parser_set_buf(in->parser, p, (int)n, 1);
    } else {
      jv_parser_set_buf(in->parser, "", 0, 0);
      in->final_fed = true;
    }
  }
}

/* --arg, --argjson, --slurpfile, --rawfile: the first value given a name
 * keeps it, as in jq 1.6; a later one is dropped. */
static jv bind_named(jv named, const char *name, jv v)
{
  if (jv_object_has(jv_copy(named), jv_string(name))) {
    jv_free(v);
    return named;
  }
  return jv_object_set(named, jv_string(name), v);
}

/* Takes next_value's invalid v: true, after jq's message, when it was a
 * parse error rather than the end of the input. */
static bool parse_error(BoxCmd *c, jv v)
{
  if (!jv_invalid_has_msg(jv_copy(v))) {
    jv_free(v);
    return false;
  }
  jv m = jv_invalid_get_msg(v);
  box_out_flush(c->out);
  box_fdprintf(c->err, "parse error: %s\n", jv_string_value(m));
  jv_free(m);
  return true;
}

/* Raw slurp: every input concatenated into one string. */
static jv slurp_raw(JqIn *in)
{
  GString *s = g_string_new(NULL);
  const char *p;
  size_t n;
  while (next_piece(in, &p, &n)) g_string_append_len(s, p, (gssize)n);
  jv v = jv_string_sized(s->str, (int)s->len);
  g_string_free(s, TRUE);
  return v;
}

typedef struct {
  JqIn *in;
  bool used; /* the input callback gave something (-n + input) */
} CbState;

static jv input_cb(jq_state *jq, void *data)
{
  (void)jq;
  CbState *st = data;
  if (!st->in) return jv_invalid();
  /* a parse error becomes an error of the program (input? catches it) */
  return next_value(st->in);
}

static void err_cb(void *data, jv msg)
{
  BoxCmd *c = data;
  msg = jq_format_error(msg);
  box_out_flush(c->out);
  box_fdprintf(c->err, "%s\n", jv_string_value(msg));
  jv_free(msg);
}

static void debug_cb(void *data, jv msg)
{
  BoxCmd *c = data;
  jv s = jv_dump_string(JV_ARRAY(jv_string("DEBUG:"), msg), 0);
  box_out_flush(c->out);
  box_fdprintf(c->err, "%s\n", jv_string_value(s));
  jv_free(s);
}

static char *position(JqIn *in)
{
  if (!in || !in->fname) return g_strdup("<unknown>");
  return g_strdup_printf("%s:%lu", in->fname, in->line);
}

/* Runs the program on one value; jq's process(): 0 ok, 5 error, 11 last
 * output false/null, 14 no output; halt sets *exact. */
static int process(BoxCmd *c, jq_state *jq, jv value, unsigned opts, int dumpopts, JqIn *in,
                   bool *exact)
{
  int ret = 14;
  jq_start(jq, value, 0);
  jv r;
  while (jv_is_valid(r = jq_next(jq))) {
    if ((opts & O_RAW) && jv_get_kind(r) == JV_KIND_STRING) {
      if (opts & O_ASCII) {
        jv s = jv_dump_string(jv_copy(r), JV_PRINT_ASCII);
        box_out_puts(c->out, jv_string_value(s));
        jv_free(s);
      } else {
        box_out_write(c->out, jv_string_value(r), (size_t)jv_string_length_bytes(jv_copy(r)));
      }
      ret = 0;
      jv_free(r);
    } else {
      jv_kind k = jv_get_kind(r);
      ret = (k == JV_KIND_FALSE || k == JV_KIND_NULL) ? 11 : 0;
      if (opts & O_SEQ) box_out_putc(c->out, '\036');
      jv s = jv_dump_string(r, dumpopts);
      box_out_write(c->out, jv_string_value(s), (size_t)jv_string_length_bytes(jv_copy(s)));
      jv_free(s);
    }
    if (!(opts & O_JOIN)) box_out_putc(c->out, '\n');
    if (c->out->error) {
      r = jv_invalid(); /* the output is gone; r was spent above */
      break;
    }
  }
  if (jq_halted(jq)) {
    *exact = true;
    jv code = jq_get_exit_code(jq);
    if (!jv_is_valid(code))
      ret = 0;
    else if (jv_get_kind(code) == JV_KIND_NUMBER)
      ret = (int)jv_number_value(code);
    else
      ret = 5;
    jv_free(code);
    jv m = jq_get_error_message(jq);
    box_out_flush(c->out);
    if (jv_get_kind(m) == JV_KIND_STRING) {
      box_write_all(c->err, jv_string_value(m), (size_t)jv_string_length_bytes(jv_copy(m)));
    } else if (jv_get_kind(m) != JV_KIND_NULL && jv_is_valid(m)) {
      jv s = jv_dump_string(jv_copy(m), 0);
      box_fdprintf(c->err, "%s\n", jv_string_value(s));
      jv_free(s);
    }
    jv_free(m);
  } else if (jv_invalid_has_msg(jv_copy(r))) {
    jv m = jv_invalid_get_msg(jv_copy(r));
    char *pos = position(in);
    box_out_flush(c->out);
    if (jv_get_kind(m) == JV_KIND_STRING) {
      box_fdprintf(c->err, "jq: error (at %s): %s\n", pos, jv_string_value(m));
    } else {
      m = jv_dump_string(m, 0);
      box_fdprintf(c->err, "jq: error (at %s) (not a string): %s\n", pos, jv_string_value(m));
    }
    g_free(pos);
    jv_free(m);
    ret = 5;
  }
  jv_free(r);
  return ret;
}

static int die_usage(BoxCmd *c, const char *fmt, const char *arg)
{
  box_out_flush(c->out);
  box_fdprintf(c->err, fmt, arg);
  box_fdprintf(c->err, "Use jq --help for help with command-line options,\n"
                       "or see the jq manpage, or online docs  at https://stedolan.github.io/jq\n");
  return 2;
}

/* Whole file contents (for -f, --slurpfile, --rawfile). */
static bool load_file(BoxCmd *c, const char *name, GString *s)
{
  int fd = box_open_file(name, O_RDONLY);
  if (fd < 0) return false;
  (void)c;
  bool ok = bx_read_all(fd, s);
  int e = errno;
  close(fd);
  errno = e;
  return ok;
}

/* isoption: long name or a short letter within a cluster of short options. */
static bool isopt(const char *text, char shortopt, const char *longopt, int *nshort)
{
  if (text[0] != '-' || text[1] == '-') *nshort = 0;
  if (text[0] != '-') return false;
  if (text[1] == '-' && longopt && strcmp(text + 2, longopt) == 0) return true;
  if (text[1] == '-') return false;
  if (shortopt && strchr(text + 1, shortopt)) {
    (*nshort)++;
    return true;
  }
  return false;
}

/* --slurpfile's values (all of the file's JSON texts in an array) or
 * --rawfile's string; invalid, with the message, when it cannot be read. */
static jv load_named_file(BoxCmd *c, const char *path, bool raw)
{
  GString *s = g_string_new(NULL);
  jv data;
  if (!load_file(c, path, s)) {
    g_autofree char *t = bx_errtext(c, errno);
    data = jv_invalid_with_msg(jv_string_fmt("Could not open %s: %s", path, t));
  } else if (raw) {
    data = jv_string_sized(s->str, (int)s->len);
  } else {
    jv_parser *p = jv_parser_new(0);
    jv_parser_set_buf(p, s->str, (int)s->len, 0);
    data = jv_array();
    jv v;
    while (jv_is_valid(v = jv_parser_next(p))) data = jv_array_append(data, v);
    if (jv_invalid_has_msg(jv_copy(v))) {
      jv_free(data);
      data = v;
    } else
      jv_free(v);
    jv_parser_free(p);
  }
  g_string_free(s, TRUE);
  return data;
}

/* The program over the inputs: once on null with -n, once on all of them
 * with -s, else once per value.  Returns process()'s code of the last run
 * (14 when none ran), 4 after a parse error; *exact when halt stopped it. */
static int run_inputs(BoxCmd *c, jq_state *jq, unsigned opts, int dumpopts, JqIn *in, bool *exact)
{
  int r = 14;
  if (opts & O_NULL) {
    r = process(c, jq, jv_null(), opts, dumpopts, in, exact);
  } else if (opts & O_SLURP) {
    jv all;
    if (opts & O_RAWIN) {
      all = slurp_raw(in);
    } else {
      all = jv_array();
      for (;;) {
        jv v = next_value(in);
        if (jv_is_valid(v)) {
          all = jv_array_append(all, v);
          continue;
        }
        if (parse_error(c, v)) {
          jv_free(all);
          all = jv_invalid();
          r = 4;
        }
        break;
      }
    }
    if (jv_is_valid(all))
      r = process(c, jq, all, opts, dumpopts, in, exact);
    else
      jv_free(all);
  } else {
    for (;;) {
      jv v = next_value(in);
      if (jv_is_valid(v)) {
        r = process(c, jq, v, opts, dumpopts, in, exact);
        if (*exact) break;
        continue;
      }
      if (parse_error(c, v)) r = 4; /* jq 1.6's status after a parse error */
      break;
    }
  }
  return r;
}

int box_cmd_jq(BoxCmd *c)
{
  unsigned opts = 0;
  int dumpopts = JV_PRINT_INDENT_FLAGS(2);
  const char *program = NULL;
  bool from_file = false;
  GPtrArray *files = g_ptr_array_new();
  jv named = jv_object();
  jv positional = jv_array();
  int ret = 0;
  bool args_done = false, args_strings = false, args_json = false;
  jq_state *jq = NULL;
  JqIn in = { 0 };
  in.fd = -1;

  for (int i = 1; i < c->argc; i++) {
    const char *text = c->argv[i];
    int ns = 0;
    if (args_done || text[0] != '-' || text[1] == 0) {
      if (!program && !(args_done && false)) {
        if (text[0] == '-' && text[1] == 0 && !program) { /* "-" as program? jq treats it as text */
        }
        program = text;
        continue;
      }
      if (args_strings)
        positional = jv_array_append(positional, jv_string(text));
      else if (args_json) {
        jv v = jv_parse(text);
        if (!jv_is_valid(v)) {
          jv_free(v);
          ret = die_usage(c, "jq: invalid JSON text passed to --jsonargs\n", NULL);
          goto out;
        }
        positional = jv_array_append(positional, v);
      } else
        g_ptr_array_add(files, (gpointer)text);
      continue;
    }
    if (strcmp(text, "--") == 0) {
      if (!program) { /* jq 1.6: -- ends options; the next word is still the program */
      }
      args_done = true;
      continue;
    }
    if (text[1] == 'L') { /* -L dir: library path; accepted and ignored */
      if (text[2] == 0) i++;
      continue;
    }
    bool matched = false;
#define OPT(s, l) (isopt(text, s, l, &ns) && (matched = true))
    if (OPT('s', "slurp")) opts |= O_SLURP;
    if (OPT('r', "raw-output")) opts |= O_RAW;
    if (OPT('c', "compact-output")) dumpopts &= ~(JV_PRINT_TAB | JV_PRINT_INDENT_FLAGS(7));
    if (OPT('C', "color-output")) dumpopts |= JV_PRINT_COLOR;
    if (OPT('M', "monochrome-output")) dumpopts &= ~JV_PRINT_COLOR;
    if (OPT('a', "ascii-output")) {
      opts |= O_ASCII;
      dumpopts |= JV_PRINT_ASCII;
    }
    if (OPT(0, "unbuffered")) {}
    if (OPT('S', "sort-keys")) dumpopts |= JV_PRINT_SORTED;
    if (OPT('R', "raw-input")) opts |= O_RAWIN;
    if (OPT('n', "null-input")) opts |= O_NULL;
    if (OPT('f', "from-file")) from_file = true;
    if (OPT('j', "join-output")) opts |= O_RAW | O_JOIN;
    if (OPT(0, "tab")) {
      dumpopts &= ~JV_PRINT_INDENT_FLAGS(7);
      dumpopts |= JV_PRINT_TAB | JV_PRINT_PRETTY;
    }
    if (OPT(0, "seq")) opts |= O_SEQ;
    if (OPT(0, "stream")) {
      ret = die_usage(c, "jq: --stream is not supported by the Shell's jq\n", NULL);
      goto out;
    }
    if (OPT('e', "exit-status")) opts |= O_EXIT;
    if (OPT(0, "args")) {
      args_strings = true;
      args_json = false;
    }
    if (OPT(0, "jsonargs")) {
      args_json = true;
      args_strings = false;
    }
    if (OPT(0, "indent")) {
      if (i + 1 >= c->argc) {
        ret = die_usage(c, "jq: --indent takes one parameter\n", NULL);
        goto out;
      }
      dumpopts &= ~(JV_PRINT_TAB | JV_PRINT_INDENT_FLAGS(7));
      char *end;
      long n = strtol(c->argv[i + 1], &end, 10);
      if (*end || n < -1) {
        ret = die_usage(c, "jq: Cannot indent more than 7 characters\n", NULL);
        goto out;
      }
      if (n > 7) {
        ret = die_usage(c, "jq: Cannot indent more than 7 characters\n", NULL);
        goto out;
      }
      dumpopts |= JV_PRINT_INDENT_FLAGS((int)n);
      i++;
    }
    if (OPT(0, "arg")) {
      if (i + 2 >= c->argc) {
        ret = die_usage(c, "jq: --arg takes two parameters (e.g. --arg varname value)\n", NULL);
        goto out;
      }
      named = bind_named(named, c->argv[i + 1], jv_string(c->argv[i + 2]));
      i += 2;
    }
    if (OPT(0, "argjson")) {
      if (i + 2 >= c->argc) {
        ret =
          die_usage(c, "jq: --argjson takes two parameters (e.g. --argjson varname text)\n", NULL);
        goto out;
      }
      jv v = jv_parse(c->argv[i + 2]);
      if (!jv_is_valid(v)) {
        jv_free(v);
        ret = die_usage(c, "jq: invalid JSON text passed to --argjson\n", NULL);
        goto out;
      }
      named = bind_named(named, c->argv[i + 1], v);
      i += 2;
    }
    bool raw_file = false;
    if (OPT(0, "slurpfile") || (raw_file = OPT(0, "rawfile"))) {
      const char *which = raw_file ? "rawfile" : "slurpfile";
      if (i + 2 >= c->argc) {
        box_out_flush(c->out);
        box_fdprintf(c->err, "jq: --%s takes two parameters (e.g. --%s varname filename)\n", which,
                     which);
        ret = die_usage(c, "%s", "");
        goto out;
      }
      jv data = load_named_file(c, c->argv[i + 2], raw_file);
      if (!jv_is_valid(data)) {
        jv m = jv_invalid_get_msg(data);
        box_out_flush(c->out);
        box_fdprintf(c->err, "jq: Bad JSON in --%s %s %s: %s\n", which, c->argv[i + 1],
                     c->argv[i + 2], jv_string_value(m));
        jv_free(m);
        ret = 2;
        goto out;
      }
      named = bind_named(named, c->argv[i + 1], data);
      i += 2;
    }
    if (OPT('h', "help")) {
      box_out_puts(c->out, "Usage:\tjq [OPTIONS] FILTER [FILES...]\n");
      ret = 0;
      goto out;
    }
    if (OPT('V', "version")) {
      box_out_puts(c->out, "jq-1.6\n");
      ret = 0;
      goto out;
    }
#undef OPT
    if (text[1] != '-' && (size_t)ns == strlen(text) - 1) continue;
    if (!matched || (text[1] != '-' && (size_t)ns != strlen(text) - 1)) {
      char *m = g_strdup_printf("jq: Unknown option %s\n", text);
      ret = die_usage(c, "%s", m);
      g_free(m);
      goto out;
    }
  }

  if (!program) program = ".";
  GString *prog_text = NULL;
  if (from_file) {
    prog_text = g_string_new(NULL);
    if (!load_file(c, program, prog_text)) {
      g_autofree char *t = bx_errtext(c, errno);
      box_out_flush(c->out);
      box_fdprintf(c->err, "jq: error: Could not open %s: %s\n", program, t);
      g_string_free(prog_text, TRUE);
      ret = 2;
      goto out;
    }
    /* with -f the first non-option word is the file; the rest are inputs */
  }

  jq = jq_init();
  jq_set_error_cb(jq, err_cb, c);
  jq_set_debug_cb(jq, debug_cb, c);
  jq_set_attr(jq, jv_string("JQ_ORIGIN"), jv_string("/usr/bin"));
  jq_set_attr(
    jq, jv_string("JQ_LIBRARY_PATH"),
    JV_ARRAY(jv_string("~/.jq"), jv_string("$ORIGIN/../lib/jq"), jv_string("$ORIGIN/../lib")));
  jq_set_attr(jq, jv_string("PROGRAM_ORIGIN"), jv_string("."));
  jv args_obj =
    JV_OBJECT(jv_string("positional"), jv_copy(positional), jv_string("named"), jv_copy(named));
  jv prog_args = jv_object_set(jv_copy(named), jv_string("ARGS"), args_obj);
  const char *ptext = prog_text ? prog_text->str : program;
  if (ptext[0] == '#' && ptext[1] == '!') {
    const char *nl = strchr(ptext, '\n');
    ptext = nl ? nl + 1 : "";
  }
  int compiled = jq_compile_args(jq, ptext, prog_args);
  if (prog_text) g_string_free(prog_text, TRUE);
  if (!compiled) {
    ret = 3;
    goto out;
  }

  in.c = c;
  in.files = files;
  in.buf = g_malloc(65536);
  in.opts = opts;
  in.rawline = g_string_new(NULL);
  in.parser = jv_parser_new(0);
  CbState cb = { &in, false };
  jq_set_input_cb(jq, input_cb, &cb);

  bool exact = false;
  int r = run_inputs(c, jq, opts, dumpopts, &in, &exact);
  box_out_flush(c->out);
  if (in.open_errors && !exact) r = 2;
  if (exact)
    ret = r;
  else if (r >= 10 && (opts & O_EXIT))
    ret = r - 10;
  else if (r >= 10)
    ret = 0;
  else
    ret = r;
  if (c->out->error && !(c->out->err == EPIPE && box_pipe_broke)) {
    box_fdprintf(c->err, "Error: writing output failed: %s\n", box_strerror(c->out->err));
    ret = 2;
  }

out:
  if (in.parser) jv_parser_free(in.parser);
  if (in.fd >= 0) bx_close_in(c, in.fd);
  g_free(in.buf);
  if (in.rawline) g_string_free(in.rawline, TRUE);
  if (jq) jq_teardown(&jq);
  jv_free(named);
  jv_free(positional);
  g_ptr_array_free(files, TRUE);
  return ret;
}

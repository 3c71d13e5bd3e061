/* python/boxpython.h — public interface of the embedded CPython (the
 * boxpython module, a shared object linked against libpython3.11).
 *
 * box-shell does not link libpython: it dlopens this module on the first
 * `python3` and looks up box_python_main (BOX_PYTHON_MAIN_SYMBOL). */
#ifndef BOX_PYTHON_H
#define BOX_PYTHON_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the embedding needs from the program that runs it. */
typedef struct {
  /* A descriptor of the host's standard library directory
   * (/usr/lib/python3.11), or -1.  With one, the standard library (and
   * lib-dynload's extensions) is imported through it, never by path: the
   * interpreter may run where that path does not exist (rooted in a box's
   * mount).  Modules still report their native paths (__file__,
   * sys.path), and every other import and file goes by path as usual. */
  int stdlib_dir;
  /* Likewise for Debian's site directory (/usr/lib/python3/dist-packages),
   * or -1. */
  int dist_dir;
  /* Loads the shared object file of directory dir (a descriptor) with
   * everything it needs, so that a later dlopen of "./FILE" finds it
   * loaded.  Returns NULL, or why it failed (malloc'd).  NULL: extensions
   * load by path. */
  char *(*load_library)(void *data, int dir, const char *file);
  /* Runs text through the Shell's decision point on fds 0, 1, 2 of the
   * calling process, a child forked for this purpose that ends right after
   * with the returned status (0..255).  subprocess, os.system and os.popen
   * start their commands through it: a list of arguments is quoted into
   * one command, `shell=True` text is the Shell's text.  NULL: they fail as
   * exec does in the box. */
  int (*shell_run)(void *data, const char *text);
  /* The policy text of the calling thread's last refused file operation
   * (malloc'd), or NULL.  A PermissionError for EACCES carries it as its
   * strerror.  May be NULL. */
  char *(*last_denial)(void *data);
  /* Opens path (flags: read-only) through the Shell's fast path (boxd
   * decides and opens a regular file of the workspace and hands its
   * descriptor over: the mount's decision, logged alike, without the
   * mount's round trips): a descriptor, or -1 with errno and, for EACCES,
   * *denial the policy's text (malloc'd), or -2 when the fast path does not
   * take it (open it by path).  Called with any thread; may be NULL. */
  int (*open_read)(void *data, const char *path, int flags, char **denial);
  /* The egress gateway's CA (PEM), or NULL: with one, a TLS context's
   * default roots are that CA alone (the gateway answers every HTTPS
   * request the proxy variables send it with a leaf of its own). */
  const char *gateway_ca;
  /* The path the program was run as, made absolute (a virtualenv's
   * bin/python), for sys.executable: site finds the venv's pyvenv.cfg
   * beside it.  NULL: /usr/bin/python3. */
  const char *executable;
  /* The interpreter runs where /usr holds nothing but the time zones (a
   * box's RAM root, which no bound root lies under and where nothing can
   * be made): site's looks there for a pyvenv.cfg beside /usr/bin/python3
   * and for the three site-packages would all find nothing, and are not
   * made.  Taken by box_python_warm, for every command after. */
  bool usr_bare;
  void *data;
} BoxPythonHost;

/* The `python3` command: CPython 3.11's own command line (-c, -m, SCRIPT,
 * `-`, stdin, -u -I -E -B -W -X -S …, --version) and behaviour, with
 * sys.executable /usr/bin/python3.  Output goes through the process's
 * descriptors 0, 1, 2.  Returns the exit status; the interpreter is
 * finalized, so a process calls it once.  host may be NULL. */
int box_python_main(int argc, char **argv, const BoxPythonHost *host);

/* Initializes an interpreter now, in a process that forks the ones that
 * will call box_python_main: each of them then starts from it (its
 * site, os, json, re, pathlib and collections loaded) rather than from
 * nothing.  host (with stdlib_dir, kept for the process's life) is the
 * one the warm-up's imports go through; each command's replaces it.
 * False if it could not be done (box_python_main then starts a fresh
 * one, as without). */
bool box_python_warm(const BoxPythonHost *host);

#define BOX_PYTHON_MAIN_SYMBOL "box_python_main"
#define BOX_PYTHON_WARM_SYMBOL "box_python_warm"
typedef bool BoxPythonWarm(const BoxPythonHost *host);
typedef int BoxPythonMain(int argc, char **argv, const BoxPythonHost *host);

#ifdef __cplusplus
}
#endif

#endif /* BOX_PYTHON_H */

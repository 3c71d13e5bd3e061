/* python-private.h — shared by the files of python/ (not installed). */
#ifndef BOX_PYTHON_PRIVATE_H
#define BOX_PYTHON_PRIVATE_H

#define PY_SSIZE_T_CLEAN 1
#include <Python.h>
#include <stdbool.h>

#include "python/boxpython.h"

/* The native spelling of the directories the host hands over. */
#define BOX_PYTHON_STDLIB "/usr/lib/python3.11"
#define BOX_PYTHON_DIST "/usr/lib/python3/dist-packages"

/* errnomap.c: OSError(err, …) is created as type from now on. */
bool box_python_map_errno(int err, PyObject *type);

/* importer.c: the `_boxpython` module, registered before the interpreter
 * starts (host kept for its functions). */
void box_python_register(const BoxPythonHost *host);
/* Between the core and the main phase of initialization: imports of the
 * host's directories go through their descriptors from here on, and a
 * refused file operation raises the policy's text.  False with a Python
 * exception set. */
bool box_python_install(void);
/* After the main phase (os and io exist only now): subprocess and
 * os.system through the host, the standard library's source for
 * tracebacks.  False with a Python exception set. */
bool box_python_after_main(void);

/* importer.c: the host's functions are h's from now on (a warm
 * interpreter's command brings its own). */
void box_python_rehost(const BoxPythonHost *h);

/* tty.c: libpython's isatty answers from the file's type where it can,
 * without an ioctl (a request to the mount per open()).  Idempotent. */
void box_python_bind_isatty(void);

/* cli.c: CPython's exit or error status (printed as python3 prints it). */
int box_python_status_exit(PyStatus st);
/* cli.c: where the interpreter lives (/usr/bin/python3); with fixed_paths
 * sys.path too, for the standard library through the host's descriptors. */
PyStatus box_python_set_locations(PyConfig *c, bool fixed_paths);

/* warm.c: whether this process holds a warm interpreter (box_python_warm),
 * and a command run on it, in a child forked since (falls back to a fresh
 * interpreter when the command's start-up would differ). */
bool box_python_is_warm(void);
int box_python_warm_main(int argc, char **argv, const BoxPythonHost *host);

/* end.c: how a class statement's instances end, learnt from one
 * (plain_class) on the warm interpreter. */
void box_python_end_learn(PyObject *plain_class);
/* end.c: `-c TEXT` (config's run_command) as Py_RunMain runs it, ended
 * without the teardown when that shows nothing; the exit status. */
int box_python_run_command(const PyConfig *config, PyObject *helpers);

#endif

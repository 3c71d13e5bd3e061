/* errnomap.c — the one reach into CPython's internals, in a file of its
 * own because it needs Py_BUILD_CORE (set before Python.h, or the internal
 * headers redefine its macros).
 *
 * OSError(errno, …) picks its subclass from a per-interpreter table that
 * no public API or Python code can reach; pointing EACCES at a subclass
 * there is the only way every refusal that C code raises (open, stat,
 * listdir, rename… in every module) carries the policy's text. */
#define Py_BUILD_CORE 1
#define PY_SSIZE_T_CLEAN 1
#include <Python.h>

#include "internal/pycore_interp.h"

#include "python/python-private.h"

bool box_python_map_errno(int err, PyObject *type)
{
  PyObject *map = PyInterpreterState_Get()->exc_state.errnomap;
  if (!map) return false;
  PyObject *key = PyLong_FromLong(err);
  if (!key) return false;
  int r = PyDict_SetItem(map, key, type);
  Py_DECREF(key);
  return r == 0;
}

/* end.c — `python3 -c TEXT` on the warm interpreter, as Py_RunMain runs
 * it, with one difference: the end.
 *
 * Py_FinalizeEx, after the threads' shutdown, the atexit handlers and the
 * flush of sys.stdout and sys.stderr, tears down every module and object.
 * On a warm interpreter most of them are the zygote's: each page the
 * teardown writes (a reference count) is copied first, which made the end
 * about a third of a print(1)'s time in the box.  When nothing of what the
 * teardown would still do can be seen — only this thread left, no object
 * of the command's whose end runs code or frees more than memory (a
 * finalizer, a weak reference's callback, a file's buffer, a generator's
 * `finally`), no module imported but Python source — the command ends
 * after the flush, as the process's exit frees the memory anyway.
 * Anything else ends through Py_FinalizeEx as before. */
#include "python/python-private.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* pythonrun.c's: set when the text ended by an uncaught KeyboardInterrupt */
extern int _Py_UnhandledKeyboardInterrupt;
/* pythonrun.c's (exported, in no public header): SystemExit's status */
extern int _Py_HandleSystemExit(int *exitcode_p);

/* How an instance of a class statement's class ends (subtype_dealloc). */
static destructor class_dealloc;

/* Whether the program added an audit hook: the teardown calls it (for
 * cpython._PySys_ClearAuditHooks). */
static bool program_hooks;

static int note_hooks(const char *event, PyObject *args, void *data)
{
  (void)args, (void)data;
  if (event[0] == 's' && strcmp(event, "sys.addaudithook") == 0) program_hooks = true;
  return 0;
}

void box_python_end_learn(PyObject *plain_class)
{
  if (!plain_class || !PyType_Check(plain_class) || PySys_AddAuditHook(note_hooks, NULL) != 0) {
    PyErr_Clear();
    return;
  }
  class_dealloc = ((PyTypeObject *)plain_class)->tp_dealloc;
}

/* Types whose instances' end frees memory and other objects, nothing
 * else. */
static bool plain_type(PyTypeObject *t)
{
  static PyTypeObject *const plain[] = {
    &PyDict_Type,
    &PyList_Type,
    &PyTuple_Type,
    &PySet_Type,
    &PyFrozenSet_Type,
    &PyFunction_Type,
    &PyCell_Type,
    &PyMethod_Type,
    &PyCFunction_Type,
    &PyType_Type,
    &PyProperty_Type,
    &PyStaticMethod_Type,
    &PyClassMethod_Type,
    &PyByteArray_Type,
    &PyDictProxy_Type,
    &PyFrame_Type,
    &PyMemberDescr_Type,
    &PyGetSetDescr_Type,
    &PyMethodDescr_Type,
    &PyWrapperDescr_Type,
    &PyListIter_Type,
    &PyTupleIter_Type,
    &PySeqIter_Type,
    &PyDictIterKey_Type,
    &PyDictIterValue_Type,
    &PyDictIterItem_Type,
    &PyDictKeys_Type,
    &PyDictValues_Type,
    &PyDictItems_Type,
    &PyEnum_Type,
    &PySetIter_Type,
    &PyCode_Type,
    /* a module's own end (m_free): only _signal's and Python source's are let through */
    &PyModule_Type,
  };
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
    if (t == plain[i]) return true;
  return false;
}

/* Whether an instance of t ends as a plain object: its type and every
 * base plain, or a class statement's without __del__. */
static bool quiet_type(PyTypeObject *t)
{
  if (plain_type(t)) return true;
  PyObject *mro = t->tp_mro;
  if (!class_dealloc || !mro || !PyTuple_Check(mro)) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
    PyTypeObject *c = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
    if (c == &PyBaseObject_Type || plain_type(c)) continue;
    if (c->tp_dealloc != class_dealloc || c->tp_finalize || c->tp_del) return false;
  }
  return true;
}

/* The standard streams and their buffers and files: flushed before the
 * end (ok false when sys.stdout or sys.stderr is another object, whose
 * end the teardown would run). */
static int stdio_objects(PyObject *out[9], bool *ok)
{
  static const char *const names[] = { "__stdin__", "__stdout__", "__stderr__" };
  int n = 0;
  *ok = PySys_GetObject("stdout") == PySys_GetObject("__stdout__") &&
        PySys_GetObject("stderr") == PySys_GetObject("__stderr__");
  for (size_t i = 0; i < 3 && *ok; i++) {
    PyObject *s = PySys_GetObject(names[i]); /* borrowed */
    if (!s || s == Py_None) continue;
    out[n++] = s;
    PyObject *buf = PyObject_GetAttrString(s, "buffer");
    PyObject *raw = buf ? PyObject_GetAttrString(buf, "raw") : NULL;
    PyErr_Clear();
    /* held by the stream: the borrowed pointers stay valid */
    if (buf) out[n++] = buf;
    if (raw) out[n++] = raw;
    Py_XDECREF(buf);
    Py_XDECREF(raw);
  }
  return n;
}

/* Whether the teardown after the flush would show nothing (see above). */
static bool quiet_end(PyObject *helpers)
{
  PyInterpreterState *interp = PyInterpreterState_Get();
  PyThreadState *first = PyInterpreterState_ThreadHead(interp);
  if (!first || PyThreadState_Next(first)) return false;
  /* ends by the signal, after the teardown */
  if (_Py_UnhandledKeyboardInterrupt || program_hooks) return false;
  PyObject *fn = PyDict_GetItemString(helpers, "_plain_end"); /* borrowed */
  PyObject *r = fn ? PyObject_CallNoArgs(fn) : NULL;
  bool ok = r == Py_True;
  Py_XDECREF(r);
  PyObject *streams[9];
  int n_streams = ok ? stdio_objects(streams, &ok) : 0;
  PyObject *gc = ok ? PyImport_ImportModule("gc") : NULL;
  /* every object the collector tracks but the zygote's (frozen) */
  PyObject *objects = gc ? PyObject_CallMethod(gc, "get_objects", NULL) : NULL;
  Py_XDECREF(gc);
  ok = ok && objects && PyList_Check(objects);
  for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(objects); i++) {
    PyObject *o = PyList_GET_ITEM(objects, i);
    bool stream = false;
    for (int k = 0; k < n_streams && !stream; k++) stream = o == streams[k];
    if (stream) continue;
    if (PyWeakref_Check(o))
      ok = ((PyWeakReference *)o)->wr_callback == NULL;
    else
      ok = quiet_type(Py_TYPE(o));
  }
  Py_XDECREF(objects);
  PyErr_Clear();
  return ok;
}

/* Py_FinalizeEx's first steps: the threading module's shutdown (its
 * non-daemon threads joined), the atexit handlers. */
static void before_teardown(void)
{
  PyObject *name = PyUnicode_FromString("threading");
  PyObject *threading = name ? PyImport_GetModule(name) : NULL;
  Py_XDECREF(name);
  if (threading) {
    PyObject *r = PyObject_CallMethod(threading, "_shutdown", NULL);
    if (!r) PyErr_WriteUnraisable(threading);
    Py_XDECREF(r);
    Py_DECREF(threading);
  } else if (PyErr_Occurred()) {
    PyErr_WriteUnraisable(NULL);
  }
  PyObject *atexit = PyImport_ImportModule("atexit");
  PyObject *r = atexit ? PyObject_CallMethod(atexit, "_run_exitfuncs", NULL) : NULL;
  Py_XDECREF(r);
  Py_XDECREF(atexit);
  PyErr_Clear();
}

/* flush_std_files of Py_FinalizeEx: -1 when a flush failed. */
static int flush_stdio(void)
{
  static const char *const names[] = { "stdout", "stderr" };
  int status = 0;
  for (int i = 0; i < 2; i++) {
    PyObject *f = PySys_GetObject(names[i]); /* borrowed */
    if (!f || f == Py_None) continue;
    PyObject *closed = PyObject_GetAttrString(f, "closed");
    int is_closed = closed ? PyObject_IsTrue(closed) : 0;
    Py_XDECREF(closed);
    PyErr_Clear();
    if (is_closed > 0) continue;
    PyObject *r = PyObject_CallMethod(f, "flush", NULL);
    if (!r) {
      if (i == 0)
        PyErr_WriteUnraisable(f);
      else
        PyErr_Clear();
      status = -1;
    }
    Py_XDECREF(r);
  }
  return status;
}

/* pymain_err_print: SystemExit's status, or the exception printed. */
static int error_status(void)
{
  int status = 1;
  if (!_Py_HandleSystemExit(&status)) PyErr_Print();
  return status;
}

/* What Py_RunMain does when the interpreter may stay interactive after
 * the text (PYTHONINSPECT set by it, stdin a terminal): the interactive
 * hook, then the prompt on stdin. */
static int interactive(void)
{
  PyObject *hook = PySys_GetObject("__interactivehook__"); /* borrowed */
  if (hook) {
    PyObject *r =
      PySys_Audit("cpython.run_interactivehook", "O", hook) < 0 ? NULL : PyObject_CallNoArgs(hook);
    if (!r) {
      PySys_WriteStderr("Failed calling sys.__interactivehook__\n");
      int code;
      if (_Py_HandleSystemExit(&code)) return code;
      PyErr_Print();
    }
    Py_XDECREF(r);
  }
  PyCompilerFlags cf = _PyCompilerFlags_INIT;
  return PyRun_AnyFileFlags(stdin, "<stdin>", &cf) != 0;
}

/* pymain_run_command: the text as __main__'s code; its status. */
static int run_text(const PyConfig *config)
{
  if (!config->safe_path) {
    /* sys.path[0] of -c: the working directory, as "" */
    PyObject *path = PySys_GetObject("path"); /* borrowed */
    PyObject *empty = PyUnicode_FromString("");
    int r = path && empty && PyList_Check(path) ? PyList_Insert(path, 0, empty) : -1;
    Py_XDECREF(empty);
    if (r < 0) return error_status();
  }
  PyObject *text = PyUnicode_FromWideChar(config->run_command, -1);
  if (!text) {
    PySys_WriteStderr("Unable to decode the command from the command line:\n");
    return error_status();
  }
  if (PySys_Audit("cpython.run_command", "O", text) < 0) {
    Py_DECREF(text);
    return error_status();
  }
  PyObject *bytes = PyUnicode_AsUTF8String(text);
  Py_DECREF(text);
  if (!bytes) {
    PySys_WriteStderr("Unable to decode the command from the command line:\n");
    return error_status();
  }
  PyCompilerFlags cf = _PyCompilerFlags_INIT;
  cf.cf_flags |= PyCF_IGNORE_COOKIE;
  int status = PyRun_SimpleStringFlags(PyBytes_AsString(bytes), &cf) != 0;
  Py_DECREF(bytes);
  return status;
}

int box_python_run_command(const PyConfig *config, PyObject *helpers)
{
  int status = run_text(config);
  const char *inspect = config->use_environment ? getenv("PYTHONINSPECT") : NULL;
  bool stays = inspect && *inspect && isatty(fileno(stdin));
  if (stays) status = interactive();
  if (!stays) before_teardown();
  if (!stays && quiet_end(helpers) && flush_stdio() == 0) return status;
  if (Py_FinalizeEx() < 0) status = 120;
  if (_Py_UnhandledKeyboardInterrupt) {
    /* as CPython's exit_sigint: the status a shell sees is the signal's */
    if (PyOS_setsig(SIGINT, SIG_DFL) == SIG_ERR)
      perror("signal");
    else if (kill(getpid(), SIGINT) < 0)
      perror("kill");
    status = 128 + SIGINT;
  }
  return status;
}

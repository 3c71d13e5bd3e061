/* warm.c — a warm interpreter: initialized once in the process that forks
 * the commands (the zygote), so that each `python3` starts from a forked,
 * initialized one instead of paying CPython's start-up again.
 *
 * What initialization reads from the process (its environment, working
 * directory, descriptors 0-2, locale, signal dispositions) is the zygote's
 * when it is warmed, so the warm state is built independent of them
 * (environment ignored, no site main, no signal handlers, no locale
 * change) and each command then gives it its own: the environment,
 * descriptors and streams, sys.argv and flags (through the interpreter's
 * configuration, as CPython's own command line sets them), site's paths
 * looked up from inside the box.  A command whose options or environment
 * would have initialized the interpreter differently (-O, -X, -W, another
 * locale, PYTHONHASHSEED…) is not served warm: libpython's own writable
 * memory is put back as it was loaded (the initialized state lives there:
 * the hash secret, which a runtime sets only once even across a
 * finalization, every static object, the allocator's state; what it
 * pointed to is left to the process's end) and a fresh interpreter
 * started, as without warming.
 *
 * All commands of a zygote share one hash seed: str hashes are randomized
 * per box, not per command. */
#include "python/python-private.h"

#include <link.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

extern char **environ;

static bool warm;
static char *warm_tz;     /* TZ when the warm interpreter read its zone, or NULL */
static PyObject *helpers; /* the dict of warm_source's functions */

/* libpython's writable memory as it was loaded, before the warm-up. */
typedef struct {
  char *at;
  size_t len;
  char *copy;
} Pristine;
static Pristine pristine[4];
static int n_pristine;

#ifdef BOX_PYTHON_LINKED
/* libpython linked into the program: its data is in sections of its own
 * (python/meson.build), whose bounds the linker defines. */
extern char __start_box_pydata[], __stop_box_pydata[], __start_box_pybss[], __stop_box_pybss[];

/* libpython's writable memory kept as it is now (before the warm-up). */
static bool keep_libpython(void)
{
  char *const bounds[2][2] = { { __start_box_pydata, __stop_box_pydata },
                               { __start_box_pybss, __stop_box_pybss } };
  for (int i = 0; i < 2; i++) {
    Pristine *p = &pristine[n_pristine];
    p->at = bounds[i][0];
    p->len = (size_t)(bounds[i][1] - bounds[i][0]);
    p->copy = p->len ? malloc(p->len) : NULL;
    if (!p->copy) return false;
    memcpy(p->copy, p->at, p->len);
    n_pristine++;
  }
  return true;
}
#else
static int keep_pristine(struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size, (void)data;
  const char *slash = strrchr(info->dlpi_name, '/');
  if (strncmp(slash ? slash + 1 : info->dlpi_name, "libpython3", 10) != 0) return 0;
  /* the part made read-only after relocation cannot change */
  ElfW(Addr) relro_end = 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO)
      relro_end = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz;
  for (int i = 0; i < info->dlpi_phnum && n_pristine < 4; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
    ElfW(Addr) start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
    if (start < relro_end) start = relro_end;
    if (start >= end) continue;
    Pristine *p = &pristine[n_pristine];
    p->at = (char *)start;
    p->len = end - start;
    p->copy = malloc(p->len);
    if (!p->copy) return -1;
    memcpy(p->copy, p->at, p->len);
    n_pristine++;
  }
  return 1;
}

static bool keep_libpython(void)
{
  return dl_iterate_phdr(keep_pristine, NULL) == 1 && n_pristine > 0;
}
#endif

static void restore_pristine(void)
{
  for (int i = 0; i < n_pristine; i++) memcpy(pristine[i].at, pristine[i].copy, pristine[i].len);
}

/* Modules most programs import; site's module, whose main runs per
 * command. */
static const char warm_source[] =
  "import sys, posix, _io, gc, codecs, atexit\n"
  "import site, os, json, re, pathlib, collections\n"
  "_box = sys.modules['_boxpython']\n"
  "if posix.system is _box._system:  # routed before os was imported: os's own too\n"
  "    _box._route_processes()\n"
  "\n"
  "def _stdio(fd, write, encoding, errors, buffered):\n"
  "    # as CPython's create_stdio makes them\n"
  "    try:\n"
  "        posix.fstat(fd)\n"
  "    except OSError:\n"
  "        return None\n"
  "    buffering = 0 if write and not buffered else -1\n"
  "    buf = _io.open(fd, 'wb' if write else 'rb', buffering, None, None, None, False)\n"
  "    raw = buf.raw if buffering else buf\n"
  "    raw.name = ('<stdin>', '<stdout>', '<stderr>')[fd]\n"
  "    line = buffered and (raw.isatty() or fd == 2)\n"
  "    stream = _io.TextIOWrapper(buf, encoding, errors, '\\n', line, not buffered)\n"
  "    stream.mode = 'w' if write else 'r'\n"
  "    return stream\n"
  "\n"
  "def _begin(env, encoding, errors, buffered, zone_moved):\n"
  "    encoding = codecs.lookup(encoding).name  # the codec's own name, as start-up sets it\n"
  "    posix.environ.clear()  # os.environ's data: it follows\n"
  "    posix.environ.update(env)\n"
  "    sys.stdin = sys.__stdin__ = _stdio(0, False, encoding, errors, buffered)\n"
  "    sys.stdout = sys.__stdout__ = _stdio(1, True, encoding, errors, buffered)\n"
  "    sys.stderr = sys.__stderr__ = _stdio(2, True, encoding, 'backslashreplace', buffered)\n"
  "    if zone_moved and 'time' in sys.modules:\n"
  "        sys.modules['time'].tzset()\n"
  "    # the zygote's __main__ is frozen (gc.freeze below): a cycle through its\n"
  "    # globals (a method's or a generator's) would never be collected, and its\n"
  "    # finalizers never run at the end; the command gets a __main__ of its own\n"
  "    main = type(sys).__new__(type(sys))\n"
  "    _room(vars(main))\n"
  "    main.__init__('__main__')\n"
  "    vars(main).update(vars(sys.modules['__main__']), __annotations__={})\n"
  "    sys.modules['__main__'] = main\n"
  "    _box._start_cwd = posix.getcwd()\n"
  "    if _box._roots:\n"
  "        _box._pythonpath()\n"
  "    if not sys.flags.no_site:\n"
  "        _site_main()\n"
  "    elif '" BOX_PYTHON_DIST "' in sys.path:  # site's to add, not ours\n"
  "        sys.path.remove('" BOX_PYTHON_DIST "')\n"
  "\n"
  "# A script's top-level names are looked up in __main__'s table by their str\n"
  "# hash, which this box's one hash seed fixes for all its commands (a native\n"
  "# run draws a seed each time): at 12 names in 32 slots, a seed where `x`\n"
  "# or `i` collides made every command's module-level loop up to a fifth\n"
  "# slower (issue 33).  Names filling a table of 128 slots and deleted before\n"
  "# __main__'s own go in leave it that size (a table shrinks only when it\n"
  "# fills, 42 more names on) with no deleted slot on a name's probe path.\n"
  "_ROOM = tuple('\\0%d' % i for i in range(43))\n"
  "\n"
  "def _room(ns):\n"
  "    for k in _ROOM:\n"
  "        ns[k] = None\n"
  "    for k in _ROOM:\n"
  "        del ns[k]\n"
  "\n"
  "def _site_main():\n"
  "    # Where the box's /usr holds only its time zones (_usr_bare, set at the\n"
  "    # warm-up: boxpython.h) site's looks for a pyvenv.cfg beside\n"
  "    # /usr/bin/python3 and for the three site-packages under /usr would all\n"
  "    # find nothing (the standard library and dist-packages come through\n"
  "    # descriptors): the five round trips to the mount are not made\n"
  "    if not sys.executable.startswith('/usr/') or not _usr_bare:\n"
  "        site.main()\n"
  "        _box._venv_trim()\n"
  "        return\n"
  "    venv, add = site.venv, site.addsitepackages\n"
  "    def absent_venv(known_paths):\n"
  "        sys._base_executable, sys._home = sys.executable, None\n"
  "        return known_paths\n"
  "    site.venv = absent_venv\n"
  "    site.addsitepackages = lambda known_paths, prefixes=None: known_paths\n"
  "    try:\n"
  "        site.main()\n"
  "    finally:\n"
  "        site.venv, site.addsitepackages = venv, add\n"
  "\n"
  "class _Plain:  # how a class statement's instance ends (end.c)\n"
  "    pass\n"
  "\n"
  "def _plain_end():\n"
  "    # what the teardown would call: gc's callbacks, warnings (the filters as the\n"
  "    # zygote's: a ResourceWarning shown), an extension module's objects' ends\n"
  "    warnings = sys.modules.get('warnings')\n"
  "    if gc.callbacks or (warnings and warnings.filters != _warm_filters):\n"
  "        return False\n"
  "    for name, m in list(sys.modules.items()):\n"
  "        if name in _warm_modules:\n"
  "            continue\n"
  "        f = getattr(m, '__file__', None) if type(m) is type(sys) else None\n"
  "        if not isinstance(f, str) or not f.endswith('.py'):\n"
  "            return False\n"
  "    return True\n"
  "\n"
  "# and _signal, imported by each command after its dispositions are set (begin)\n"
  "_warm_modules = frozenset(sys.modules) | {'_signal'}\n"
  "_warm_filters = list(sys.modules['warnings'].filters) if 'warnings' in sys.modules else None\n"
  "gc.collect()\n"
  "gc.freeze()  # kept out of every collection: a command's copies no page of it\n";

/* The configuration of the warm interpreter, before a command's. */
static PyStatus warm_config(PyConfig *c)
{
  PyConfig_InitPythonConfig(c);
  c->pathconfig_warnings = 0;
  c->_init_main = 0;
  c->parse_argv = 0;
  c->use_environment = 0;
  c->site_import = 0;
  c->install_signal_handlers = 0;
  PyStatus st = PyConfig_SetString(c, &c->program_name, L"python3");
  if (!PyStatus_Exception(st)) st = box_python_set_locations(c, true);
  return st;
}

/* The warm-up proper; false with the runtime in any state. */
static bool warm_init(const BoxPythonHost *host)
{
  /* As a command's in the box's usual environment (no locale: C, so
   * CPython runs in UTF-8 mode), without touching the process's locale or
   * environment (coercion would export LC_CTYPE to every worker). */
  PyPreConfig pre;
  PyPreConfig_InitPythonConfig(&pre);
  pre.utf8_mode = 1;
  pre.coerce_c_locale = 0;
  pre.configure_locale = 0;
  pre.use_environment = 0;
  PyStatus st = Py_PreInitialize(&pre);
  if (PyStatus_Exception(st)) return false;
  box_python_register(host);
  PyConfig config;
  st = warm_config(&config);
  if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) return false;
  bool ok =
    box_python_install() && !PyStatus_Exception(_Py_InitializeMain()) && box_python_after_main();
  PyObject *code = ok ? Py_CompileString(warm_source, "<box warm>", Py_file_input) : NULL;
  helpers = code ? PyDict_New() : NULL;
  if (helpers) {
    PyDict_SetItemString(helpers, "__builtins__", PyEval_GetBuiltins());
    PyDict_SetItemString(helpers, "_usr_bare", host->usr_bare ? Py_True : Py_False);
    PyObject *r = PyEval_EvalCode(code, helpers, helpers);
    ok = r != NULL;
    Py_XDECREF(r);
  }
  Py_XDECREF(code);
  if (ok && helpers) box_python_end_learn(PyDict_GetItemString(helpers, "_Plain"));
  return ok && helpers;
}

bool box_python_warm(const BoxPythonHost *host)
{
  static bool tried;
  if (tried || !host || host->stdlib_dir < 0) return warm;
  tried = true;
  box_python_bind_isatty(); /* first: the slot it rewrites is kept as pristine */
  if (!keep_libpython()) return false;
  if (!warm_init(host)) {
    /* as loaded again: a command's python3 starts a fresh runtime */
    restore_pristine();
    return false;
  }
  /* The GIL stays with this thread: the process runs no Python until a
   * child of it does. */
  warm = true;
  const char *tz = getenv("TZ");
  warm_tz = tz ? strdup(tz) : NULL;
  return true;
}

/* Whether the environment has CPython's start-up read differently from
 * the warm one: the locale (C, coerced to C.UTF-8, UTF-8 mode), and any
 * PYTHON* variable but those a command's configuration applies. */
static bool environment_fits(bool use_environment)
{
  static const char *const applied[] = {
    "PYTHONPATH=",     "PYTHONDONTWRITEBYTECODE=", "PYTHONUNBUFFERED=", "PYTHONNOUSERSITE=",
    "PYTHONSAFEPATH=", "PYTHONIOENCODING=",        "PYTHONSTARTUP="
  };
  for (char **e = environ; use_environment && e && *e; e++) {
    if (strncmp(*e, "PYTHON", 6) != 0) continue;
    bool ok = false;
    for (size_t i = 0; i < sizeof applied / sizeof applied[0] && !ok; i++)
      ok = strncmp(*e, applied[i], strlen(applied[i])) == 0;
    if (!ok) return false;
  }
  if (getenv("LC_ALL")) return false;
  const char *loc = setlocale(LC_CTYPE, "");
  return loc && (strcmp(loc, "C") == 0 || strcmp(loc, "POSIX") == 0);
}

static bool same_text(const wchar_t *a, const wchar_t *b)
{
  return (!a && !b) || (a && b && wcscmp(a, b) == 0);
}

/* Whether the command's configuration (cmd) differs from the warm one
 * (w) only where a running interpreter can take it. */
static bool config_fits(const PyConfig *cmd, const PyConfig *w)
{
  return cmd->optimization_level == w->optimization_level && cmd->verbose == w->verbose &&
         cmd->interactive == w->interactive && cmd->inspect == w->inspect &&
         cmd->bytes_warning == w->bytes_warning && cmd->dev_mode == w->dev_mode &&
         cmd->warnoptions.length == 0 && cmd->xoptions.length == 0 &&
         cmd->import_time == w->import_time && cmd->tracemalloc == w->tracemalloc &&
         cmd->faulthandler == w->faulthandler && cmd->use_hash_seed == w->use_hash_seed &&
         cmd->parser_debug == w->parser_debug && cmd->skip_source_first_line == 0 &&
         cmd->code_debug_ranges == w->code_debug_ranges &&
         cmd->warn_default_encoding == w->warn_default_encoding &&
         same_text(cmd->check_hash_pycs_mode, w->check_hash_pycs_mode) &&
         cmd->use_frozen_modules == w->use_frozen_modules && cmd->quiet == w->quiet &&
         same_text(cmd->pycache_prefix, w->pycache_prefix) &&
         same_text(cmd->filesystem_encoding, w->filesystem_encoding) &&
         same_text(cmd->filesystem_errors, w->filesystem_errors);
}

/* to = from (the lists' memory is PyMem_Raw's, as CPython keeps it). */
static PyStatus copy_list(PyWideStringList *to, const PyWideStringList *from)
{
  for (Py_ssize_t i = 0; i < to->length; i++) PyMem_RawFree(to->items[i]);
  PyMem_RawFree(to->items);
  to->items = NULL;
  to->length = 0;
  PyStatus st = PyStatus_Ok();
  for (Py_ssize_t i = 0; i < from->length && !PyStatus_Exception(st); i++)
    st = PyWideStringList_Append(to, from->items[i]);
  return st;
}

/* The command's own settings onto the warm interpreter's (w). */
static PyStatus take_command(PyConfig *w, const PyConfig *cmd)
{
  struct {
    int *to;
    int from;
  } flags[] = {
    { &w->parse_argv, 0 }, /* cmd's argv is parsed already */
    { &w->install_signal_handlers, 1 },
    { &w->isolated, cmd->isolated },
    { &w->use_environment, cmd->use_environment },
    { &w->user_site_directory, cmd->user_site_directory },
    { &w->site_import, cmd->site_import },
    { &w->safe_path, cmd->safe_path },
    { &w->write_bytecode, cmd->write_bytecode },
    { &w->buffered_stdio, cmd->buffered_stdio },
  };
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) *flags[i].to = flags[i].from;
  PyStatus st = copy_list(&w->argv, &cmd->argv);
  if (!PyStatus_Exception(st)) st = copy_list(&w->orig_argv, &cmd->orig_argv);
  struct {
    wchar_t **to;
    wchar_t *from;
  } texts[] = { { &w->run_command, cmd->run_command },
                { &w->run_module, cmd->run_module },
                { &w->run_filename, cmd->run_filename },
                { &w->stdio_encoding, cmd->stdio_encoding },
                { &w->stdio_errors, cmd->stdio_errors } };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0] && !PyStatus_Exception(st); i++)
    st = PyConfig_SetString(w, texts[i].to, texts[i].from);
  return st;
}

static PyObject *environment_dict(void)
{
  PyObject *d = PyDict_New();
  for (char **e = environ; d && e && *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq || eq == *e) continue;
    PyObject *k = PyBytes_FromStringAndSize(*e, eq - *e);
    PyObject *v = PyBytes_FromString(eq + 1);
    if (!k || !v || PyDict_SetItem(d, k, v) != 0) Py_CLEAR(d);
    Py_XDECREF(k);
    Py_XDECREF(v);
  }
  return d;
}

/* What start-up does with signals: SIGPIPE and SIGXFSZ ignored, SIGINT
 * raising KeyboardInterrupt unless it is ignored. */
static bool take_signals(void)
{
  PyOS_setsig(SIGPIPE, SIG_IGN);
  PyOS_setsig(SIGXFSZ, SIG_IGN);
  PyObject *sig = PyImport_ImportModule("_signal");
  if (!sig) return false;
  PyObject *r = Py_None;
  Py_INCREF(r);
  if (PyOS_getsig(SIGINT) == SIG_DFL) {
    Py_DECREF(r);
    PyObject *h = PyObject_GetAttrString(sig, "default_int_handler");
    r = h ? PyObject_CallMethod(sig, "signal", "iO", SIGINT, h) : NULL;
    Py_XDECREF(h);
  }
  Py_DECREF(sig);
  Py_XDECREF(r);
  return r != NULL;
}

#ifdef BOX_PYTHON_LINKED
/* libpython's own (internal, but the static library's to link). */
extern PyStatus _PyConfig_Copy(PyConfig *config, const PyConfig *config2);
extern int _PySys_UpdateConfig(PyThreadState *tstate);
#endif

/* The command's configuration (w: the warm one with the command's
 * settings) made the interpreter's, and sys's attributes that show it.
 * _PyInterpreterState_SetConfig reads the configuration again first,
 * running getpath.py (a fifth of a print(1)'s time in the box, and a
 * request to the mount per path it looks at), which would compute again
 * the same paths: w holds the ones computed at the warm-up, and a
 * command's own settings that would change them (PYTHONHOME, -X…) are
 * not served warm (config_fits, environment_fits). */
static int set_config(const PyConfig *w)
{
#ifdef BOX_PYTHON_LINKED
  PyThreadState *ts = PyThreadState_Get();
  PyStatus st = _PyConfig_Copy((PyConfig *)_PyInterpreterState_GetConfig(ts->interp), w);
  if (PyStatus_Exception(st)) {
    PyErr_SetString(PyExc_RuntimeError, st.err_msg ? st.err_msg : "configuration");
    return -1;
  }
  return _PySys_UpdateConfig(ts);
#else
  return _PyInterpreterState_SetConfig(w);
#endif
}

/* Starts the command on the warm interpreter (w: its configuration, cmd:
 * the command's); false with a Python exception set. */
static bool begin(PyConfig *w, const PyConfig *cmd, const BoxPythonHost *host)
{
  /* as CPython coerces the C locale */
  setenv("LC_CTYPE", "C.UTF-8", 1);
  setlocale(LC_CTYPE, "C.UTF-8");
  box_python_rehost(host);
  PyStatus st = take_command(w, cmd);
  if (PyStatus_Exception(st)) {
    PyErr_SetString(PyExc_RuntimeError, st.err_msg ? st.err_msg : "configuration");
    return false;
  }
  if (set_config(w) != 0 || !take_signals()) return false;
  if (host && host->executable) {
    PyObject *exe = PyUnicode_DecodeFSDefault(host->executable);
    int bad = !exe || PySys_SetObject("executable", exe) != 0;
    Py_XDECREF(exe);
    if (bad) return false;
  }
  PyObject *env = environment_dict();
  PyObject *fn = PyDict_GetItemString(helpers, "_begin"); /* borrowed */
  /* time's zone (time.timezone, tzname…) as the warm-up read it holds
   * while TZ is the same: re-read, it would look for /etc/localtime
   * through the mount on every command */
  const char *tz = getenv("TZ");
  bool zone_moved = !(tz ? warm_tz && strcmp(tz, warm_tz) == 0 : !warm_tz);
  PyObject *r = env && fn
                  ? PyObject_CallFunction(fn, "OuuOO", env, cmd->stdio_encoding, cmd->stdio_errors,
                                          cmd->buffered_stdio ? Py_True : Py_False,
                                          zone_moved ? Py_True : Py_False)
                  : NULL;
  Py_XDECREF(env);
  Py_XDECREF(r);
  return r != NULL;
}

/* The command on the warm interpreter, or -1 (nothing run) when it needs
 * a fresh one. */
static int run_warm(int argc, char **argv, const BoxPythonHost *host)
{
  PyConfig cmd, w;
  PyConfig_InitPythonConfig(&cmd);
  PyConfig_InitPythonConfig(&w);
  int status = -1;
  PyStatus st = PyConfig_SetBytesArgv(&cmd, argc, argv);
  if (!PyStatus_Exception(st)) st = box_python_set_locations(&cmd, true);
  if (!PyStatus_Exception(st)) st = PyConfig_Read(&cmd);
  if (PyStatus_Exception(st)) {
    status = box_python_status_exit(st); /* --version, a usage error */
  } else if (_PyInterpreterState_GetConfigCopy(&w) == 0 && config_fits(&cmd, &w) &&
             environment_fits(cmd.use_environment)) {
    if (begin(&w, &cmd, host)) {
      status = w.run_command ? box_python_run_command(&w, helpers) : Py_RunMain();
    } else {
      PyErr_Print();
      Py_FinalizeEx();
      status = 1;
    }
  }
  PyConfig_Clear(&cmd);
  PyConfig_Clear(&w);
  return status;
}

int box_python_warm_main(int argc, char **argv, const BoxPythonHost *host)
{
  PyOS_AfterFork_Child();
  int status = run_warm(argc, argv, host);
  if (status >= 0) return status;
  restore_pristine();
  warm = false;
  return box_python_main(argc, argv, host);
}

bool box_python_is_warm(void)
{
  return warm;
}

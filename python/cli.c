/* cli.c — box_python_main: CPython's own command line, embedded.
 *
 * The options, -c/-m/SCRIPT/stdin, the environment variables (unless -E or
 * -I) and the exit statuses are CPython's: the whole argument vector goes
 * to its parser (PyConfig.parse_argv) and Py_RunMain runs what it chose.
 * The embedding only fixes where the interpreter believes it lives
 * (/usr/bin/python3, prefix /usr): inside a box those paths are not the
 * host's, so they are set rather than searched for, and the standard
 * library comes through the host's descriptors (importer.c). */
#include "python/python-private.h"

#include <stdio.h>

/* CPython's status: an exit it asked for (--version, a usage error), or
 * an error printed as the python3 program prints it. */
int box_python_status_exit(PyStatus st)
{
  fflush(stdout); /* --version and usage are printed through C stdio */
  if (PyStatus_IsExit(st)) return st.exitcode;
  if (st.func)
    fprintf(stderr, "Fatal Python error: %s: %s\n", st.func, st.err_msg ? st.err_msg : "");
  else
    fprintf(stderr, "Fatal Python error: %s\n", st.err_msg ? st.err_msg : "");
  fflush(stderr);
  return 1;
}

PyStatus box_python_set_locations(PyConfig *c, bool fixed_paths)
{
  struct {
    wchar_t **field;
    const wchar_t *value;
  } fields[] = {
    { &c->executable, L"/usr/bin/python3" },
    { &c->base_executable, L"/usr/bin/python3" },
    { &c->prefix, L"/usr" },
    { &c->base_prefix, L"/usr" },
    { &c->exec_prefix, L"/usr" },
    { &c->base_exec_prefix, L"/usr" },
    /* set: no search for a venv's pyvenv.cfg beside the executable */
    { &c->home, L"/usr" },
    { &c->stdlib_dir, L"" BOX_PYTHON_STDLIB },
  };
  PyStatus st = PyStatus_Ok();
  for (size_t i = 0; i < sizeof fields / sizeof fields[0] && !PyStatus_Exception(st); i++)
    st = PyConfig_SetString(c, fields[i].field, fields[i].value);
  if (PyStatus_Exception(st) || !fixed_paths) return st;
  const wchar_t *paths[] = { L"/usr/lib/python311.zip", L"" BOX_PYTHON_STDLIB,
                             L"" BOX_PYTHON_STDLIB "/lib-dynload", L"" BOX_PYTHON_DIST };
  c->module_search_paths_set = 1;
  for (size_t i = 0; i < sizeof paths / sizeof paths[0] && !PyStatus_Exception(st); i++)
    st = PyWideStringList_Append(&c->module_search_paths, paths[i]);
  return st;
}

int box_python_main(int argc, char **argv, const BoxPythonHost *host)
{
  box_python_bind_isatty();
  if (box_python_is_warm()) return box_python_warm_main(argc, argv, host);
  bool through_host = host && host->stdlib_dir >= 0;
  box_python_register(host);
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  /* Rooted in a box the host's paths do not exist: warnings about them
   * would be noise on every run. */
  config.pathconfig_warnings = 0;
  /* Stop between the phases: the importer goes in before the main phase
   * imports encodings and site. */
  config._init_main = 0;
  PyStatus st = PyConfig_SetBytesArgv(&config, argc, argv);
  if (!PyStatus_Exception(st)) st = box_python_set_locations(&config, through_host);
  if (!PyStatus_Exception(st) && host && host->executable)
    st = PyConfig_SetBytesString(&config, &config.executable, host->executable);
  if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) return box_python_status_exit(st);
  if (!box_python_install()) {
    PyErr_Print();
    Py_Finalize();
    return 1;
  }
  st = _Py_InitializeMain();
  if (PyStatus_Exception(st)) return box_python_status_exit(st);
  if (!box_python_after_main()) {
    PyErr_Print();
    Py_Finalize();
    return 1;
  }
  return Py_RunMain();
}

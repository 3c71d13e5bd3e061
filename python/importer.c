/* importer.c — the `_boxpython` module: the standard library imported
 * through descriptors, and refusals that carry the policy's text.
 *
 * In a box the interpreter runs rooted in the box's mount, where
 * /usr/lib/python3.11 is not the host's (it is the command's RAM /usr,
 * decided by policy like any path).  The host keeps a descriptor of the
 * host's directory instead, and the finders below read modules through it
 * (openat, never a path), while every module keeps its native spelling:
 * __file__, __path__, sys.path and tracebacks read as they do outside.
 * They sit in sys.path_importer_cache under those spellings, so the stock
 * PathFinder consults them and never stats the paths themselves; packages
 * add theirs as they are found.  Any other sys.path entry (the script's
 * directory, a venv in the workspace) is imported by path, through the
 * mount, decided per operation.
 *
 * The same module routes processes: the child side of subprocess
 * (_posixsubprocess.fork_exec), os.system, os.exec* and os.posix_spawn* run
 * their command through the host's shell_run in a forked child, so each
 * is the Shell's decision, never an exec (which the worker's filter
 * refuses anyway).  And OSError for EACCES is created as a PermissionError
 * subclass that takes the policy's text as its strerror (errnomap.c). */
#include "python/python-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const BoxPythonHost *host;

/* Compiled under importlib's own file name so that CPython trims these
 * frames from tracebacks, as it trims importlib's. */
static const char boot_name[] = "<frozen importlib._bootstrap_external>";
static const char boot_source[] =
  "import sys, posix, marshal, _imp, builtins, errno\n"
  "_bootstrap = sys.modules['_frozen_importlib']\n"
  "_ModuleSpec = _bootstrap.ModuleSpec\n"
  "_O_DIR = posix.O_RDONLY | posix.O_DIRECTORY | posix.O_CLOEXEC\n"
  "_O_FILE = posix.O_RDONLY | posix.O_CLOEXEC\n"
  "_SUFFIXES = tuple(_imp.extension_suffixes()) + ('.py',)\n"
  "_INITS = tuple('__init__' + s for s in _SUFFIXES)\n"
  "_roots = []  # (native path, descriptor)\n"
  "\n"
  "def _read(root, rel):\n"
  "    fd = posix.open(rel, _O_FILE, dir_fd=root)\n"
  "    try:\n"
  "        parts = []\n"
  "        while True:\n"
  "            b = posix.read(fd, 1 << 20)\n"
  "            if not b:\n"
  "                return b''.join(parts)\n"
  "            parts.append(b)\n"
  "    finally:\n"
  "        posix.close(fd)\n"
  "\n"
  "def _locate(path):\n"
  "    for prefix, root in _roots:\n"
  "        if path == prefix:\n"
  "            return root, '.'\n"
  "        if path.startswith(prefix + '/'):\n"
  "            return root, path[len(prefix) + 1:]\n"
  "    return None\n"
  "\n"
  "def _join(rel, name):\n"
  "    return name if rel == '.' else rel + '/' + name\n"
  "\n"
  "def _cache_path(path):\n"
  "    head, _, tail = path.rpartition('/')\n"
  "    opt = sys.flags.optimize\n"
  "    tag = sys.implementation.cache_tag + ('.opt-%d' % opt if opt else '')\n"
  "    return '%s/__pycache__/%s.%s.pyc' % (head, tail.rpartition('.')[0], tag)\n"
  "\n"
  "class _Absent:\n"
  "    def find_spec(self, fullname, target=None):\n"
  "        return None\n"
  "    def invalidate_caches(self):\n"
  "        pass\n"
  "\n"
  "class _Loader:\n"
  "    def __init__(self, root, rel, path):\n"
  "        self.root, self.rel, self.path = root, rel, path\n"
  "    def get_filename(self, fullname=None):\n"
  "        return self.path\n"
  "    def is_package(self, fullname):\n"
  "        return self.path.rpartition('/')[2].startswith('__init__.')\n"
  "    def get_data(self, path):\n"
  "        where = _locate(path)\n"
  "        if where is None:\n"
  "            with open(path, 'rb') as f:\n"
  "                return f.read()\n"
  "        return _read(*where)\n"
  "\n"
  "class _Source(_Loader):\n"
  "    def create_module(self, spec):\n"
  "        return None\n"
  "    def exec_module(self, module):\n"
  "        _bootstrap._call_with_frames_removed(exec, self.get_code(module.__name__),\n"
  "                                             module.__dict__)\n"
  "        if module.__name__ == 'ssl':\n"
  "            _trust_gateway(module)\n"
  "        elif module.__name__ == 'certifi' and gateway_ca() is not None:\n"
  "            # requests and others take certifi's bundle by path: in a box\n"
  "            # its one root is the gateway's CA, which the mount shows here\n"
  "            module.where = lambda: '/.box/gateway-ca.pem'\n"
  "            module.contents = gateway_ca\n"
  "        elif module.__name__ == 'venv':\n"
  "            _venv_scripts(module)\n"
  "    def get_code(self, fullname):\n"
  "        st = posix.stat(self.rel, dir_fd=self.root)\n"
  "        try:\n"
  "            data = self.get_data(_cache_path(self.path))\n"
  "        except OSError:\n"
  "            data = b''\n"
  "        magic = sys.modules['_frozen_importlib_external'].MAGIC_NUMBER\n"
  "        if (len(data) > 16 and data[:4] == magic and data[4:8] == bytes(4)\n"
  "                and int.from_bytes(data[8:12], 'little') == int(st.st_mtime) & 0xFFFFFFFF\n"
  "                and int.from_bytes(data[12:16], 'little') == st.st_size & 0xFFFFFFFF):\n"
  "            return marshal.loads(memoryview(data)[16:])\n"
  "        return compile(self.get_data(self.path), self.path, 'exec', dont_inherit=True)\n"
  "    def get_source(self, fullname):\n"
  "        external = sys.modules['_frozen_importlib_external']\n"
  "        return external.decode_source(self.get_data(self.path))\n"
  "\n"
  "def _trust_gateway(ssl):\n"
  "    # In a box with a gateway, the proxy variables send every HTTPS request\n"
  "    # through it, and it answers with a leaf of its CA: that CA is then a\n"
  "    # default context's one root (create_default_context, urllib's and\n"
  "    # http.client's contexts load them here), as it is the Shell's curl's.\n"
  "    system = ssl.SSLContext.load_default_certs\n"
  "    def load_default_certs(self, purpose=ssl.Purpose.SERVER_AUTH):\n"
  "        ca = gateway_ca()\n"
  "        if ca is None:\n"
  "            return system(self, purpose)\n"
  "        if not isinstance(purpose, ssl._ASN1Object):\n"
  "            raise TypeError(purpose)\n"
  "        self.load_verify_locations(cadata=ca)\n"
  "    load_default_certs.__doc__ = system.__doc__\n"
  "    ssl.SSLContext.load_default_certs = load_default_certs\n"
  "    # a bundle of the program's own (a venv's certifi) can verify nothing\n"
  "    # the gateway re-signs: its CA joins whatever a context is told to load\n"
  "    given = ssl.SSLContext.load_verify_locations\n"
  "    def load_verify_locations(self, cafile=None, capath=None, cadata=None):\n"
  "        given(self, cafile, capath, cadata)\n"
  "        ca = gateway_ca()\n"
  "        if ca is not None and cadata != ca:\n"
  "            given(self, cadata=ca)\n"
  "    load_verify_locations.__doc__ = given.__doc__\n"
  "    ssl.SSLContext.load_verify_locations = load_verify_locations\n"
  "\n"
  "def _copy_out(root, rel, dest):\n"
  "    # a directory of the host's, read through its descriptor, copied to\n"
  "    # dest with its files' modes\n"
  "    posix.mkdir(dest)\n"
  "    fd = posix.open(rel, _O_DIR, dir_fd=root)\n"
  "    try:\n"
  "        names = posix.listdir(fd)\n"
  "    finally:\n"
  "        posix.close(fd)\n"
  "    for name in names:\n"
  "        sub = _join(rel, name)\n"
  "        st = posix.stat(sub, dir_fd=root)\n"
  "        if st.st_mode & 0o170000 == 0o040000:\n"
  "            _copy_out(root, sub, dest + '/' + name)\n"
  "            continue\n"
  "        out = posix.open(dest + '/' + name, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL,\n"
  "                         st.st_mode & 0o777)\n"
  "        try:\n"
  "            posix.write(out, _read(root, sub))\n"
  "        finally:\n"
  "            posix.close(out)\n"
  "\n"
  "def _venv_scripts(venv):\n"
  "    # venv copies `activate` and its kin from the scripts directory beside\n"
  "    # it, which in a box is the host's and not in the box's view: they are\n"
  "    # copied out of it through the descriptor first, then installed as venv\n"
  "    # installs them\n"
  "    given = venv.EnvBuilder.setup_scripts\n"
  "    def setup_scripts(self, context):\n"
  "        where = _locate(venv.__file__.rpartition('/')[0] + '/scripts')\n"
  "        if where is None:\n"
  "            return given(self, context)\n"
  "        import tempfile\n"
  "        with tempfile.TemporaryDirectory() as tmp:\n"
  "            _copy_out(where[0], where[1], tmp + '/scripts')\n"
  "            self.install_scripts(context, tmp + '/scripts')\n"
  "    setup_scripts.__doc__ = given.__doc__\n"
  "    venv.EnvBuilder.setup_scripts = setup_scripts\n"
  "\n"
  "class _Origin:\n"
  "    def __init__(self, name, origin):\n"
  "        self.name, self.origin = name, origin\n"
  "\n"
  "class _Extension(_Loader):\n"
  "    def __init__(self, root, dirrel, name, path):\n"
  "        super().__init__(root, _join(dirrel, name), path)\n"
  "        self.dirrel, self.name = dirrel, name\n"
  "    def create_module(self, spec):\n"
  "        fd = posix.open(self.dirrel, _O_DIR, dir_fd=self.root)\n"
  "        try:\n"
  "            load_library(fd, self.name)\n"
  "        finally:\n"
  "            posix.close(fd)\n"
  "        # loaded already under this name: dlopen finds it without a search\n"
  "        module = _imp.create_dynamic(_Origin(spec.name, './' + self.name))\n"
  "        module.__file__ = spec.origin\n"
  "        return module\n"
  "    def exec_module(self, module):\n"
  "        _imp.exec_dynamic(module)\n"
  "    def is_package(self, fullname):\n"
  "        return False\n"
  "\n"
  "def _spec(fullname, finder, name, locations):\n"
  "    path = finder.path + '/' + name\n"
  "    if name.endswith('.py'):\n"
  "        loader = _Source(finder.root, _join(finder.rel, name), path)\n"
  "    else:\n"
  "        loader = _Extension(finder.root, finder.rel, name, path)\n"
  "    spec = _ModuleSpec(fullname, loader, origin=path, is_package=locations is not None)\n"
  "    if locations is not None:\n"
  "        spec.submodule_search_locations = locations\n"
  "    spec.has_location = True\n"
  "    if name.endswith('.py'):\n"
  "        spec.cached = _cache_path(path)\n"
  "    return spec\n"
  "\n"
  "class _Finder:\n"
  "    def __init__(self, root, rel, path):\n"
  "        self.root, self.rel, self.path, self._names = root, rel, path, None\n"
  "    def invalidate_caches(self):\n"
  "        self._names = None\n"
  "    def _list(self):\n"
  "        if self._names is None:\n"
  "            try:\n"
  "                fd = posix.open(self.rel, _O_DIR, dir_fd=self.root)\n"
  "            except OSError:\n"
  "                self._names = frozenset()\n"
  "            else:\n"
  "                try:\n"
  "                    self._names = frozenset(posix.listdir(fd))\n"
  "                finally:\n"
  "                    posix.close(fd)\n"
  "        return self._names\n"
  "    def _usable(self, name):\n"
  "        # a link out of the directory (Debian's sitecustomize.py into /etc)\n"
  "        # leads nowhere from the descriptor: as if it were not there\n"
  "        try:\n"
  "            posix.stat(_join(self.rel, name), dir_fd=self.root)\n"
  "            return True\n"
  "        except OSError:\n"
  "            return False\n"
  "    def find_spec(self, fullname, target=None):\n"
  "        tail = fullname.rpartition('.')[2]\n"
  "        names = self._list()\n"
  "        portion = None\n"
  "        if tail in names:\n"
  "            sub = _finder(self.path + '/' + tail)\n"
  "            for init in _INITS:\n"
  "                if init in sub._list():\n"
  "                    return _spec(fullname, sub, init, [sub.path])\n"
  "            portion = sub.path\n"
  "        for suffix in _SUFFIXES:\n"
  "            if tail + suffix in names and self._usable(tail + suffix):\n"
  "                return _spec(fullname, self, tail + suffix, None)\n"
  "        if portion is not None:\n"
  "            spec = _ModuleSpec(fullname, None)\n"
  "            spec.submodule_search_locations = [portion]\n"
  "            return spec\n"
  "        return None\n"
  "\n"
  "def _finder(path):\n"
  "    f = sys.path_importer_cache.get(path)\n"
  "    if not isinstance(f, _Finder):\n"
  "        f = _Finder(*_locate(path), path)\n"
  "        sys.path_importer_cache[path] = f\n"
  "    return f\n"
  "\n"
  "class PermissionError(builtins.PermissionError):\n"
  "    __module__ = 'builtins'\n"
  "    def __init__(self, *args):\n"
  "        super().__init__(*args)\n"
  "        if self.errno == errno.EACCES and self.strerror == posix.strerror(errno.EACCES):\n"
  "            text = last_denial()\n"
  "            if text:\n"
  "                self.strerror = text\n"
  "\n"
  "_start_cwd = posix.getcwd()\n"
  "\n"
  "def _quote(word):\n"
  "    return \"'\" + word.replace(\"'\", \"'\\\\''\") + \"'\"\n"
  "\n"
  "def _in_cwd(text, cwd=None):\n"
  "    # the Shell runs in the directory it had when python3 started\n"
  "    where = posix.getcwd() if cwd is None else posix.fspath(cwd)\n"
  "    if isinstance(where, bytes):\n"
  "        where = where.decode(sys.getfilesystemencoding(), 'surrogateescape')\n"
  "    if where == _start_cwd:\n"
  "        return text\n"
  "    return 'cd -- %s && %s' % (_quote(where), text)\n"
  "\n"
  "def _run_in_child(text, env=None):\n"
  "    status = 126\n"
  "    try:\n"
  "        status = shell_run(text, _env_list(env))\n"
  "    finally:\n"
  "        posix._exit(status & 255)\n"
  "\n"
  "def _env_list(env):\n"
  "    # what exec's environment would have been (None: this process's)\n"
  "    if env is None or isinstance(env, (list, tuple)):\n"
  "        return env\n"
  "    return [_bytes(k) + b'=' + _bytes(v) for k, v in env.items()]\n"
  "\n"
  "def _word(a):\n"
  "    if isinstance(a, bytes):\n"
  "        return a.decode(sys.getfilesystemencoding(), 'surrogateescape')\n"
  "    return posix.fspath(a)\n"
  "\n"
  "def _fork_exec(args, executable_list, close_fds, fds_to_keep, cwd, env,\n"
  "               p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite,\n"
  "               errpipe_read, errpipe_write, restore_signals=True, call_setsid=False,\n"
  "               pgid_to_set=-1, gid=None, extra_groups=None, uid=None, child_umask=-1,\n"
  "               preexec_fn=None, *rest):\n"
  "    # what _posixsubprocess refuses in the parent, before any fork\n"
  "    for a in [*args, *(executable_list or ()), *(env or ())]:\n"
  "        if b'\\0' in _bytes(a):\n"
  "            raise ValueError('embedded null byte')\n"
  "    words = [_word(a) for a in args]\n"
  "    if len(words) >= 3 and words[0] == '/bin/sh' and words[1] == '-c':\n"
  "        text = words[2]  # shell=True: the text is the Shell's\n"
  "    else:\n"
  "        text = _command([_program(words, executable_list)] + words[1:])\n"
  "    text = _in_cwd(text, cwd)\n"
  "    pid = posix.fork()\n"
  "    if pid:\n"
  "        return pid\n"
  "    # _posixsubprocess's child, up to its exec: what fails before it is\n"
  "    # reported through errpipe_write, which Popen raises\n"
  "    try:\n"
  "        if c2pwrite == 0:  # moved out of the way of the dup2s\n"
  "            c2pwrite = posix.dup(c2pwrite)\n"
  "        while errwrite in (0, 1):\n"
  "            errwrite = posix.dup(errwrite)\n"
  "        for fd, target in ((p2cread, 0), (c2pwrite, 1), (errwrite, 2)):\n"
  "            if fd != -1 and fd != target:\n"
  "                posix.dup2(fd, target)\n"
  "        for fd in {p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite, errpipe_read}:\n"
  "            if fd > 2:\n"
  "                posix.close(fd)\n"
  "        try:\n"
  "            if cwd is not None:\n"
  "                posix.chdir(cwd)\n"
  "        except OSError as e:\n"
  "            posix.write(errpipe_write, b'OSError:%x:noexec' % (e.errno or 0))\n"
  "            posix._exit(255)\n"
  "        if child_umask >= 0:\n"
  "            posix.umask(child_umask)\n"
  "        if preexec_fn is not None:\n"
  "            try:\n"
  "                preexec_fn()\n"
  "            except BaseException:\n"
  "                posix.write(errpipe_write,\n"
  "                            b'SubprocessError:0:Exception occurred in preexec_fn.')\n"
  "                posix._exit(255)\n"
  "        posix.close(errpipe_write)  # what exec's success says\n"
  "    except BaseException:\n"
  "        posix._exit(126)\n"
  "    _run_in_child(text, env)\n"
  "\n"
  "def _program(words, candidates):\n"
  "    # Popen's executable= is what runs, args[0] only its argv[0] (which a\n"
  "    # command of the Shell cannot be given): the candidates are that\n"
  "    # program's path, or its name joined to each PATH entry\n"
  "    found = _word(candidates[0]) if candidates else words[0]\n"
  "    if found.rpartition('/')[2] == words[0].rpartition('/')[2]:\n"
  "        return words[0]\n"
  "    return found if len(candidates) == 1 else found.rpartition('/')[2]\n"
  "\n"
  "def _command(words):\n"
  "    words = [_word(w) for w in words]\n"
  "    # sys.executable names this interpreter, which the Shell runs as python3\n"
  "    if words and words[0] in (sys.executable, '/usr/bin/python3.11', '/usr/bin/python'):\n"
  "        words[0] = 'python3'\n"
  "    return ' '.join(_quote(w) for w in words)\n"
  "\n"
  "def _exec(program, args, what, env=None):\n"
  "    # the process becomes the command, as after exec: its status is ours;\n"
  "    # what exec would refuse is refused here, before the process is gone\n"
  "    if not isinstance(args, (tuple, list)):\n"
  "        raise TypeError('%s must be a tuple or list' % what)\n"
  "    if not args:\n"
  "        raise ValueError('%s must not be empty' % what)\n"
  "    words = [_bytes(a) for a in args]\n"
  "    if not words[0]:\n"
  "        raise ValueError('%s first element cannot be empty' % what)\n"
  "    if any(b'\\0' in w for w in words):\n"
  "        raise ValueError('embedded null byte')\n"
  "    _run_in_child(_in_cwd(_command([program] + list(args[1:]))), env)\n"
  "\n"
  "def _bytes(a):\n"
  "    a = posix.fspath(a)\n"
  "    return a.encode(sys.getfilesystemencoding(), 'surrogateescape') if isinstance(a, str) else "
  "a\n"
  "\n"
  "def _check_env(env):\n"
  "    if not hasattr(env, 'keys'):\n"
  "        raise TypeError('execve: environment must be a mapping object')\n"
  "    for key, value in env.items():\n"
  "        key, value = _bytes(key), _bytes(value)\n"
  "        if b'\\0' in key or b'\\0' in value:\n"
  "            raise ValueError('embedded null byte')\n"
  "        if not key or b'=' in key:\n"
  "            raise ValueError('illegal environment variable name')\n"
  "\n"
  "def _execv(path, args):\n"
  "    _exec(path, args, 'execv() arg 2')\n"
  "\n"
  "def _execve(path, args, env):\n"
  "    _check_env(env)\n"
  "    _exec(path, args, 'execve: argv', env)\n"
  "\n"
  "def _execvpe(file, args, env=None):\n"
  "    if env is None:\n"
  "        _execv(file, args)\n"
  "    else:\n"
  "        _execve(file, args, env)\n"
  "\n"
  "def _spawn(program, argv, env, *, file_actions=(), **attributes):\n"
  "    text = _in_cwd(_command([program] + list(argv)[1:]))\n"
  "    pid = posix.fork()\n"
  "    if pid:\n"
  "        return pid\n"
  "    try:\n"
  "        for action in file_actions or ():\n"
  "            if action[0] == posix.POSIX_SPAWN_OPEN:\n"
  "                fd = posix.open(action[2], action[3], action[4])\n"
  "                if fd != action[1]:\n"
  "                    posix.dup2(fd, action[1])\n"
  "                    posix.close(fd)\n"
  "            elif action[0] == posix.POSIX_SPAWN_CLOSE:\n"
  "                posix.close(action[1])\n"
  "            elif action[0] == posix.POSIX_SPAWN_DUP2:\n"
  "                posix.dup2(action[1], action[2])\n"
  "    except BaseException:\n"
  "        posix._exit(127)\n"
  "    _run_in_child(text, env)\n"
  "\n"
  "def _system(command):\n"
  "    text = _in_cwd(_word(command))\n"
  "    pid = posix.fork()\n"
  "    if pid == 0:\n"
  "        _run_in_child(text)\n"
  "    return posix.waitpid(pid, 0)[1]\n"
  "\n"
  "def _open_located(file):\n"
  "    # a frame's file the traceback printer opens (io.open(file, 'rb')),\n"
  "    # through the host's descriptor when it is there; else None\n"
  "    where = _locate(file)\n"
  "    if where is not None:\n"
  "        return _io.open(posix.open(where[1], _O_FILE, dir_fd=where[0]), 'rb')\n"
  "\n"
  "def _show_sources():\n"
  "    global _io\n"
  "    io = sys.modules['io']\n"
  "    if _roots and io.open is sys.modules['_io'].open:\n"
  "        _io = sys.modules['_io']\n"
  "        io.open = _source_opener(io.open, _open_located)\n"
  "\n"
  "def _pythonpath():\n"
  "    # sys.path is fixed, so CPython left PYTHONPATH out: before the\n"
  "    # standard library, absolute, as its own path computation puts it\n"
  "    text = None if sys.flags.ignore_environment else posix.environ.get(b'PYTHONPATH')\n"
  "    if text:\n"
  "        os = sys.modules['os']\n"
  "        sys.path[0:0] = [os.path.abspath(os.fsdecode(p)) for p in text.split(b':')]\n"
  "\n"
  "def _root_entries():\n"
  "    # A box's root has no /etc, so the C library knows no user: uid and\n"
  "    # gid 0 are root's, as the Shell's ls, stat and whoami say, at the\n"
  "    # home the box gives every process.\n"
  "    import pwd, grp\n"
  "    home = posix.environ.get(b'HOME', b'/').decode(sys.getfilesystemencoding(),\n"
  "                                                   'surrogateescape')\n"
  "    user = pwd.struct_passwd(('root', 'x', 0, 0, 'root', home, '/bin/sh'))\n"
  "    group = grp.struct_group(('root', 'x', 0, []))\n"
  "    def lookup(module, name, root, entry):\n"
  "        known = getattr(module, name)\n"
  "        def call(key):\n"
  "            try:\n"
  "                return known(key)\n"
  "            except KeyError:\n"
  "                if type(key) in (int, str) and key == root:\n"
  "                    return entry\n"
  "                raise\n"
  "        call.__name__ = call.__qualname__ = name\n"
  "        call.__doc__ = known.__doc__\n"
  "        setattr(module, name, call)\n"
  "    def every(module, name, entry):\n"
  "        known = getattr(module, name)\n"
  "        def call():\n"
  "            found = known()\n"
  "            return found if any(e[2] == 0 for e in found) else found + [entry]\n"
  "        call.__name__ = call.__qualname__ = name\n"
  "        call.__doc__ = known.__doc__\n"
  "        setattr(module, name, call)\n"
  "    lookup(pwd, 'getpwuid', 0, user)\n"
  "    lookup(pwd, 'getpwnam', 'root', user)\n"
  "    every(pwd, 'getpwall', user)\n"
  "    lookup(grp, 'getgrgid', 0, group)\n"
  "    lookup(grp, 'getgrnam', 'root', group)\n"
  "    every(grp, 'getgrall', group)\n"
  "\n"
  "def _venv_trim():\n"
  "    # a venv without the system's site-packages (site ran with its\n"
  "    # executable): site added no dist-packages, which the fixed search path\n"
  "    # names for the host's descriptor\n"
  "    site = sys.modules.get('site')\n"
  "    if site and '/usr' not in getattr(site, 'PREFIXES', ['/usr']) \\\n"
  "            and '" BOX_PYTHON_DIST "' in sys.path:\n"
  "        sys.path.remove('" BOX_PYTHON_DIST "')\n"
  "\n"
  "def _after_main(route):\n"
  "    if route:\n"
  "        _route_processes()\n"
  "    _venv_trim()\n"
  "    if _roots:\n"
  "        _pythonpath()\n"
  "        _root_entries()\n"
  "        builtins.open = _fast_open_of(builtins.open)\n"
  "    _show_sources()\n"
  "\n"
  "def _route_processes():\n"
  "    import _posixsubprocess\n"
  "    _posixsubprocess.fork_exec = _fork_exec\n"
  "    routes = {'system': _system, 'execv': _execv, 'execve': _execve, 'posix_spawn': _spawn,\n"
  "              'posix_spawnp': _spawn}\n"
  "    for name, fn in routes.items():\n"
  "        setattr(posix, name, fn)\n"
  "    if 'os' in sys.modules:  # imported (frozen) before this ran\n"
  "        os = sys.modules['os']\n"
  "        for name, fn in routes.items():\n"
  "            setattr(os, name, fn)\n"
  "        # PATH is the Shell's to search: the bare name goes to it\n"
  "        os.execvp = _execv\n"
  "        os.execvpe = _execvpe\n"
  "\n"
  "def _install(stdlib, dist, route):\n"
  "    if route:\n"
  "        _route_processes()\n"
  "    if stdlib >= 0:\n"
  "        _roots.append(('" BOX_PYTHON_STDLIB "', stdlib))\n"
  "        sys.path_importer_cache['/usr/lib/python311.zip'] = _Absent()\n"
  "    if dist >= 0:\n"
  "        _roots.append(('" BOX_PYTHON_DIST "', dist))\n"
  "    for path, _ in _roots:\n"
  "        _finder(path)\n"
  "    if stdlib >= 0:\n"
  "        _finder('" BOX_PYTHON_STDLIB "' + '/lib-dynload')\n";

static PyObject *py_load_library(PyObject *self, PyObject *args)
{
  (void)self;
  int dir;
  const char *file;
  if (!PyArg_ParseTuple(args, "is", &dir, &file)) return NULL;
  if (!host || !host->load_library) {
    PyErr_Format(PyExc_ImportError, "%s: no loader for the host's libraries", file);
    return NULL;
  }
  char *why = host->load_library(host->data, dir, file);
  if (why) {
    PyErr_SetString(PyExc_ImportError, why);
    free(why);
    return NULL;
  }
  Py_RETURN_NONE;
}

/* io.open as the traceback printer calls it: (file, "rb") of a frame's
 * file goes to open_located first.  A builtin, as the io.open it wraps:
 * a class keeping it as an attribute calls it unbound (test_io's do), and
 * it adds no frame for a warning's stack level to land on. */
static PyObject *io_open, *open_located, *open_doc;

static PyObject *py_open(PyObject *self, PyObject *args, PyObject *kwargs)
{
  (void)self;
  if (PyTuple_GET_SIZE(args) == 2 && (!kwargs || PyDict_GET_SIZE(kwargs) == 0) &&
      PyUnicode_CheckExact(PyTuple_GET_ITEM(args, 0)) &&
      PyUnicode_Check(PyTuple_GET_ITEM(args, 1)) &&
      PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(args, 1), "rb") == 0) {
    PyObject *f = PyObject_CallOneArg(open_located, PyTuple_GET_ITEM(args, 0));
    if (f != Py_None) return f;
    Py_DECREF(f);
  }
  return PyObject_Call(io_open, args, kwargs);
}

static PyMethodDef open_def = { "open", (PyCFunction)(void (*)(void))py_open,
                                METH_VARARGS | METH_KEYWORDS, NULL };

/* A builtin named open in module io, with wrapped's doc, calling def. */
static PyObject *open_like(PyMethodDef *def, PyObject *wrapped)
{
  if (!open_doc) { /* kept: the methods' docs point into it */
    open_doc = PyObject_GetAttrString(wrapped, "__doc__");
    PyErr_Clear();
  }
  if (open_doc && PyUnicode_Check(open_doc)) def->ml_doc = PyUnicode_AsUTF8(open_doc);
  PyErr_Clear();
  PyObject *module = PyUnicode_FromString("io");
  PyObject *f = module ? PyCFunction_NewEx(def, NULL, module) : NULL;
  Py_XDECREF(module);
  return f;
}

static PyObject *py_source_opener(PyObject *self, PyObject *args)
{
  (void)self;
  PyObject *wrapped, *located;
  if (!PyArg_ParseTuple(args, "OO", &wrapped, &located)) return NULL;
  Py_XSETREF(io_open, Py_NewRef(wrapped));
  Py_XSETREF(open_located, Py_NewRef(located));
  return open_like(&open_def, wrapped);
}

/* builtins.open: io.open with an opener that asks the host's fast path
 * first (host->open_read), so that a script's open() of a workspace file
 * costs one request to boxd instead of the mount's LOOKUP, OPEN, GETATTR
 * and RELEASE; the decision and its log entry are the same.  A builtin,
 * as the one it replaces: no frame of its own in a traceback. */
static PyObject *plain_open, *fast_opener;

/* The fast path's descriptor for path, else open(2) by path through the
 * mount, as FileIO opens; *err is errno. */
static int open_for_python(const char *path, int flags, char **denial, int *err)
{
  int fd = host && host->open_read ? host->open_read(host->data, path, flags, denial) : -2;
  if (fd == -2) {
    do fd = open(path, flags, 0666);
    while (fd < 0 && errno == EINTR);
  }
  *err = errno;
  return fd;
}

static PyObject *py_fast_opener(PyObject *self, PyObject *args)
{
  (void)self;
  PyObject *name, *bytes = NULL;
  int flags;
  if (!PyArg_ParseTuple(args, "Oi", &name, &flags) || !PyUnicode_FSConverter(name, &bytes))
    return NULL;
  const char *path = PyBytes_AS_STRING(bytes);
  char *denial = NULL;
  int err;
  PyThreadState *save = PyEval_SaveThread(); /* others run while the mount or boxd answers */
  int fd = open_for_python(path, flags, &denial, &err);
  PyEval_RestoreThread(save);
  Py_DECREF(bytes);
  if (fd >= 0) {
    free(denial);
    return PyLong_FromLong(fd);
  }
  if (err == EACCES && denial) {
    /* the refusal's text, which the mount's last denial is not */
    PyObject *text = PyUnicode_DecodeFSDefault(denial);
    PyObject *e = text ? PyObject_CallFunction(PyExc_OSError, "iOO", err, text, name) : NULL;
    if (e) PyErr_SetObject((PyObject *)Py_TYPE(e), e);
    Py_XDECREF(text);
    Py_XDECREF(e);
    free(denial);
    return NULL;
  }
  free(denial);
  errno = err;
  return PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, name);
}

static PyMethodDef fast_opener_def = { "_fast_opener", py_fast_opener, METH_VARARGS, NULL };

static PyObject *py_fast_open(PyObject *self, PyObject *args, PyObject *kwargs)
{
  (void)self;
  PyObject *opener = kwargs ? PyDict_GetItemString(kwargs, "opener") : NULL; /* borrowed */
  /* the caller's own opener, given or positional, goes as given */
  if ((opener && opener != Py_None) || PyTuple_GET_SIZE(args) >= 8)
    return PyObject_Call(plain_open, args, kwargs);
  PyObject *kw = kwargs ? PyDict_Copy(kwargs) : PyDict_New();
  PyObject *r = kw && PyDict_SetItemString(kw, "opener", fast_opener) == 0
                  ? PyObject_Call(plain_open, args, kw)
                  : NULL;
  Py_XDECREF(kw);
  return r;
}

static PyMethodDef fast_open_def = { "open", (PyCFunction)(void (*)(void))py_fast_open,
                                     METH_VARARGS | METH_KEYWORDS, NULL };

static PyObject *py_fast_open_of(PyObject *self, PyObject *wrapped)
{
  (void)self;
  if (!fast_opener) fast_opener = PyCFunction_NewEx(&fast_opener_def, NULL, NULL);
  if (!fast_opener) return NULL;
  Py_XSETREF(plain_open, Py_NewRef(wrapped));
  return open_like(&fast_open_def, wrapped);
}

static PyObject *py_last_denial(PyObject *self, PyObject *args)
{
  (void)self, (void)args;
  char *text = host && host->last_denial ? host->last_denial(host->data) : NULL;
  if (!text) Py_RETURN_NONE;
  PyObject *r = PyUnicode_DecodeFSDefault(text);
  free(text);
  return r;
}

/* In the child about to run a command: its environment becomes env
 * (bytes "NAME=value"), as exec would have made it, for the Shell to
 * hand the command. */
static bool set_environment(PyObject *env)
{
  PyObject *items = PySequence_Fast(env, "env must be a sequence");
  if (!items) return false;
  clearenv();
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(items, i); /* borrowed */
    const char *entry = PyBytes_Check(item) ? PyBytes_AsString(item) : NULL;
    if (!entry || !strchr(entry, '=')) continue;
    putenv(strdup(entry)); /* the process ends with the command */
  }
  Py_DECREF(items);
  return true;
}

static PyObject *py_shell_run(PyObject *self, PyObject *args)
{
  (void)self;
  const char *text;
  PyObject *env = Py_None;
  if (!PyArg_ParseTuple(args, "s|O", &text, &env)) return NULL;
  if (!host || !host->shell_run) {
    errno = ENOSYS;
    return PyErr_SetFromErrno(PyExc_OSError);
  }
  if (env != Py_None && !set_environment(env)) return NULL;
  fflush(NULL);
  return PyLong_FromLong(host->shell_run(host->data, text));
}

static PyObject *py_gateway_ca(PyObject *self, PyObject *args)
{
  (void)self, (void)args;
  if (!host || !host->gateway_ca) Py_RETURN_NONE;
  return PyUnicode_FromString(host->gateway_ca);
}

static PyMethodDef methods[] = {
  { "shell_run", py_shell_run, METH_VARARGS,
    "shell_run(text, env=None) -> status: text through the Shell, in a child forked for it" },
  { "load_library", py_load_library, METH_VARARGS,
    "load_library(dir_fd, file): load a shared object of the host and what it needs" },
  { "_source_opener", py_source_opener, METH_VARARGS,
    "_source_opener(io_open, open_located) -> io.open for the traceback printer" },
  { "_fast_open_of", py_fast_open_of, METH_O,
    "_fast_open_of(io_open) -> builtins.open through the host's fast path" },
  { "last_denial", py_last_denial, METH_NOARGS,
    "last_denial() -> the policy's text of this thread's last refusal, or None" },
  { "gateway_ca", py_gateway_ca, METH_NOARGS,
    "gateway_ca() -> the egress gateway's CA (PEM), or None without a gateway" },
  { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
  PyModuleDef_HEAD_INIT,
  "_boxpython",
  "The box's side of the interpreter.",
  -1,
  methods,
  NULL,
  NULL,
  NULL,
  NULL,
};

static PyObject *init_module(void)
{
  return PyModule_Create(&module_def);
}

void box_python_register(const BoxPythonHost *h)
{
  /* as compiled: a runtime started again after a warm one (warm.c) must
   * not find the first one's module copy in it */
  static const PyModuleDef_Base fresh = PyModuleDef_HEAD_INIT;
  module_def.m_base = fresh;
  host = h;
  PyImport_AppendInittab("_boxpython", init_module);
}

void box_python_rehost(const BoxPythonHost *h)
{
  host = h;
}

bool box_python_install(void)
{
  PyObject *mod = PyImport_ImportModule("_boxpython");
  if (!mod) return false;
  PyObject *dict = PyModule_GetDict(mod); /* borrowed */
  /* what C code importing from these frames looks up */
  if (PyDict_SetItemString(dict, "__builtins__", PyEval_GetBuiltins()) != 0) {
    Py_DECREF(mod);
    return false;
  }
  PyObject *code = Py_CompileString(boot_source, boot_name, Py_file_input);
  PyObject *r = code ? PyEval_EvalCode(code, dict, dict) : NULL;
  Py_XDECREF(code);
  bool ok = r != NULL;
  Py_XDECREF(r);
  if (ok) {
    r = PyObject_CallMethod(mod, "_install", "iii", host ? host->stdlib_dir : -1,
                            host ? host->dist_dir : -1, host && host->shell_run);
    ok = r != NULL;
    Py_XDECREF(r);
  }
  if (ok) {
    PyObject *refused = PyDict_GetItemString(dict, "PermissionError"); /* borrowed */
    ok = refused && box_python_map_errno(EACCES, refused);
    if (!ok && !PyErr_Occurred())
      PyErr_SetString(PyExc_RuntimeError, "the refusal type could not be installed");
  }
  Py_DECREF(mod);
  return ok;
}

bool box_python_after_main(void)
{
  PyObject *mod = PyImport_ImportModule("_boxpython");
  PyObject *r = mod ? PyObject_CallMethod(mod, "_after_main", "i", host && host->shell_run) : NULL;
  Py_XDECREF(mod);
  Py_XDECREF(r);
  return r != NULL;
}

"""`lua` in the Shell against real Lua 5.4, io.popen / os.execute
through the Shell's decision point, and the `box` module.

Every comparison runs `lua -e CODE` in a real box (alias → boxd → worker)
and `lua5.4 -e CODE` on this machine (argv[0] "lua", the Shell's
environment, the workspace as cwd) and compares stdout, stderr and status.
"""
import os
import shlex
import shutil
import signal
import subprocess

import pytest

from conftest import Box, permissive_box

LUA54 = shutil.which("lua5.4")
needs_lua54 = pytest.mark.skipif(LUA54 is None, reason="lua5.4 (Debian package lua5.4) is missing")

# Standard library, error messages and pcall results: stdout, stderr and
# status must be those of real Lua 5.4.
SNIPPETS = [
    'print(1, 1.0, -0.0, 10/3, 2^63, math.maxinteger + 1, 1e100, 0x10, 7 // 2, 7.0 // 2)',
    'print(math.type(1), math.type(1.5), math.type("1"), math.tointeger(3.0), 3 | 5, ~0)',
    'print(string.format("%q|%5.2f|%x|%s|%-4d|", "a\\nb\\0", 3.14159, 255, {} ~= nil, 7))',
    'print(("x"):rep(3, ","), ("hello"):byte(1, -1))',
    'print(string.pack(">I4i2", 1, -2):byte(1, -1))',
    'print(string.unpack("<i4 z", string.pack("<i4 z", 42, "hi")))',
    'print(string.packsize("i4i8"), pcall(string.pack, "i17", 1))',
    'print(utf8.char(72, 228, 8364, 128512), utf8.len("h\\u{E4}\\u{20AC}"), utf8.codepoint("\\u{20AC}"))',
    'for p, c in utf8.codes("a\\u{E9}") do io.write(p, ":", c, " ") end print(utf8.charpattern)',
    'print(utf8.len("\\xff"))',
    'local t = setmetatable({}, {__index = function(_, k) return k .. "!" end, '
    '__tostring = function() return "T" end}) print(t.x, tostring(t), #t)',
    'local mt = {__add = function(a, b) return "added" end, __eq = function() return true end} '
    'local a, b = setmetatable({}, mt), setmetatable({}, mt) print(a + b, a == b, rawequal(a, b))',
    'local t = setmetatable({}, {__newindex = function(t, k, v) rawset(t, k, v * 2) end}) '
    't.a = 21 print(rawget(t, "a"), rawlen({1, 2}), getmetatable("").__index == string)',
    'print(getmetatable(setmetatable({}, {__metatable = "locked"})), '
    'pcall(setmetatable, setmetatable({}, {__metatable = 1}), {}))',
    'print(type(collectgarbage("count")), collectgarbage("step"), collectgarbage("isrunning"), '
    'collectgarbage())',
    'local f = load("return 1 + ...") print(f(41), load("syntax error here"))',
    'print(type(load(function() return nil end)), pcall(load, 42))',
    'local env = {x = 5} print(load("return x", "chunk", "t", env)(), load("\\27Lua", "b", "t"))',
    'local co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end) '
    'print(co(1), co(10), pcall(co))',
    'local co = coroutine.create(function() error("in co") end) print(coroutine.resume(co)) '
    'print(coroutine.status(co), coroutine.isyieldable(), type(coroutine.running()))',
    'print(coroutine.close(coroutine.create(print)), select("#", coroutine.running()))',
    'print(pcall(error)) print(pcall(error, nil)) print(select("#", pcall(error, {code = 1})))',
    'print(pcall(error, "lvl1", 1)) print(pcall(error, "lvl2", 2)) print(pcall(error, "lvl0", 0))',
    'print(pcall(function() local x = nil; return x.y end))',
    'print(pcall(function() return 1 + {} end)) print(pcall(function() return #nil end))',
    'print(pcall(function() return 1 // 0 end)) print(1 // 0.0, -1 // 0.0, 0/0 ~= 0/0)',
    'print(pcall(string.rep)) print(pcall(("x").rep, "x", -1))',
    'print(select(-1, 1, 2, 3), pcall(select, 0))',
    'print(xpcall(function() error({}) end, function(e) return type(e) end))',
    'print(table.concat({1, 2.5, "x"}, "-"), pcall(table.concat, {{}}))',
    'local t = {5, 2, 8, 1} table.sort(t, function(a, b) return a > b end) '
    'print(table.unpack(t)) print(pcall(table.sort, {1, "x"}))',
    'print(table.unpack({1, 2, 3}, 2), table.pack().n, next({}, nil))',
    'print(tostring(nil), tostring(true), tonumber("0x1p4"), tonumber("z", 36), tonumber(" 10 "), '
    'tonumber("10", 99 - 97))',
    'print(math.floor(-3.5), math.ceil(-3.5), math.fmod(-7, 3), math.abs(math.mininteger), '
    'math.ult(1, -1))',
    'print(string.find("a.b", ".", 1, true), string.find("abc", "(b)(c)"), string.match("key=val", '
    '"(%w+)=(%w+)"))',
    'print(string.gsub("hello world", "o", {o = "0"}), string.gsub("abc", "%w", "%0%0", 2))',
    'print(pcall(string.gsub, "x", "(", ""))',
    'print(os.time({year = 2020, month = 1, day = 1, hour = 12}) ~= nil, os.date("!%Y-%m-%d", 0), '
    'os.getenv("USER"), os.getenv("NO_SUCH_VAR"))',
    'print(type(os.clock()), os.difftime(10, 4), type(os.tmpname()))',
    'do local x <close> = setmetatable({}, {__close = function() print("closed") end}) '
    'print("body") end',
    'local k <const> = 4 goto skip print("never") ::skip:: print(k)',
    'print(io.write("a", 1, 2.5, "\\n") == io.stdout, io.type(io.stdout), io.type(42))',
    'print(pcall(io.write, {}))',
    'print(io.open("/no/such/file"))',
    'print(pcall(io.lines, "/no/such/file"))',
    'print(os.remove("/no/such/file")) print(os.rename("/no/such/a", "/no/such/b"))',
    'print(io.read("a"), io.read("l"), io.read("n"), io.read(0))',
    'print(#arg, arg[0], arg[-1], arg[1])',
    'print(package.config:sub(1, 1), type(package.searchers), package.path == package.path)',
    'print(require("string") == string, package.loaded._G == _G, pcall(require))',
    'error("boom")',
    'error({})',
    'error(setmetatable({}, {__tostring = function() return "custom" end}))',
    'local x = ',
    'os.exit(3)',
    'os.exit(false)',
    'os.exit(true, true)',
    'io.stderr:write("to stderr\\n") io.stdout:write("to stdout\\n")',
    'print(string.format("%5s|%-5s|%.3s", "ab", "ab", "abcdef"), ("%d"):format(3.0))',
    'print(pcall(string.format, "%d", 3.5))',
    'print(math.max(1, 2.5), math.min(3), pcall(math.max))',
    'print(8 % 3.5, -8 % 3, 2^-1, 100000000000000, 1e15, 123456789012345678)',
    # routed through the Shell: what real Lua returns for the same commands
    'local f = io.popen("echo hi") print(f:read("a")) print(f:close())',
    'local f = io.popen("echo a; echo b") for l in f:lines() do io.write("[", l, "]") end '
    'print(f:close())',
    'print(os.execute("exit 3")) print(os.execute("true")) print(os.execute())',
    'print(os.execute("echo from execute"))',
    'local f = io.popen("cat", "w") f:write("through w\\n") print(f:close())',
    'print(pcall(io.popen, "echo", "rw"))',
    'local f = io.popen("exit 7") print(f:read("a"), f:close())',
]


def run_real_lua(box, code):
    env = {"HOME": str(box.home), "PATH": "/usr/bin:/bin", "PWD": str(box.workspace),
           "USER": "strands-box"}
    return subprocess.run(["lua", "-e", code], executable=LUA54, capture_output=True,
                          input=b"", cwd=str(box.workspace), env=env, timeout=30)


def run_box_bytes(box, source):
    return subprocess.run([str(box.box_dir / "bin" / "bash"), "-c", source], capture_output=True,
                          input=b"", cwd=str(box.workspace), env=box.env(), timeout=30)


@pytest.fixture(scope="module")
def lua_box(tmp_path_factory):
    b = permissive_box(tmp_path_factory.mktemp("lua"))
    yield b
    b.stop(signal.SIGTERM)


@needs_lua54
@pytest.mark.parametrize("code", SNIPPETS)
def test_like_lua54(lua_box, code):
    want = run_real_lua(lua_box, code)
    got = run_box_bytes(lua_box, "lua -e " + shlex.quote(code))
    assert (got.stdout, got.stderr, got.returncode) == (want.stdout, want.stderr, want.returncode)


@needs_lua54
def test_script_file_args_and_stdin(lua_box):
    script = lua_box.workspace / "s.lua"
    script.write_text("#!/usr/bin/env lua\nlocal n = select('#', ...)\n"
                      "print(n, ..., arg[0], arg[-1], #arg)\nprint(io.read('a'))\n"
                      "error('at the end')\n")
    try:
        env = {"HOME": str(lua_box.home), "PATH": "/usr/bin:/bin", "USER": "strands-box"}
        want = subprocess.run(["lua", "s.lua", "x", "y z"], executable=LUA54, capture_output=True,
                              text=True, input="in\n", cwd=str(lua_box.workspace), env=env)
        got = lua_box.bash("echo in | lua s.lua x 'y z'")
        assert (got.stdout, got.stderr, got.returncode) == \
            (want.stdout, want.stderr, want.returncode)
        got = lua_box.bash("lua - a b < s.lua")
        want = subprocess.run(["lua", "-", "a", "b"], executable=LUA54, capture_output=True,
                              text=True, stdin=open(script), cwd=str(lua_box.workspace), env=env)
        assert (got.stdout, got.stderr, got.returncode) == \
            (want.stdout, want.stderr, want.returncode)
    finally:
        script.unlink()


def test_refusals_and_status(lua_box):
    r = lua_box.bash("lua -i")
    assert (r.stdout, r.stderr, r.returncode) == \
        ("", "lua: interactive mode is not available in the box\n", 1)
    r = lua_box.bash("lua -e 'print(package.loadlib, package.searchers[3])'")
    assert (r.stdout, r.returncode) == ("nil\tnil\n", 0)
    # os.exit ends the command, not the Shell
    r = lua_box.bash("lua -e 'os.exit(3)' || echo after $?; lua -e 'io.write(\"x\") os.exit(0)'")
    assert (r.stdout, r.returncode) == ("after 3\nx", 0)


def test_files_through_the_mount(lua_box):
    r = lua_box.bash("lua -e 'local f = assert(io.open(\"made.txt\", \"w\")) f:write(\"one\\n\", 2) "
                     "f:close() for l in io.lines(\"made.txt\") do print(l) end "
                     "print(os.rename(\"made.txt\", \"moved.txt\"), os.remove(\"moved.txt\"))'")
    assert (r.stdout, r.stderr, r.returncode) == ("one\n2\ntrue\ttrue\n", "", 0)
    assert not (lua_box.workspace / "made.txt").exists()
    assert not (lua_box.workspace / "moved.txt").exists()
    r = lua_box.bash("lua -e 'local n = os.tmpname() local f = io.open(n, \"w\") f:write(\"t\") "
                     "f:close() print(io.open(n):read(\"a\"), os.remove(n))'")
    assert (r.stdout, r.returncode) == ("t\ttrue\n", 0)


def test_box_module_in_the_shell(lua_box):
    code = ('local s, o, e = box.run("echo out; echo err >&2; cat; exit 4", {stdin = "in\\n"}) '
            'print(s, o, e) print(box.run("echo plain")) box.log("note", 1, true) '
            'print(package.loaded.box == box, pcall(box.run))')
    r = lua_box.bash("lua -e " + shlex.quote(code))
    assert r.stdout == "4\tout\nin\n\terr\n\n0\tplain\n\t\ntrue\tfalse\t" \
        "bad argument #1 to 'box.run' (string expected, got no value)\n"
    assert r.stderr == "box: note\t1\ttrue\n"
    assert r.returncode == 0


def test_box_run_decides_each_command(tmp_path):
    b = permissive_box(tmp_path)
    try:
        r = b.bash("lua -e 'print(box.run(\"echo one; pwd\"))'")
        assert r.returncode == 0, r.stderr
        assert r.stdout == f"0\tone\n{b.workspace}\n\t\n"
        summary = [(v, a, res) for v, a, res in b.decision_summary() if a.startswith("shell:")]
        assert summary == [("permit", "shell:exec", "lua"), ("permit", "shell:exec", "echo"),
                           ("permit", "shell:exec", "pwd")]
    finally:
        b.stop()


def test_popen_rm_under_a_forbid(tmp_path):
    b = Box(tmp_path)
    b.write_policy("""\
        permit(principal, action, resource);
        @id("no_rm")
        forbid(principal, action in [Box::Action::"shell:exec", Box::Action::"shell:spawn"], resource)
        when { context.input.program == "rm" };
        """)
    b.write_config()
    b.start()
    try:
        (b.workspace / "x").mkdir()
        r = b.bash("lua -e 'local f = io.popen(\"rm -rf x\") print(f:read(\"a\")) "
                   "print(f:close()) print(os.execute(\"rm -rf x\"))'")
        assert r.returncode == 0
        assert r.stdout == "\nnil\texit\t126\nnil\texit\t126\n"
        lines = r.stderr.splitlines()
        assert len(lines) == 2 and lines[0] == lines[1]
        assert lines[0].startswith("strands-shell: effect denied: policy denied this operation on ")
        assert "[policy: no_rm]" in lines[0]
        assert (b.workspace / "x").is_dir()
        rm = [d for d in b.decisions()
              if d["strands.box.policy.action"] in ("shell:exec", "shell:spawn")
              and d.get("process.command") == "rm"]
        assert len(rm) == 2
        assert all(d["strands.box.policy.verdict"] == "deny" for d in rm)
        assert rm[0]["process.command_args"] == {"values": [
            {"stringValue": "rm"}, {"stringValue": "-rf"}, {"stringValue": "x"}]}
    finally:
        b.stop()


def test_box_decide_is_a_logged_dry_run(tmp_path):
    b = Box(tmp_path)
    b.write_policy("""\
        permit(principal, action == Box::Action::"shell:exec", resource);
        @id("no-env")
        @description("The .env file holds credentials.")
        forbid(principal, action == Box::Action::"fs:read", resource)
        when { context.input.path like "*/.env" };
        permit(principal, action == Box::Action::"fs:read", resource)
        when { context.input.path like "~/src/project/*" };
        """)
    b.write_config()
    b.start()
    try:
        script = ("print(box.decide('fs:read', {path='~/src/project/a.txt', operation='read_content'})) "
                  "print(box.decide('fs:read', {path='~/src/project/.env', operation='read_content'})) "
                  "print(pcall(box.decide, 'fs:read', {path=1}))")
        r = b.bash(f'lua -e "{script}"')
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert lines[0] == "true\tpolicy permitted this operation on '~/src/project/a.txt'."
        assert lines[1] == ("false\tpolicy denied this operation on '~/src/project/.env' "
                            "[policy: no-env]: The .env file holds credentials.")
        assert lines[2].startswith("true\tfalse\t")
        dry = [d for d in b.decisions() if d.get("strands.box.policy.dry_run") is True]
        assert [(d["strands.box.policy.verdict"], d["strands.box.policy.resource"]) for d in dry] == [
            ("permit", "~/src/project/a.txt"), ("deny", "~/src/project/.env"), ("deny", "1")]
        # Nothing was read: a dry run raises no fs decision of its own.
        assert [d["strands.box.policy.action"] for d in b.decisions()
                if not d.get("strands.box.policy.dry_run")] == ["shell:exec"]
    finally:
        b.stop()

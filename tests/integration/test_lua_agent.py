"""`box lua` runs a Lua script as the box's agent; the example
agent (examples/lua-agent/survey.lua) explores a repository, runs its tests
through box.run and writes a report, all decided by the box's policy."""
import subprocess

from conftest import BOX, REPO, Box, git

SURVEY = REPO / "examples" / "lua-agent" / "survey.lua"

CALC = """\
local M = {}
function M.add(a, b) return a + b end
-- TODO: overflow checks
function M.div(a, b) return a // b end
return M
"""
GOOD_TEST = """\
package.path = "lib/?.lua;" .. package.path
local calc = require("calc")
assert(calc.add(2, 3) == 5)
print("calc ok")
"""
BAD_TEST = """\
package.path = "lib/?.lua;" .. package.path
local calc = require("calc")
assert(calc.div(7, 2) == 3.5, "integer division")
"""


def policy_for(b, write_report=True):
    ws = b.workspace
    text = f"""\
        permit(principal, action == Box::Action::"shell:exec", resource);
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when {{ context.input.program == "git" }};
        permit(principal, action == Box::Action::"fs:read", resource)
        when {{ context.input.path like "~/src/project/*" }};
        """
    if write_report:
        text += """\
        permit(principal, action == Box::Action::"fs:write", resource)
        when { context.input.path == "~/src/project/SURVEY.md" };
        """
    assert str(ws).startswith(str(b.home))
    b.write_policy(text)


def make_repo(b, tests):
    (b.workspace / "lib").mkdir()
    (b.workspace / "lib" / "calc.lua").write_text(CALC)
    (b.workspace / "tests").mkdir()
    for name, text in tests.items():
        (b.workspace / "tests" / name).write_text(text)
    git("add", ".", cwd=b.workspace)
    git("commit", "-q", "-m", "calc", cwd=b.workspace)


def box_lua(b, *args):
    return subprocess.run([str(BOX), "lua", "--config", str(b.config), str(SURVEY), *args],
                          capture_output=True, text=True, env=b.env(), cwd=str(b.root),
                          timeout=120)


def test_survey_agent_reports_and_fails_on_a_failing_test(tmp_path):
    b = Box(tmp_path)
    make_repo(b, {"calc_test.lua": GOOD_TEST, "div_test.lua": BAD_TEST})
    policy_for(b)
    b.write_config()
    r = box_lua(b)
    assert r.returncode == 1, r.stderr
    assert r.stdout == "survey: 4 files, 3 TODO notes, 1/2 tests passed; report in SURVEY.md\n"
    report = (b.workspace / "SURVEY.md").read_text()
    assert f"# Survey of {b.workspace}\n" in report
    assert "- lua: 3\n- rs: 1\n" in report
    assert "- lib/calc.lua:3: overflow checks\n" in report
    assert "- tests/calc_test.lua: passed (status 0)\n" in report
    assert "- tests/div_test.lua: FAILED (status 1)\n" in report
    assert "integer division" in report
    assert 'box: ran "lua tests/calc_test.lua": status 0' in r.stderr
    d = b.decision_summary()
    assert ("permit", "shell:exec", "lua") == d[0]          # the agent itself
    assert ("permit", "fs:write", "~/src/project/SURVEY.md") in d
    assert sum(1 for v, a, res in d if a == "shell:exec" and res == "lua") == 3
    assert any(a == "shell:spawn" and v == "permit" for v, a, _ in d)   # git ls-files
    assert ("permit", "fs:read", "~/src/project/lib/calc.lua") in d


def test_survey_agent_refused_its_report(tmp_path):
    b = Box(tmp_path)
    make_repo(b, {"calc_test.lua": GOOD_TEST})
    policy_for(b, write_report=False)
    b.write_config()
    r = box_lua(b, "SURVEY.md")
    assert r.returncode == 2, r.stderr
    assert "survey: cannot write the report: SURVEY.md: " in r.stderr
    assert not (b.workspace / "SURVEY.md").exists()
    d = b.decision_summary()
    assert ("deny", "fs:write", "~/src/project/SURVEY.md") in d


def test_box_lua_usage_and_script_errors(tmp_path):
    r = subprocess.run([str(BOX), "lua"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "box lua --config FILE SCRIPT [ARGS...]" in r.stderr
    b = Box(tmp_path)
    b.write_policy('permit(principal, action, resource);\n')
    b.write_config()
    script = tmp_path / "args.lua"
    script.write_text("#!/usr/bin/env lua\nprint(arg[0] == ..., select('#', ...), ...)\n"
                      "print(arg[1], arg[2], #arg)\nerror('stop here')\n")
    r = subprocess.run([str(BOX), "lua", "--config", str(b.config), "args.lua", "a b", "-x"],
                       capture_output=True, text=True, env=b.env(), cwd=str(tmp_path), timeout=60)
    assert r.returncode == 1
    assert r.stdout == "false\t2\ta b\t-x\na b\t-x\t2\n"
    # (box run may disclose the sandboxes on stderr first)
    assert "\nlua: args.lua:4: stop here\nstack traceback:\n" in "\n" + r.stderr, r.stderr

#!/usr/bin/env python3
"""What `meson install` adds beside the binaries, checked against the box
they describe: the bash completion offers every verb and option `--help`
prints, the man pages render without groff warnings and their policy
examples load, and `systemd-analyze verify` accepts box@.service.

Usage: check_files.py BUILD_ROOT PACKAGING_SOURCE_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

build, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
box = os.path.join(build, "box", "box")
failures = []


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def help_verbs():
    out = run([box, "--help"]).stdout
    cmds = out.split("Commands:")[1].split("Options:")[0]
    verbs = []
    for line in cmds.splitlines():
        m = re.match(r"\s+(\S+)(?:\s*\|\s*(\S+))?", line)
        if m:
            verbs += [v for v in m.groups() if v]
    return verbs


def complete(words):
    """What bash offers for `box WORDS<TAB>` (the last word is the one typed)."""
    script = (
        "source /usr/share/bash-completion/bash_completion\n"
        f"source {os.path.join(src, 'bash-completion', 'box')}\n"
        'COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))\n'
        'COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}\n'
        "_box box \"${COMP_WORDS[-1]}\" \"${COMP_WORDS[-2]}\"\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = dict(os.environ, PATH=os.path.dirname(box) + ":" + os.environ.get("PATH", ""))
    r = run(["bash", "-c", script, "bash", "box", *words], env=env)
    if r.returncode != 0:
        failures.append(f"completion of {words} failed: {r.stderr}")
    return set(r.stdout.split())


def check_completion():
    verbs = help_verbs()
    if len(verbs) < 10:
        failures.append(f"box --help lists too few verbs: {verbs}")
    offered = complete([""])
    for v in verbs:
        if v not in offered:
            failures.append(f"completion does not offer the verb {v!r}")
    for v in offered - set(verbs) - {"--help", "--version"}:
        failures.append(f"completion offers {v!r}, which box --help does not list")
    for v in verbs:
        r = run([box, v, "--help"])
        usage = r.stdout + r.stderr
        first = usage.split("\n\n")[0]
        flags = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", first)) - {"-h"}
        flags |= set(re.findall(r"^\s+(--[a-z-]+)=", usage, re.M))
        if v == "policy":
            continue
        got = complete([v, "-"])
        for f in flags:
            if f not in got:
                failures.append(f"completion of `box {v} -` lacks {f} (box {v} --help names it)")
    for sub in ("check", "decide", "generate-schema", "replay"):
        if sub not in complete(["policy", ""]):
            failures.append(f"completion of `box policy` lacks {sub}")


def check_man():
    pages = {"box.1": 1, "box.toml.5": 5, "box-policy.5": 5}
    text = {}
    for page in pages:
        path = os.path.join(src, "man", page)
        r = run(["groff", "-man", "-ww", "-z", path])
        if r.returncode != 0 or r.stderr.strip():
            failures.append(f"groff warns on {page}: {r.stderr.strip()}")
        text[page] = open(path).read()
    for v in help_verbs():
        if not re.search(rf"^\.B {re.escape(v)}\b|^\.B .*\b{re.escape(v)}\\fR", text["box.1"], re.M):
            failures.append(f"box.1 documents no `{v}` command")
    # box-policy.5's examples must load as a box loads a policy
    examples = re.findall(r"^\.nf\n(.*?)^\.fi", text["box-policy.5"], re.M | re.S)
    policies = [e for e in examples if "permit(" in e or "forbid(" in e]
    if len(policies) < 2:
        failures.append("box-policy.5 has no policy examples")
    with tempfile.TemporaryDirectory() as tmp:
        for i, e in enumerate(policies):
            p = os.path.join(tmp, f"ex{i}.dw")
            with open(p, "w") as f:
                f.write(e.replace("\\-", "-"))
            r = run([box, "policy", "check", p])
            if r.returncode != 0 or r.stdout.strip() != "ok":
                failures.append(f"box-policy.5 example {i} does not load: {r.stdout}{r.stderr}")


def check_unit():
    unit = os.path.join(build, "packaging", "box@.service")
    body = open(unit).read()
    if "run --quiet --config /etc/box/%i.toml" not in body:
        failures.append("box@.service does not run /etc/box/%i.toml")
    # box run must accept the unit's flags as written
    exec_start = re.search(r"^ExecStart=(\S+) (.*)$", body, re.M).group(2).split()
    r = run([box, *exec_start[:-1], "/nonexistent/x.toml"])
    if "unknown option" in (r.stdout + r.stderr).lower() or r.returncode == 0:
        failures.append(f"box refuses the unit's ExecStart flags: {r.stderr}")
    with tempfile.TemporaryDirectory() as tmp:
        # verify checks ExecStart's program and the Documentation= pages on
        # this machine: point them at the build tree and the source pages
        for sec in ("1", "5"):
            os.makedirs(os.path.join(tmp, "man", "man" + sec))
        for page in os.listdir(os.path.join(src, "man")):
            shutil.copy(os.path.join(src, "man", page),
                        os.path.join(tmp, "man", "man" + page[-1], page))
        local = os.path.join(tmp, "box@demo.service")
        with open(local, "w") as f:
            f.write(re.sub(r"^ExecStart=\S+/box ", f"ExecStart={box} ", body, flags=re.M))
        env = dict(os.environ, MANPATH=os.path.join(tmp, "man"))
        r = run(["systemd-analyze", "verify", local], env=env)
        if r.returncode != 0 or r.stderr.strip():
            failures.append(f"systemd-analyze verify: {r.returncode} {r.stderr.strip()}")
        r = run(["systemd-analyze", "security", "--offline=yes", "--threshold=100", local], env=env)
        if r.returncode != 0:
            failures.append(f"systemd-analyze security: {r.stdout}{r.stderr}")


check_completion()
check_man()
check_unit()
for f in failures:
    print("FAIL:", f)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)

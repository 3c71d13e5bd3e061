#!/usr/bin/python3
"""Holds commands.def and shell/meson.build's list to each other.

Usage: check_table.py commands.def SOURCE...   (the sources meson builds)

Every row's function is defined (`int box_cmd_x(BoxCmd *c)` at the start
of a line) in exactly one listed file of shell/commands/; every such
definition has a row; every listed file of shell/commands/ defines a
command or is one of the helpers below; every .c file of the directory is
listed; rows are sorted by name with no name twice (registry.c looks them
up by bsearch).  Prints each fault, exits 1 if there is one."""
import os
import re
import sys

# Files of shell/commands/ that define no command.
HELPERS = {
    "registry.c", "builtins.c", "curl_dl.c", "head_tail.c", "find_parse.c", "sed_script.c",
    "messages.c", "options.c", "input.c", "files.c", "values.c", "nested.c",
    "archive.c", "compress.c", "digest.c", "lazy_dl.c", "archive_dl.c", "magic_dl.c",
    "zlib_dl.c", "lzma_dl.c",
    "interp.c", "python_dl.c", "hostdir.c",
    "python_launcher.c", "python_split.c",
}

ROW = re.compile(r'^BOX_COMMAND\("([^"]+)",\s*(\w+),\s*(SPECIAL|BUILTIN|UTILITY)\)\s*$')
DEF = re.compile(r'^int\s+(box_cmd_\w+)\s*\(\s*BoxCmd\s*\*\s*\w*\s*\)\s*(?:\{|$)', re.M)


def main(argv):
    table, sources = argv[1], argv[2:]
    cmddir = os.path.dirname(os.path.abspath(table))
    faults = []
    names, funcs = [], set()
    with open(table, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("BOX_COMMAND"):
                m = ROW.match(line)
                if not m:
                    faults.append(f"{table}:{n}: not a row BOX_COMMAND(\"name\", function, KIND): {line.strip()}")
                    continue
                names.append(m.group(1))
                funcs.add(m.group(2))
    for a, b in zip(names, names[1:]):
        if a.encode() >= b.encode():
            faults.append(f"{table}: row {b!r} after {a!r}: rows must be sorted by name, each name once")

    listed = {os.path.abspath(s) for s in sources if os.path.dirname(os.path.abspath(s)) == cmddir}
    defined = {}
    for path in sorted(listed):
        base = os.path.basename(path)
        if not path.endswith(".c"):
            continue
        with open(path, encoding="utf-8") as f:
            found = DEF.findall(f.read())
        for fn in found:
            if fn not in funcs:
                faults.append(f"{path}: defines {fn}, which has no row in {table}")
            if fn in defined:
                faults.append(f"{fn} is defined in both {defined[fn]} and {path}")
            defined[fn] = path
        if not found and base not in HELPERS:
            faults.append(f"{path}: listed in shell/meson.build but defines no command of {table}")
    for fn in sorted(funcs - defined.keys()):
        faults.append(f"{fn}: has a row in {table} but no file listed in shell/meson.build defines it")
    for base in sorted(os.listdir(cmddir)):
        if base.endswith(".c") and os.path.join(cmddir, base) not in listed:
            faults.append(f"{os.path.join(cmddir, base)}: not listed in shell/meson.build")
    for f in faults:
        print(f, file=sys.stderr)
    print(f"{len(names)} rows, {len(funcs)} functions, {len(listed)} files of {cmddir}")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

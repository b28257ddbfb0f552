#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""unit-exec.py - the command a systemd unit's ExecStart= runs, for machines
where systemd is not PID 1 (CI containers): ci/mgmt-test.sh starts the
installed daemon exactly as its unit says.

    python3 ci/unit-exec.py UNIT_FILE    -> argv, NUL-separated, on stdout

Follows systemd.service(5) and systemd.exec(5) as far as these units need:
the last ExecStart= (a single command; prefixes - @ : + ! are dropped),
quoting with "..." and '...', and variables from Environment= and
EnvironmentFile= (a missing "-"-prefixed file is skipped), where the
caller's environment wins for a variable it sets (so that a test can give
its own options). "$VAR" alone as a word becomes the variable's words;
"${VAR}" becomes one word. Specifiers (%i, %n, ...) are refused: the
units that this reads have none in ExecStart.
"""

import os
import re
import shlex
import sys


def unit_lines(path):
    """The [Service] section's key=value lines, continuation lines joined."""
    out, section, buf = [], None, ""
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if buf:
                line = buf + line
                buf = ""
            if line.endswith("\\"):
                buf = line[:-1] + " "
                continue
            s = line.strip()
            if not s or s[0] in "#;":
                continue
            if s.startswith("["):
                section = s
                continue
            if section == "[Service]" and "=" in s:
                k, v = s.split("=", 1)
                out.append((k.strip(), v.strip()))
    return out


def env_file(path, env):
    optional = path.startswith("-")
    path = path.lstrip("-")
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        if optional:
            return
        raise
    for line in text.splitlines():
        s = line.strip()
        if not s or s[0] in "#;" or "=" not in s:
            continue
        k, v = s.split("=", 1)
        words = shlex.split(v) if v.strip() else [""]
        env[k.strip()] = " ".join(words)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: unit-exec.py UNIT_FILE")
    env, execstart = {}, None
    for k, v in unit_lines(sys.argv[1]):
        if k == "Environment":
            for w in shlex.split(v):
                if "=" in w:
                    a, b = w.split("=", 1)
                    env[a] = b
        elif k == "EnvironmentFile":
            env_file(v, env)
        elif k == "ExecStart":
            execstart = v
    if not execstart:
        sys.exit("%s: no ExecStart=" % sys.argv[1])
    env.update(os.environ)
    execstart = execstart.lstrip("-@:+!")
    if re.search(r"%[a-zA-Z]", execstart):
        sys.exit("%s: ExecStart= has specifiers: %s" % (sys.argv[1], execstart))
    argv = []
    for word in shlex.split(execstart):
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if m:
            argv += env.get(m.group(1), "").split()
            continue
        argv.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda x: env.get(x.group(1), ""), word))
    sys.stdout.write("".join(a + "\0" for a in argv))


if __name__ == "__main__":
    main()

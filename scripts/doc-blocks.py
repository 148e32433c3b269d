#!/usr/bin/env python3
"""Runs every code block of the given Markdown files, in order, as written.

A README line nobody runs rots: a flag is renamed, a file moves, and the
first user to paste it finds out. So each fenced block says what it is, by
its info string, and this runner holds it to that:

  ```sh            a shell sequence: one fresh `bash -e` per block, run from
                   the document's directory (below); the block passes if bash
                   exits 0.
  ```sh servers    one server command line per line (`\\` continues a line):
                   each is started alone in a fresh scratch directory, must
                   print "listening on" on stdout and keep running, and must
                   exit 0 on SIGTERM.
  ```console       a transcript: `$ CMD` lines are run in order by one bash
                   from a fresh scratch directory; the lines under a command
                   are its expected stdout, exactly; a command ending in `&`
                   is a server, waited for until it prints "listening on"
                   and stopped with SIGTERM after the last command.
  ```rust, ```c, ```toml, ... with `<!-- doc-blocks: file=PATH -->` on the
                   line above: the block is PATH's content, byte for byte
                   (the suite compiles and runs PATH; the README shows it).
  ```yaml, ```toml, ```text   data or sample output, not run.

`<!-- doc-blocks: skip REASON -->` above a block skips it, with the reason
printed; `<!-- doc-blocks: serve-first REASON -->` runs only the block's
first line, as a `sh servers` line, and skips the rest for REASON (the
README's top block: its second command is this suite); a block with no info string is an error (say what it is).

`<!-- doc-blocks: cwd=checkout -->` anywhere in a file runs its `sh` blocks
from the checkout's root (the README's paths are relative to it); otherwise
they run, in order, in one scratch directory made for that file. Either
way nothing may be left in the checkout: `git status` is compared before
and after.

Usage: doc-blocks.py [--bin DIR]... FILE.md...  (each --bin goes first on
PATH; MEMSTORED_SRC is set to the checkout's root). `cargo install` in a
block installs into a scratch CARGO_INSTALL_ROOT whose bin goes first on
PATH, so the README's install is what the later blocks run, and the
user's own ~/.cargo/bin is left alone.

Run as root (CI is), `memstored` refuses to start without `-u`, as memcached
does; the blocks are written for a user's shell, so then `memstored` on PATH
is a two-line wrapper that adds `-u root` to a command line without `-u`
(the tests' `as_caller()` does the same).
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK_TIMEOUT_S = 600
READY_TIMEOUT_S = 60
DIRECTIVE = re.compile(r"<!--\s*doc-blocks:\s*(.*?)\s*-->")
DATA_KINDS = {"yaml", "toml", "text", "json", "ini"}


class Block:
    def __init__(self, path, line, info, body, directive):
        self.path, self.line, self.info, self.body = path, line, info, body
        self.directive = directive

    @property
    def where(self):
        path = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{path}:{self.line}"


def blocks_of(path):
    """Fenced blocks of a Markdown file, each with the directive above it."""
    lines = path.read_text().split("\n")
    out, i, last_directive = [], 0, None
    while i < len(lines):
        line = lines[i]
        m = DIRECTIVE.search(line)
        if m and not line.startswith("```"):
            last_directive = m.group(1)
        if line.startswith("```"):
            info, start, body = line[3:].strip(), i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append(Block(path, start, info, "\n".join(body) + "\n", last_directive))
            last_directive = None
        elif line.strip() and not m:
            last_directive = None
        i += 1
    return out


def logical_lines(text):
    """Lines with `\\` continuations joined; blank and comment lines dropped."""
    out, cur = [], ""
    for line in text.split("\n"):
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        if cur.strip() and not cur.strip().startswith("#"):
            out.append(cur.strip())
        cur = ""
    return out


def stop_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_sh(block, cwd, env):
    proc = subprocess.Popen(
        ["bash", "-e", "-c", block.body], cwd=cwd, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=BLOCK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        stop_group(proc)
        out, _ = proc.communicate()
        return f"timed out after {BLOCK_TIMEOUT_S} s\n{out.decode(errors='replace')}"
    stop_group(proc)  # anything it left running in the background
    if proc.returncode != 0:
        return f"exit {proc.returncode}\n{out.decode(errors='replace')}"
    return None


def wait_listening(proc, log, ready_timeout):
    """Waits (bounded) for "listening on" in a server's stdout file."""
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        if "listening on" in Path(log).read_text(errors="replace"):
            return None
        if proc.poll() is not None:
            return f"exited {proc.returncode} before listening"
        time.sleep(0.05)
    return f"not listening after {ready_timeout} s"


def run_servers(block, env, cwd, ready_timeout=READY_TIMEOUT_S):
    """Each line alone: listening, then exit 0 on SIGTERM. From `cwd`, else a
    scratch directory of its own."""
    for cmd in logical_lines(block.body):
        with tempfile.TemporaryDirectory(prefix="doc-server-") as scratch:
            log = Path(scratch) / ".stdout"
            with open(log, "w") as out, open(Path(scratch) / ".stderr", "w") as err:
                proc = subprocess.Popen(
                    ["bash", "-c", "exec " + cmd], cwd=cwd or scratch, env=env,
                    stdout=out, stderr=err, start_new_session=True,
                )
            problem = wait_listening(proc, log, ready_timeout)
            if problem is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    rc = proc.wait(timeout=READY_TIMEOUT_S)
                    problem = None if rc == 0 else f"exit {rc} on SIGTERM"
                except subprocess.TimeoutExpired:
                    problem = "still running 60 s after SIGTERM"
            stop_group(proc)
            if problem:
                stderr = (Path(scratch) / ".stderr").read_text(errors="replace")
                return f"`{cmd}`: {problem}\n{stderr}"
    return None


def console_script(block):
    """The transcript as one bash script that checks each command's output."""
    steps, cmd, expected = [], None, []
    for line in block.body.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            if cmd is not None:
                steps.append((cmd, expected))
            cmd, expected = line[2:], []
        elif cmd is not None and cmd.rstrip().endswith("\\"):
            cmd = cmd.rstrip()[:-1] + " " + line.strip()
        elif cmd is not None:
            expected.append(line)
        else:
            raise ValueError("a console block starts with a `$ ` command")
    if cmd is not None:
        steps.append((cmd, expected))
    script = ["servers=()", "trap 'for p in \"${servers[@]}\"; do kill -TERM $p 2>/dev/null; done' EXIT"]
    for n, (cmd, expected) in enumerate(steps):
        code = re.sub(r"\s+#[^'\"]*$", "", cmd).rstrip()
        if code.endswith("&"):
            script += [
                f"{code[:-1]} >.server{n}.out 2>.server{n}.err & servers+=($!)",
                f"for _ in $(seq 1200); do grep -q 'listening on' .server{n}.out && break;"
                f" kill -0 $! 2>/dev/null || {{ cat .server{n}.err >&2; exit 1; }}; sleep 0.05; done",
                f"grep -q 'listening on' .server{n}.out || {{ echo 'server {n} not listening' >&2; exit 1; }}",
            ]
            continue
        want = "".join(e + "\n" for e in expected)
        script += [
            f"echo {shlex_quote('$ ' + code)} >&2",
            f"{code} >.out{n}",
        ]
        if expected:
            script += [
                f"cat >.want{n} <<'DOC_BLOCKS_EOF'\n{want}DOC_BLOCKS_EOF",
                f"diff .want{n} .out{n} >&2 || {{ echo 'output differs (above: - documented, + got)' >&2; exit 1; }}",
            ]
    script.append('for p in "${servers[@]}"; do kill -TERM $p; wait $p || exit 1; done; servers=()')
    return "\n".join(script) + "\n"


def shlex_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def check_file(block, spec):
    target = ROOT / spec
    if not target.is_file():
        return f"{spec} does not exist"
    if target.read_text() != block.body:
        return f"differs from {spec} (the block must be the file, byte for byte)"
    return None


def root_wrapper():
    """A directory holding `memstored` that adds `-u root` when -u is not
    given; it runs the next `memstored` on PATH (the README installs it
    only in one of its blocks)."""
    d = tempfile.mkdtemp(prefix="doc-blocks-bin-")
    wrapper = Path(d) / "memstored"
    wrapper.write_text(
        "#!/bin/bash\n"
        "# doc-blocks.py: memstored as root, as a user's shell would run it\n"
        'real="$(PATH="${PATH#*:}" command -v memstored)" || { echo "no memstored on PATH" >&2; exit 127; }\n'
        'for a in "$@"; do case "$a" in -u|-u*|--user|--user=*) exec "$real" "$@";; esac; done\n'
        'exec "$real" -u root "$@"\n'
    )
    wrapper.chmod(0o755)
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", action="append", default=[])
    ap.add_argument("--only", type=int, help="run only the block opening on this line (while writing one)")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(b).resolve()) for b in args.bin] + [env["PATH"]])
    env["MEMSTORED_SRC"] = str(ROOT)
    install_root = tempfile.mkdtemp(prefix="doc-blocks-install-")
    env["CARGO_INSTALL_ROOT"] = install_root
    env["PATH"] = os.path.join(install_root, "bin") + os.pathsep + env["PATH"]
    if os.geteuid() == 0:
        env["PATH"] = root_wrapper() + os.pathsep + env["PATH"]
    before = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    failures, ran, skipped = [], 0, 0
    for name in args.files:
        path = Path(name).resolve()
        text = path.read_text()
        from_checkout = "doc-blocks: cwd=checkout" in text
        scratch = Path(tempfile.mkdtemp(prefix="doc-blocks-"))
        for block in blocks_of(path):
            if args.only is not None and block.line != args.only:
                continue
            kind = block.info.split()
            directive = block.directive or ""
            if directive.startswith("skip"):
                reason = directive[4:].strip()
                if not reason:
                    failures.append((block, "skip without a reason"))
                print(f"skip  {block.where}: {reason}")
                skipped += 1
                continue
            started = time.monotonic()
            if directive.startswith("serve-first"):
                first = logical_lines(block.body)[:1]
                print(f"skip  {block.where} after its first line: {directive[11:].strip()}")
                block.body = "\n".join(first) + "\n"
                # `cargo run --release` builds first: on a fresh clone that
                # is minutes, so it gets the time of a whole block.
                problem = run_servers(block, env, ROOT, BLOCK_TIMEOUT_S)
            elif directive.startswith("file="):
                problem = check_file(block, directive[5:].strip())
            elif not kind:
                problem = "a block with no info string: say what it is (sh, console, text, ...)"
            elif kind[0] == "sh" and kind[1:] == ["servers"]:
                problem = run_servers(block, env, None)
            elif kind[0] == "sh":
                problem = run_sh(block, ROOT if from_checkout else scratch, env)
            elif kind[0] == "console":
                with tempfile.TemporaryDirectory(prefix="doc-console-") as d:
                    block.body = console_script(block)
                    problem = run_sh(block, d, env)
            elif kind[0] in DATA_KINDS:
                print(f"data  {block.where} ({kind[0]})")
                continue
            else:
                problem = f"unknown kind `{block.info}` (no file= directive)"
            ran += 1
            took = time.monotonic() - started
            print(f"{'FAIL' if problem else 'ok'}    {block.where} ({block.info or '?'}, {took:.1f} s)", flush=True)
            if problem:
                failures.append((block, problem))
        shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree(install_root, ignore_errors=True)
    after = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    if after != before:
        failures.append((None, f"the blocks changed the checkout (git status):\n{after}"))
    for block, problem in failures:
        print(f"\n--- {block.where if block else 'checkout'}: {problem}", file=sys.stderr)
    print(f"doc-blocks: {ran} run, {skipped} skipped, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

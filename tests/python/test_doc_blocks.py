"""scripts/doc-blocks.py, the runner of the docs' code blocks, on small
Markdown files: a runner that passed whatever it was given would make every
"runs as written" in the README a claim nobody checks, so each way a block
can be wrong must fail it, and a right one must pass."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
RUNNER = ROOT / "scripts" / "doc-blocks.py"
FENCE = "```"


def run(tmp_path, markdown):
    doc = tmp_path / "doc.md"
    doc.write_text(textwrap.dedent(markdown).replace("~~~", FENCE))
    proc = subprocess.run(
        [sys.executable, str(RUNNER), str(doc)],
        capture_output=True, text=True, timeout=300,
    )
    return proc.returncode, proc.stdout + proc.stderr


# A stand-in server line: says it listens, exits 0 on SIGTERM.
SERVER = "bash -c 'echo listening on test; trap \"exit 0\" TERM; while :; do sleep 0.05; done'"


def test_blocks_that_hold_pass(tmp_path):
    rc, out = run(tmp_path, f"""
        ~~~sh
        echo one > made-here.txt
        ~~~

        The scratch directory carries over to the next block:

        ~~~sh
        test -f made-here.txt
        ~~~

        ~~~console
        $ printf 'a\\nb\\n'
        a
        b
        $ true   # no output documented: only its exit status counts
        ~~~

        ~~~sh servers
        {SERVER}
        ~~~

        ~~~yaml
        not: run
        ~~~

        <!-- doc-blocks: skip because this is what the test says -->
        ~~~sh
        exit 3
        ~~~
        """)
    assert rc == 0, out
    assert "4 run, 1 skipped, 0 failed" in out, out


def test_a_failing_sh_block_fails(tmp_path):
    rc, out = run(tmp_path, """
        ~~~sh
        echo before
        false
        echo never
        ~~~
        """)
    assert rc == 1 and "exit 1" in out and "never" not in out, out


def test_console_output_must_match(tmp_path):
    rc, out = run(tmp_path, """
        ~~~console
        $ echo got
        documented
        ~~~
        """)
    assert rc == 1 and "output differs" in out, out


def test_a_block_without_info_string_fails(tmp_path):
    rc, out = run(tmp_path, """
        ~~~
        echo what am I
        ~~~
        """)
    assert rc == 1 and "no info string" in out, out


def test_a_skip_needs_a_reason(tmp_path):
    rc, out = run(tmp_path, """
        <!-- doc-blocks: skip -->
        ~~~sh
        true
        ~~~
        """)
    assert rc == 1 and "skip without a reason" in out, out


def test_a_file_block_must_be_the_file(tmp_path):
    rc, out = run(tmp_path, """
        <!-- doc-blocks: file=scripts/doc-blocks.py -->
        ~~~python
        print("not the runner")
        ~~~
        """)
    assert rc == 1 and "differs from scripts/doc-blocks.py" in out, out


def test_a_server_that_never_listens_or_exits_badly_fails(tmp_path):
    rc, out = run(tmp_path, """
        ~~~sh servers
        bash -c 'echo starting; exit 4'
        ~~~
        """)
    assert rc == 1 and "exited 4 before listening" in out, out
    rc, out = run(tmp_path, """
        ~~~sh servers
        bash -c 'echo listening on x; trap "exit 5" TERM; while :; do sleep 0.05; done'
        ~~~
        """)
    assert rc == 1 and "exit 5 on SIGTERM" in out, out

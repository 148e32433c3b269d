"""scripts/check-layers.py, the server's layering check: it passes on the
sources as they are, and fails on each way a change could break the layers
(an upward import, a wire naming another, a record operation or a request
counter outside command/, a cycle). A check that passed whatever it read
would let the layers rot unseen, so each breach is made here on a copy of
the sources and must be caught, naming the file and line."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
CHECK = ROOT / "scripts" / "check-layers.py"
SERVER = ROOT / "crates" / "server" / "src"


def run(*args):
    proc = subprocess.run(
        [sys.executable, str(CHECK), *map(str, args)],
        capture_output=True, text=True, timeout=120,
    )
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture
def src(tmp_path):
    copy = tmp_path / "src"
    shutil.copytree(SERVER, copy)
    return copy


def append(path, text):
    """Adds `text` after the file's imports (before any test module)."""
    body = path.read_text()
    cut = body.find("#[cfg(test)]")
    if cut < 0:
        cut = len(body)
    path.write_text(body[:cut] + text + "\n" + body[cut:])


def test_the_sources_hold_their_layers():
    rc, out = run(SERVER)
    assert rc == 0, out
    assert "holds its layers" in out


def test_engine_cli_and_protocol_have_no_import_cycle():
    crates = ROOT / "crates"
    rc, out = run("--acyclic", crates / "engine" / "src", crates / "cli" / "src", crates / "protocol" / "src")
    assert rc == 0, out


def test_an_upward_import_fails(src):
    append(src / "state" / "server.rs", "use crate::net::listener::Placement;")
    rc, out = run(src)
    assert rc == 1, out
    assert "state/server.rs:" in out and "state/ imports net/, a layer above it" in out


def test_an_upward_path_in_code_fails(src):
    append(src / "command" / "get.rs", "fn peek() { let _ = crate::protocols::out::Out::new(); }")
    rc, out = run(src)
    assert rc == 1, out
    assert "command/get.rs:" in out and "command/ imports protocols/" in out


def test_one_wire_importing_another_fails(src):
    append(src / "protocols" / "binary" / "mod.rs", "use crate::protocols::text::TextSession;")
    rc, out = run(src)
    assert rc == 1, out
    assert "protocols/binary uses protocols/text" in out


def test_the_network_naming_a_wire_fails(src):
    append(src / "net" / "connection.rs", "use crate::protocols::binary::BinarySession;")
    rc, out = run(src)
    assert rc == 1, out
    assert "net/connection names the wire protocols/binary" in out


def test_a_record_operation_outside_command_fails(src):
    append(src / "protocols" / "text" / "mod.rs",
           "fn sneak(srv: &Server) { let _ = srv.db.get_record(b\"k\"); }")
    rc, out = run(src)
    assert rc == 1, out
    assert "protocols/text/mod.rs:" in out and "record operation `get_record` outside command/" in out


def test_a_plain_get_on_a_database_outside_command_fails(src):
    append(src / "protocols" / "binary" / "mod.rs", "fn sneak(srv: &Server) { let _ = srv.db.get(b\"k\"); }")
    rc, out = run(src)
    assert rc == 1, out
    assert "record operation `get` outside command/" in out


def test_a_request_counter_bumped_outside_command_fails(src):
    append(src / "protocols" / "binary" / "mod.rs",
           "fn sneak(srv: &Server) { crate::state::counters::bump(&srv.counters.here().get_hits); }")
    rc, out = run(src)
    assert rc == 1, out
    assert "a per-request counter bumped outside command/" in out


def test_a_cycle_inside_a_layer_fails(src):
    append(src / "state" / "budget.rs", "use crate::state::conns::ConnInfo;")
    append(src / "state" / "conns.rs", "use crate::state::budget::Budget;")
    rc, out = run(src)
    assert rc == 1, out
    assert "import cycle" in out and "state/budget" in out and "state/conns" in out


def test_a_cycle_between_engine_files_fails(tmp_path):
    src = tmp_path / "engine"
    shutil.copytree(ROOT / "crates" / "engine" / "src", src)
    # Any two files that do not import each other yet.
    a, b = src / "access.rs", src / "activity.rs"
    assert a.exists() and b.exists(), "pick two engine files that exist"
    append(a, "use crate::activity::*;")
    append(b, "use crate::access::*;")
    rc, out = run("--acyclic", src)
    assert rc == 1, out
    assert "import cycle" in out and "access.rs" in out and "activity.rs" in out

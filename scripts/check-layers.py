#!/usr/bin/env python3
"""The server crate's layering, checked over its sources (docs/design.md "Server").

Why a script and not crates: the layers are folders of one crate (one build,
one set of features), so nothing in the compiler stops an import that runs
upward. This reads every `crate::...` path in crates/server/src and fails when:

1. a file imports a layer above its own (state < exec < command < protocols <
   replication < net < app);
2. inside protocols/, one wire imports another (each wire is a unit: a file or
   folder directly under protocols/; session, out and stats are shared by all;
   `any` is the sniff and may name every wire; a few uses are declared below,
   each with its reason);
3. net/ names a wire, outside the ports that serve one wire (kt_port, grpc_port);
4. the units of one layer import each other in a cycle;
5. code outside command/ calls a record operation of the engine (replication/
   applies a master's changes and is the one exception), or bumps a per-request
   counter (state/counters.rs) other than the byte counts.

The engine and the command-line tools are not layered by folders, but their
modules must not import each other in a cycle either: `--acyclic SRC` reads
the `crate::` and `super::` paths of every file under SRC, resolves each to
the file of the deepest module it names, and fails on any cycle among files.

Usage: check-layers.py [SRC]   (default: crates/server/src)
       check-layers.py --acyclic SRC...
Exit 1 on any violation, each printed as FILE:LINE: what, and why it is wrong.
"""

import re
import sys
from pathlib import Path

LAYERS = ["state", "exec", "command", "protocols", "replication", "net", "app"]
RANK = {name: i for i, name in enumerate(LAYERS)}

# Protocol units every wire may use.
PROTOCOL_BASE = {"session", "out", "stats"}
# Cross-wire uses inside protocols/, each with why it is not a second copy.
PROTOCOL_ALLOWED = {
    # KT's binary protocol and KT's TSV-RPC run the same procedures as
    # MessagePack-RPC (Kyoto Tycoon serves one procedure table on all three).
    ("kt", "rpc"),
}
# net/ units that serve one wire and so may name it.
# kt_port: Kyoto Tycoon's binary protocol and HTTP on one port (ktserver's).
# grpc_port: Tkrzw-RPC's gRPC service (protocols/grpc) on --grpc-listen, served
# by tonic's HTTP/2 server, not by a session behind the sniff.
NET_WIRE_PORTS = {"kt_port", "grpc_port"}
NET_MAY_NAME = {"any", "session", "out", "stats"}

# Engine record operations: names no other type in the server uses.
RECORD_OPS_ANY_RECEIVER = {
    "append_with", "apply_update", "compare_exchange_multi",
    "compare_exchange_multi_expiring", "compare_exchange_with", "get_multi", "get_record",
    "get_with", "incr_decr", "incr_decr_cas", "incr_decr_with", "increment_double",
    "increment_double_from", "increment_from", "lookup_access", "process_meta",
    "remove_and_get", "remove_multi", "remove_with_cas", "resume_cursor", "search_similar",
    "search_within", "set_and_get", "set_multi", "store_capped",
}
# Names other types share (maps, sets, channels): flagged on a database only.
RECORD_OPS_ON_DB = {
    "access", "add", "append", "clear", "compare_exchange", "cursor", "get", "increment", "lookup", "process",
    "remove", "replace", "search", "set", "store", "touch",
}
RECORD_WRITERS = {"command", "replication"}
BYTE_COUNTERS = ("bytes_read", "bytes_written")

CRATE_PATH = re.compile(r"\bcrate::(\{[^}]*\}|\w+(?:::\w+)?)")
ANY_CALL = re.compile(r"\.\s*(" + "|".join(sorted(RECORD_OPS_ANY_RECEIVER)) + r")\s*\(")
DB_CALL = re.compile(r"\b\w*db(?:\(\))?\s*\.\s*(" + "|".join(sorted(RECORD_OPS_ON_DB)) + r")\s*\(")


def place(rel):
    """(layer, unit) of a file: unit = the entry directly under the layer."""
    parts = rel.parts
    if len(parts) == 1:
        return None, None
    unit = parts[1].removesuffix(".rs") if len(parts) > 1 else None
    if unit == "mod":
        unit = None
    return parts[0], unit


def code_lines(text):
    """Lines with comments and the trailing test module blanked, numbered."""
    cut = re.search(r"^#\[cfg\(test\)\]\s*\nmod tests \{", text, re.M)
    if cut:
        text = text[: cut.start()]
    for n, line in enumerate(text.split("\n"), 1):
        line = re.sub(r"//.*", "", line)
        yield n, line


def targets(path_text):
    """The (first, second) segments a `crate::` path names."""
    if path_text.startswith("{"):
        for item in re.split(r",", path_text.strip("{}")):
            segs = [s for s in item.strip().split("::") if s]
            if segs:
                yield segs[0], segs[1] if len(segs) > 1 else None
        return
    segs = path_text.split("::")
    yield segs[0], segs[1] if len(segs) > 1 else None


def check(src):
    src = Path(src)
    problems = []
    edges = {}  # (layer, unit) -> {(layer, unit): (file, line)}
    for path in sorted(src.rglob("*.rs")):
        rel = path.relative_to(src)
        layer, unit = place(rel)
        if layer is None or layer not in RANK:
            continue
        # A test file is a leaf nothing imports: it may set up through any layer.
        if path.stem == "tests" or path.stem.endswith("_tests"):
            continue
        text = path.read_text()
        for n, line in code_lines(text):
            where = f"{rel}:{n}"
            for m in CRATE_PATH.finditer(line):
                for to_layer, to_unit in targets(m.group(1)):
                    if to_layer not in RANK:
                        continue  # crate-root items (VERSION) and the like
                    if RANK[to_layer] > RANK[layer]:
                        problems.append(f"{where}: {layer}/ imports {to_layer}/, a layer above it")
                        continue
                    if to_layer == layer and to_unit and unit and to_unit != unit:
                        edges.setdefault((layer, unit), {}).setdefault((layer, to_unit), where)
                    if layer == "protocols" and to_layer == "protocols" and unit and to_unit:
                        ok = (
                            to_unit == unit
                            or to_unit in PROTOCOL_BASE and unit not in PROTOCOL_BASE
                            or unit == "any"
                            or (unit, to_unit) in PROTOCOL_ALLOWED
                            or unit in PROTOCOL_BASE and to_unit in PROTOCOL_BASE
                        )
                        if not ok:
                            problems.append(f"{where}: protocols/{unit} uses protocols/{to_unit}: one wire may not import another")
                    if layer == "net" and to_layer == "protocols" and unit not in NET_WIRE_PORTS:
                        if to_unit not in NET_MAY_NAME:
                            problems.append(f"{where}: net/{unit} names the wire protocols/{to_unit}; go through protocols::any")
            if layer in RECORD_WRITERS:
                continue
            for m in list(ANY_CALL.finditer(line)) + list(DB_CALL.finditer(line)):
                problems.append(f"{where}: record operation `{m.group(1)}` outside command/")
            if "here()" in line and not any(b in line for b in BYTE_COUNTERS) and rel.as_posix() != "state/counters.rs":
                problems.append(f"{where}: a per-request counter bumped outside command/")
    problems += cycles(edges)
    return problems


def cycles(edges, name=lambda node: "/".join(node)):
    """Cycles in a graph of {node: {node: where}}, each reported once."""
    found, seen = [], set()

    def walk(node, stack):
        for nxt in edges.get(node, {}):
            if nxt in stack:
                ring = stack[stack.index(nxt):] + [nxt]
                key = frozenset(ring)
                if key not in seen:
                    seen.add(key)
                    names = " -> ".join(name(r) for r in ring)
                    found.append(f"{edges[ring[-2]][nxt]}: import cycle {names}")
            elif len(stack) < 64:
                walk(nxt, stack + [nxt])

    for start in sorted(edges):
        walk(start, [start])
    return found


def module_of(src, rel):
    """A file's module path: a/b.rs and a/b/mod.rs are both ('a', 'b')."""
    parts = list(rel.with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return tuple(parts)


def file_graph(src):
    """Edges between the files of one crate, from `crate::` and `super::` paths."""
    src = Path(src)
    files = {}
    for path in sorted(src.rglob("*.rs")):
        rel = path.relative_to(src)
        if path.stem == "tests" or path.stem.endswith("_tests") or rel.parts[0] in ("bin", "examples"):
            continue
        files[module_of(src, rel)] = rel
    edges = {}
    ref = re.compile(r"\b((?:crate|super)(?:::super)*)::((?:\w+::)*\w+)")
    for mod, rel in files.items():
        for n, line in code_lines((src / rel).read_text()):
            for m in ref.finditer(line):
                head, tail = m.group(1), m.group(2).split("::")
                if head == "crate":
                    base = ()
                else:
                    # `super` from a/b.rs (module a::b) is a; from a/b/mod.rs too.
                    ups = head.count("super")
                    base = mod[: max(len(mod) - ups, 0)]
                target = None
                path = base
                for seg in tail:
                    path = path + (seg,)
                    if path in files:
                        target = path
                if target is None and base in files:
                    target = base
                if target is not None and target != mod and target[: len(mod)] != mod:
                    edges.setdefault(mod, {}).setdefault(target, f"{rel}:{n}")
    return files, edges


def acyclic(src):
    """Cycles among one crate's files, each reported once."""
    files, edges = file_graph(src)
    located = {k: {t: f"{src}/{w}" for t, w in v.items()} for k, v in edges.items()}
    return cycles(located, lambda node: str(files[node]))


def report(problems, failed, held):
    """Prints each problem; the summary line says which way it went."""
    for p in problems:
        print(p)
    if problems:
        print(f"check-layers: {len(problems)} {failed}", file=sys.stderr)
        return 1
    print(f"check-layers: {held}")
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--acyclic":
        srcs = sys.argv[2:]
        problems = [p for src in srcs for p in acyclic(src)]
        return report(problems, "import cycle(s)", f"no import cycle in {' '.join(srcs)}")
    src = sys.argv[1] if len(sys.argv) > 1 else "crates/server/src"
    return report(check(src), f"violation(s) in {src}", f"{src} holds its layers")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The top functions of a callgrind dump, self and inclusive cost, per
record. Reads the dump itself: callgrind_annotate 3.19 gives a dump taken
with `callgrind_control -d` mid-run all to `clone`.

  scripts/lib/callgrind_top.py DUMP RECORDS [TOP]
"""
import collections
import re
import sys


def parse(path):
    self_cost = collections.Counter()
    incl_calls = collections.Counter()
    names = {}
    fn = cfn = None
    after_calls = False

    def name(kind, rest):
        m = re.match(r"\((\d+)\)(?: (.*))?", rest)
        if not m:
            return rest
        key = (kind, m.group(1))
        if m.group(2):
            names[key] = m.group(2)
        return names.get(key, rest)

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                fn = name("fn", line[3:])
            elif line.startswith(("cfn=", "cfi=", "cfl=")):
                if line.startswith("cfn="):
                    cfn = name("fn", line[4:])
            elif line.startswith("calls="):
                after_calls = True
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if after_calls:
                    if cfn != fn:
                        incl_calls[fn] += cost
                    after_calls = False
                elif fn is not None:
                    self_cost[fn] += cost
    incl = collections.Counter()
    for k in set(self_cost) | set(incl_calls):
        incl[k] = self_cost[k] + incl_calls[k]
    return self_cost, incl


def short(n):
    n = re.sub(r"<[^<>]*>", "<>", n) if len(n) > 110 else n
    return n[:110]


def main():
    path, records = sys.argv[1], int(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    self_cost, incl = parse(path)
    total = sum(self_cost.values())
    print(f"total {total} = {total / records:.0f} per record")
    print("\nself (instructions per record, share)")
    for n, c in self_cost.most_common(top):
        print(f"{c / records:8.1f} {100 * c / total:5.1f}%  {short(n)}")
    print("\ninclusive (instructions per record)")
    for n, c in incl.most_common(top * 2):
        print(f"{c / records:8.1f}  {short(n)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Compares two directories written by scripts/network-snapshot.sh: every run must have the same
exit status and stderr, and JSON equal up to a relative 1e-9 in numbers (anything else exactly).
Prints each difference; exit status 1 if any."""
import json
import math
import pathlib
import sys

RELATIVE = 1e-9


def differences(a, b, where):
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            yield f"{where}: keys {sorted(a.keys() ^ b.keys())} differ"
        for key in a.keys() & b.keys():
            yield from differences(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{where}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differences(x, y, f"{where}[{i}]")
    elif isinstance(a, bool) or isinstance(b, bool) or not (
            isinstance(a, (int, float)) and isinstance(b, (int, float))):
        if a != b:
            yield f"{where}: {a!r} vs {b!r}"
    elif a != b and not math.isclose(a, b, rel_tol=RELATIVE, abs_tol=0.0):
        yield f"{where}: {a!r} vs {b!r} (relative {abs(a - b) / max(abs(a), abs(b)):.3g})"


def main():
    before, after = map(pathlib.Path, sys.argv[1:3])
    names = sorted({p.stem for p in before.glob("*.err")} | {p.stem for p in after.glob("*.err")})
    failed = exact = close = 0
    for name in names:
        found = []
        for d in (before, after):
            err, out = d / f"{name}.err", d / f"{name}.json"
            found.append((err.read_text() if err.exists() else None,
                          out.read_text() if out.exists() else None))
        (err_a, out_a), (err_b, out_b) = found
        problems = []
        if err_a is None or err_b is None:
            problems.append("missing in one snapshot")
        elif err_a != err_b:
            problems.append(f"exit status or stderr differ:\n  {err_a!r}\n  {err_b!r}")
        elif out_a != out_b:
            try:
                problems += list(differences(json.loads(out_a), json.loads(out_b), "$"))
            except json.JSONDecodeError:
                problems.append("output differs and is not JSON")
            if not problems:
                close += 1
        else:
            exact += 1
        if problems:
            failed += 1
            print(f"{name}:")
            for p in problems[:20]:
                print(f"  {p}")
    print(f"{len(names)} runs: {exact} identical, {close} equal to {RELATIVE:g} relative, "
          f"{failed} different")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

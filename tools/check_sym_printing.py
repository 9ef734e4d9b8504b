#!/usr/bin/env python3
"""Checks that torchcore's printed symbolic expressions round-trip through
sympy: each printed text, parsed with sympy (`Mod`, `Min`, `Max` as
sympy's, Python's sign rules; `a//b` read as floor division), evaluates to the value the
Rust expression has at the same assignment.

    SYM_PRINT_DUMP=/tmp/exprs.jsonl cargo test -p c10-core --lib printed_expressions_read_back
    python tools/check_sym_printing.py exprs.jsonl

The assignments are the four of the Rust test: (s0, s1, s2) = (2, 3, 5),
(7, -4, 3), (-3, 6, -5), (1, 1, 9); `null` marks a value Python would
not have (a division by zero).
"""
import json
import sys

import sympy

ASSIGNMENTS = [(2, 3, 5), (7, -4, 3), (-3, 6, -5), (1, 1, 9)]
S = sympy.symbols("s0 s1 s2", integer=True)


def main():
    lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    local = {"s0": S[0], "s1": S[1], "s2": S[2], "Mod": sympy.Mod,
             "Min": sympy.Min, "Max": sympy.Max}
    checked = bad = 0
    for case in lines:
        expr = sympy.sympify(case["text"], locals=local)
        for a, want in zip(ASSIGNMENTS, case["values"]):
            if want is None:
                continue
            try:
                got = expr.xreplace(dict(zip(S, map(sympy.Integer, a))))
                got = int(got)
            except (ZeroDivisionError, TypeError) as e:
                got = f"error {e}"
            checked += 1
            if got != want:
                bad += 1
                if bad <= 10:
                    print(f"{case['text']} at {a}: sympy {got}, Rust {want}")
    print(f"{len(lines)} expressions, {checked} values checked, {bad} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

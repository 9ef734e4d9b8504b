#!/usr/bin/env python3
"""Errors audit: lines of library code (crates/*/src, excluding
`#[cfg(test)]` modules and doc comments) that call `.unwrap()`,
`.expect(`, `panic!(`, `unreachable!(` or `unimplemented!(`/`todo!(`
without a `// proof`, `// cannot fire` or `// infallible` marker.

Usage: tools/audit_panics.py [--all] (--all lists every line, marked or not)
"""
import os
import re
import sys

PAT = re.compile(r"\.unwrap\(\)|\.expect\(|\bpanic!\(|\bunreachable!\(|\btodo!\(|\bunimplemented!\(")
MARK = re.compile(r"//.*(proof|cannot fire|infallible)")
show_all = "--all" in sys.argv
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
unmarked = marked = 0
for crate in sorted(os.listdir(os.path.join(root, "crates"))):
    src = os.path.join(root, "crates", crate, "src")
    for dirpath, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".rs") or f == "tests.rs" or "/tests" in dirpath:
                continue
            path = os.path.join(dirpath, f)
            in_test = False
            depth = 0
            for no, line in enumerate(open(path, encoding="utf-8"), 1):
                s = line.strip()
                if s.startswith("#[cfg(test)]"):
                    in_test = True
                    depth = 0
                    continue
                if in_test:
                    depth += line.count("{") - line.count("}")
                    if depth <= 0 and "}" in line:
                        in_test = False
                    continue
                if s.startswith("//"):
                    continue
                if PAT.search(line):
                    if MARK.search(line):
                        marked += 1
                        if show_all:
                            print(f"ok   {os.path.relpath(path, root)}:{no}: {s}")
                    else:
                        unmarked += 1
                        print(f"TODO {os.path.relpath(path, root)}:{no}: {s}")
print(f"unmarked: {unmarked}, marked: {marked}")
sys.exit(1 if unmarked else 0)

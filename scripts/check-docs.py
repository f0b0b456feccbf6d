#!/usr/bin/env python3
"""Fails when a public or open declaration has no `///` doc comment.

Usage: scripts/check-docs.py [DIR ...]   (default: Sources Adapters Samples)

A declaration counts as documented when the nearest non-attribute line above it is a `///`
line or closes a `/** */` block. Extensions are exempt (their members are checked one by one).
"""
import pathlib
import re
import sys

DECL = re.compile(
    r"^\s*(?:@[\w().:, \"]+\s+)*(?:(?:nonisolated|final|static|class|override|mutating|required|convenience|"
    r"indirect|@\w+)\s+)*(public|open)\s+(?:(?:nonisolated|final|static|class|override|mutating|required|"
    r"convenience|indirect|private\(set\)|internal\(set\))\s+)*"
    r"(func|var|let|init|subscript|struct|class|enum|protocol|typealias|actor|case|associatedtype|static|macro)\b")


def undocumented(path: pathlib.Path):
    lines = path.read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        if not DECL.match(line) or re.match(r"^\s*public\s+extension\b", line):
            continue
        above = index - 1
        while above >= 0 and (lines[above].strip().startswith("@") or lines[above].strip() == ""):
            if lines[above].strip() == "":
                break
            above -= 1
        previous = lines[above].strip() if above >= 0 else ""
        if previous.startswith("///") or previous.endswith("*/"):
            continue
        yield index + 1, line.strip()


def main() -> int:
    roots = sys.argv[1:] or ["Sources", "Adapters", "Samples"]
    problems = 0
    for root in roots:
        for path in sorted(pathlib.Path(root).rglob("*.swift")):
            if "/.build" in str(path) or "/Tests/" in str(path):
                continue
            for number, text in undocumented(path):
                print(f"{path}:{number}: public declaration without a doc comment: {text}")
                problems += 1
    if problems:
        print(f"{problems} public declaration(s) lack a doc comment", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

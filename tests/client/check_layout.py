"""libsamsa's sources keep the shape client/README.md draws.

    check_layout.py CLIENT_SRC

- no file over 1,500 lines;
- no circle of files: the files of client/src, linked by the functions (and
  const tables) each one uses of the others, call one way only;
- core/ calls nothing above it: it reaches a producer, a consumer or an admin
  handle, and an op of theirs, only through the ops tables they fill, and
  never asks which kind a handle is (c->kind == 'p').

Prints each finding and a summary; exits 1 on any finding.
"""
import os
import re
import sys

MAX_LINES = 1500
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;{]*\)\s*\{", re.M)
TABLE = re.compile(r"^const struct \w+ (\w+) = \{", re.M)


def strip(text):
    """Comments and string literals blanked."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def read(root):
    files = {}
    for dirpath, _, names in os.walk(root):
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    files[os.path.relpath(path, root)] = f.read()
    return files


def call_graph(files):
    """{file: {other file: [names it uses of it]}} over the .c files."""
    code = {f: strip(t) for f, t in files.items() if f.endswith(".c")}
    owner = {}
    for f, t in code.items():
        for m in DEFINITION.finditer(t):
            owner[m.group(1)] = f
        for m in TABLE.finditer(t):
            owner[m.group(1)] = f
    used = {f: set(re.findall(r"\b\w+\b", t)) for f, t in code.items()}
    graph = {f: {} for f in code}
    for name, g in owner.items():
        for f in code:
            if f != g and name in used[f]:
                graph[f].setdefault(g, []).append(name)
    return graph


def circles(graph):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(n):
        index[n] = low[n] = len(index)
        stack.append(n)
        on.add(n)
        for m in graph[n]:
            if m not in index:
                visit(m)
                low[n] = min(low[n], low[m])
            elif m in on:
                low[n] = min(low[n], index[m])
        if low[n] == index[n]:
            comp = []
            while True:
                m = stack.pop()
                on.discard(m)
                comp.append(m)
                if m == n:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for n in sorted(graph):
        if n not in index:
            visit(n)
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip())
        return 2
    root = sys.argv[1]
    files = read(root)
    findings = []
    for f, t in sorted(files.items()):
        n = t.count("\n")
        if n > MAX_LINES:
            findings.append(f"{f}: {n} lines (at most {MAX_LINES})")
    graph = call_graph(files)
    for comp in circles(graph):
        edges = [f"{a} -> {b} ({', '.join(sorted(set(graph[a][b]))[:4])})"
                 for a in comp for b in comp if b in graph[a]]
        findings.append("files calling each other in a circle: " + "; ".join(edges))
    for f in sorted(graph):
        if not f.startswith("core" + os.sep):
            continue
        for g, names in sorted(graph[f].items()):
            if not g.startswith("core" + os.sep):
                findings.append(f"{f} calls {g} ({', '.join(sorted(set(names))[:4])}): "
                                "core reaches a kind only through its ops table")
        for lineno, line in enumerate(strip(files[f]).split("\n"), 1):
            if re.search(r"\bkind\s*[!=]=\s*'", line):
                findings.append(f"{f}:{lineno}: asks which kind a handle is")
    for line in findings:
        print(line)
    print(f"{len(files)} files, {len(findings)} findings")
    return 1 if findings else 0


sys.exit(main())

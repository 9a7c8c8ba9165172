#!/usr/bin/env python3
"""List import cycles between sibling modules in every crate of the workspace.

Definition (what this script checks):

- Crates: the root package and each `[workspace] members` entry; `src/lib.rs`, `src/main.rs`
  and `src/bin/*.rs` are each the root of one crate (a package's binary is its own crate).
- Module tree: built from the files and `mod name;` declarations (`foo.rs` with `foo/`, or
  `foo/mod.rs`; `#[path = "..."]` is honoured), including `#[cfg(test)]` modules. Inline
  `mod x { ... }` blocks are modules too, so `super::` inside them resolves correctly.
- Edges: every path from code in module A that starts with `crate::`, `$crate::`, `super::`
  or `self::`, in `use` trees (groups included) and in expressions, types and attributes.
  Comments (doc comments too), string and char literals are blanked out first. Bare paths
  (`args::X`, names brought in by `use`) and other crates' names are ignored. A path resolves
  to the deepest module of the tree it names (`crate::a::b::Type` is module `a::b`).
- Collapsing: an edge A -> B where one is an ancestor of the other is dropped (a module and
  its descendants are one unit); otherwise it becomes C_A -> C_B, the two children of the
  lowest common ancestor of A and B that contain A and B.
- Cycles: for each module, the strongly connected components (Tarjan) of two or more of
  its children. Each is reported with one example chain and, for every hop, the file:line
  of one reference that causes it (`--verbose`: every reference of every edge inside it).

Exit status: 1 if any cycle was found, 0 if none.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict, deque
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

Mod = tuple[str, ...]
IDENT = r"(?:r#)?[A-Za-z_][A-Za-z0-9_]*"
MOD_DECL = re.compile(rf"((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?\bmod\s+({IDENT})\s*([;{{])")
USE = re.compile(r"(?<![\w$.])use\s+(?=[A-Za-z_$:{])")
PATH = re.compile(rf"(?<![\w$:])(\$crate|crate|super|self)((?:\s*::\s*{IDENT})+)")
RAW = re.compile(r'[bc]?r(#*)"')
CHAR = re.compile(r"'(?:\\(?:u\{[0-9a-fA-F]*\}|x..|.)|[^\\\n])'")
TOKEN = re.compile(rf"::|[{{}},*;]|\$crate|{IDENT}")


def strip(src: str) -> str:
    """Blank out comments, string and char literals, keeping offsets and newlines."""
    out, i, n = list(src), 0, len(src)

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c, prev = src[i], src[i - 1] if i else " "
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                depth += src.startswith("/*", j) - src.startswith("*/", j)
                j += 2 if src.startswith(("/*", "*/"), j) else 1
        elif not (prev.isalnum() or prev == "_") and (m := RAW.match(src, i)):
            end = src.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
        elif c == "'" and (m := CHAR.match(src, i)):
            j = m.end()
        else:
            i += 1
            continue
        blank(i, j)
        i = j
    return "".join(out)


def use_paths(text: str, start: int) -> tuple[list[tuple[list[str], int]], int]:
    """Flatten the `use` tree starting at `start`: (segments, offset of the last) each."""
    toks, pos = [], start
    while (m := TOKEN.search(text, pos)) and m.group() != ";":
        toks.append((m.group(), m.start()))
        pos = m.end()
    end = m.end() if m else len(text)
    paths: list[tuple[list[str], int]] = []

    def tree(k: int, prefix: list[str], at: int) -> int:
        path = list(prefix)
        while k < len(toks):
            tok, off = toks[k]
            if tok == "{":
                k += 1
                while k < len(toks) and toks[k][0] != "}":
                    k = tree(k, path, off)
                    k += toks[k][0] == "," if k < len(toks) else 0
                return k + 1
            if tok == "*" or (tok == "self" and path):
                paths.append((path, off))
                return k + 1
            if tok == "::":
                k += 1
                continue
            if tok in (",", "}"):
                break
            path, at, k = [*path, tok], off, k + 1
            if k < len(toks) and toks[k][0] == "as":
                k += 2
                break
            if k < len(toks) and toks[k][0] != "::":
                break
        if path:
            paths.append((path, at))
        return k

    tree(0, [], start)
    return paths, end


@dataclass
class Crate:
    label: str
    names: set[str]
    root: Path
    mods: set[Mod] = field(default_factory=lambda: {()})
    refs: list[tuple[Mod, list[str], Path, int]] = field(default_factory=list)


def load(crate: Crate) -> None:
    """Walk the module tree from the crate root, collecting modules and path references."""
    queue: deque[tuple[Path, Mod, bool]] = deque([(crate.root, (), True)])
    while queue:
        file, mod, owns_dir = queue.popleft()
        src = file.read_text(encoding="utf-8")
        text = strip(src)
        line_at = [0]
        for ch in text:
            line_at.append(line_at[-1] + (ch == "\n"))
        inline: list[tuple[int, int, str]] = []  # (open, close, name)
        for m in MOD_DECL.finditer(text):
            if m.group(3) == "{":
                depth, j = 1, m.end()
                while j < len(text) and depth:
                    depth += {"{": 1, "}": -1}.get(text[j], 0)
                    j += 1
                inline.append((m.end(), j, m.group(2).removeprefix("r#")))

        def scope(off: int, inline: list[tuple[int, int, str]] = inline) -> list[str]:
            return [name for a, b, name in inline if a <= off < b]

        base = file.parent if owns_dir else file.parent / file.stem
        for m in MOD_DECL.finditer(text):
            name, outer = m.group(2).removeprefix("r#"), scope(m.start())
            child = (*mod, *outer, name)
            crate.mods.add(child)
            if m.group(3) == "{":
                continue
            attr = re.search(r'\bpath\s*=\s*"([^"]+)"', src[m.start(1) : m.end(1)])
            if attr:
                here = file.parent if not outer else base.joinpath(*outer)
                queue.append((here / attr.group(1), child, True))
                continue
            d = base.joinpath(*outer)
            target = d / f"{name}.rs"
            if target.exists():
                queue.append((target, child, False))
            elif (d / name / "mod.rs").exists():
                queue.append((d / name / "mod.rs", child, True))
            else:
                print(f"warning: no file for module {'::'.join(child)} ({file})", file=sys.stderr)
        masked, pos = list(text), 0
        while m := USE.search(text, pos):
            paths, pos = use_paths(text, m.end())
            masked[m.start() : pos] = " " * (pos - m.start())
            for segs, off in paths:
                crate.refs.append(((*mod, *scope(off)), segs, file, line_at[off] + 1))
        for m in PATH.finditer("".join(masked)):
            segs = [m.group(1)] + [s.strip() for s in m.group(2).split("::")[1:]]
            crate.refs.append(((*mod, *scope(m.start())), segs, file, line_at[m.start()] + 1))


def resolve(crate: Crate, here: Mod, segs: list[str]) -> Mod | None:
    """The deepest module a path from module `here` names, or None if not in this crate."""
    if segs[0] in ("crate", "$crate"):
        cur: Mod = ()
    elif segs[0] in ("self", "super"):
        cur = here if segs[0] == "self" else here[:-1]
    else:
        return None
    for seg in segs[1:]:
        seg = seg.removeprefix("r#")
        if seg == "super" and cur:
            cur = cur[:-1]
        elif (*cur, seg) in crate.mods:
            cur = (*cur, seg)
        else:
            break
    return cur


def tarjan(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    sccs: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc: list[str] = []
            while not scc or scc[-1] != v:
                scc.append(stack.pop())
            sccs.append(sorted(scc))

    for v in nodes:
        if v not in index:
            visit(v)
    return [s for s in sccs if len(s) > 1]


def chain(start: str, scc: list[str], edges: dict[str, set[str]]) -> list[str]:
    """Shortest cycle through `start` inside the component."""
    prev: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(edges[v] & set(scc)):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [*reversed(path), start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return [start]


def crates(root: Path) -> list[Crate]:
    manifest = (root / "Cargo.toml").read_text(encoding="utf-8")
    members = re.search(r"^members\s*=\s*\[(.*?)\]", manifest, re.M | re.S)
    dirs = (["."] if re.search(r"^\[package\]", manifest, re.M) else []) + (
        re.findall(r'"([^"]+)"', members.group(1)) if members else []
    )
    found = []
    for d in dirs:
        toml = (root / d / "Cargo.toml").read_text(encoding="utf-8")
        package = re.search(r'^\[package\]\n(?:(?!\[).*\n)*?name\s*=\s*"([^"]+)"', toml, re.M | re.S)
        name = package.group(1) if package else Path(d).resolve().name
        base = name if d == "." else d
        names = {base, name, d}
        src = root / d / "src"
        roots = [src / "lib.rs", src / "main.rs", *sorted((src / "bin").glob("*.rs"))]
        roots = [r for r in roots if r.exists()]
        for r in roots:
            label = base if len(roots) == 1 or r.name == "lib.rs" else f"{base}-bin"
            label += f"-{r.stem}" if r.parent.name == "bin" else ""
            found.append(Crate(label, names | {label}, r))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crate", help="only this crate (label, directory or package name)")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("-v", "--verbose", action="store_true", help="every reference")
    args = parser.parse_args()
    selected = [c for c in crates(args.root) if args.crate is None or args.crate in c.names]
    if not selected:
        parser.error(f"no crate named {args.crate}")
    total = 0
    for crate in selected:
        load(crate)
        # (parent, from child, to child) -> references
        hops: dict[tuple[Mod, str, str], list[str]] = defaultdict(list)
        for here, segs, file, line in crate.refs:
            target = resolve(crate, here, segs)
            if target is None:
                continue
            n = 0
            while n < min(len(here), len(target)) and here[n] == target[n]:
                n += 1
            if n in (len(here), len(target)):  # one is an ancestor of the other (or the same)
                continue
            where = f"{file.relative_to(args.root)}:{line}  {'::'.join(segs)}"
            hops[(here[:n], here[n], target[n])].append(where)
        edges: dict[Mod, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for parent, a, b in hops:
            edges[parent][a].add(b)
        found = []
        for parent in sorted(edges):
            for scc in tarjan(sorted(edges[parent]), edges[parent]):
                found.append((parent, scc))
        total += len(found)
        print(f"{crate.label}: {len(found)} cycle{'s' * (len(found) != 1)}")
        for parent, scc in found:
            name = "::".join(parent)

            def full(child: str, name: str = name) -> str:
                return f"{name}::{child}" if name else child

            cyc = chain(scc[0], scc, edges[parent])
            print(f"  {crate.label}: {' -> '.join(map(full, cyc))}  (component: {len(scc)})")
            pairs = list(pairwise(cyc))
            if args.verbose:
                pairs = [(a, b) for a in scc for b in sorted(edges[parent][a]) if b in scc]
            for a, b in pairs:
                refs = hops[(parent, a, b)]
                print(f"    {full(a)} -> {full(b)}  ({len(refs)} ref{'s' * (len(refs) != 1)})")
                for ref in refs if args.verbose else refs[:1]:
                    print(f"      {ref}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())

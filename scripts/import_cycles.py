#!/usr/bin/env python3
"""List import cycles between sibling modules in each crate of the workspace; exit 1 if any.

- Crates: `src/lib.rs` and `src/main.rs` of the root package and of each workspace member
  (a package's binary is a crate of its own, labelled `<name>-bin`).
- Modules: the tree of `mod name;` declarations (`foo.rs` + `foo/`, or `foo/mod.rs`, or
  `#[path = "..."]`), `#[cfg(test)]` modules included; inline `mod x { ... }` blocks are
  modules too, so that `super::` inside them resolves as rustc does.
- References: every path that starts with `crate::`, `$crate::`, `super::` or `self::`, in
  `use` trees (groups flattened) and anywhere else (expressions, types, attributes), after
  comments (doc comments too), strings and char literals are blanked out. Bare paths and
  other crates' names are ignored. A path resolves to the deepest module it names
  (`crate::a::b::Type` is module `a::b`).
- Edges: a reference from A to B where one is an ancestor of the other is dropped (a module
  and its descendants are one unit); otherwise it is an edge between the two children of
  the lowest common ancestor of A and B that contain A and B.
- Cycles: per module, the strongly connected components (Tarjan) of two or more of its
  children, each with one example chain and, per hop, the file:line of one reference
  (`--verbose`: every edge inside the component and every line causing it).
"""

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
        out[i:j] = [ch if ch == "\n" else " " for ch in src[i:j]]
        i = j
    return "".join(out)


def use_paths(text: str, start: int) -> tuple[list[tuple[list[str], int]], int]:
    """Flatten the `use` tree at `start`: (segments, offset of the last one) for each leaf."""
    paths: list[tuple[list[str], int]] = []
    stack: list[list[str]] = [[]]
    cur: list[str] = []
    skip, pos, last = False, start, start
    while (m := TOKEN.search(text, pos)) and m.group() != ";":
        tok, off, pos = m.group(), m.start(), m.end()
        if skip or tok == "::":
            skip = False
        elif tok == "as":
            skip = True
        elif tok == "{":
            stack.append(stack[-1] + cur)
            cur = []
        elif tok in (",", "}", "*") or (tok == "self" and not cur and len(stack) > 1):
            if cur or tok in ("*", "self"):
                paths.append((stack[-1] + cur, off if tok in ("*", "self") else last))
            cur = []
            if tok == "}" and len(stack) > 1:
                stack.pop()
        else:
            cur.append(tok)
            last = off
    if cur:
        paths.append((stack[-1] + cur, last))
    return paths, m.end() if m else len(text)


@dataclass
class Ref:  # a path `segs` written in module `here` (`test`: inside a `#[cfg(test)]` module)
    here: Mod
    segs: list[str]
    file: Path
    line: int
    test: bool


@dataclass
class Crate:
    label: str
    names: set[str]
    root: Path
    mods: set[Mod] = field(default_factory=lambda: {()})
    tests: set[Mod] = field(default_factory=set)
    refs: list[Ref] = field(default_factory=list)

    def add(self, here: Mod, segs: list[str], file: Path, text: str, off: int) -> None:
        test = any(here[:k] in self.tests for k in range(len(here) + 1))
        self.refs.append(Ref(here, segs, file, text.count("\n", 0, off) + 1, test))


def load(crate: Crate) -> None:
    """Walk the module tree from the crate root, collecting modules and path references."""
    queue: deque[tuple[Path, Mod, bool]] = deque([(crate.root, (), True)])
    while queue:
        file, mod, owns_dir = queue.popleft()
        src = file.read_text(encoding="utf-8")
        text = strip(src)
        inline: list[tuple[int, int, str]] = []  # (open, close, name) of `mod x { ... }`
        for m in MOD_DECL.finditer(text):
            depth, j = 1, m.end()
            while m.group(3) == "{" and j < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            inline += [(m.end(), j, m.group(2).removeprefix("r#"))] if m.group(3) == "{" else []

        def scope(off: int, inline: list[tuple[int, int, str]] = inline) -> list[str]:
            return [name for a, b, name in inline if a <= off < b]

        base = file.parent if owns_dir else file.parent / file.stem
        for m in MOD_DECL.finditer(text):
            name, outer = m.group(2).removeprefix("r#"), scope(m.start())
            child, d = (*mod, *outer, name), base.joinpath(*outer)
            crate.mods.add(child)
            if re.search(r"\bcfg\s*\(\s*test\s*\)", m.group(1)):
                crate.tests.add(child)
            if m.group(3) == "{":
                continue
            if attr := re.search(r'\bpath\s*=\s*"([^"]+)"', src[m.start(1) : m.end(1)]):
                queue.append(((d if outer else file.parent) / attr.group(1), child, True))
            elif (d / f"{name}.rs").exists():
                queue.append((d / f"{name}.rs", child, False))
            elif (d / name / "mod.rs").exists():
                queue.append((d / name / "mod.rs", child, True))
            else:
                print(f"warning: no file for module {'::'.join(child)} ({file})", file=sys.stderr)
        masked, pos = list(text), 0
        while m := USE.search(text, pos):
            paths, pos = use_paths(text, m.end())
            masked[m.start() : pos] = " " * (pos - m.start())
            for segs, off in paths:
                crate.add((*mod, *scope(off)), segs, file, text, off)
        for m in PATH.finditer("".join(masked)):
            segs = [m.group(1)] + [s.strip() for s in m.group(2).split("::")[1:]]
            crate.add((*mod, *scope(m.start())), segs, file, text, m.start())


def resolve(crate: Crate, ref: Ref) -> Mod | None:
    """The deepest module a path names, or None if it does not start in this crate."""
    first, *rest = ref.segs
    if first not in ("crate", "$crate", "self", "super"):
        return None
    cur = () if "crate" in first else ref.here[: len(ref.here) - (first == "super")]
    for seg in (s.removeprefix("r#") for s in rest):
        if seg == "super" and cur:
            cur = cur[:-1]
        elif (*cur, seg) in crate.mods:
            cur = (*cur, seg)
        else:
            break
    return cur


def tarjan(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of two or more nodes."""
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
            k = stack.index(v)
            sccs.append(sorted(stack[k:]))
            del stack[k:]

    for v in nodes:
        if v not in index:
            visit(v)
    return [s for s in sccs if len(s) > 1]


def chain(start: str, scc: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through `start` inside the component."""
    queue, seen = deque([[start]]), {start}
    while queue:
        path = queue.popleft()
        for w in sorted(edges.get(path[-1], set()) & set(scc)):
            if w == start:
                return [*path, start]
            if w not in seen:
                seen.add(w)
                queue.append([*path, w])
    return [start]


def crates(root: Path) -> list[Crate]:
    """The root package's and each workspace member's lib and bin crates."""
    manifest = (root / "Cargo.toml").read_text(encoding="utf-8")
    members = re.search(r"^members\s*=\s*\[(.*?)\]", manifest, re.M | re.S)
    dirs = ["."] if re.search(r"^\[package\]", manifest, re.M) else []
    found = []
    for d in dirs + re.findall(r'"([^"]+)"', members.group(1) if members else ""):
        toml = (root / d / "Cargo.toml").read_text(encoding="utf-8")
        package = re.search(r'^\[package\]\n(?:(?!\[).*\n)*?name\s*=\s*"([^"]+)"', toml, re.M)
        name = package.group(1) if package else (root / d).resolve().name
        base = name if d == "." else d
        src = root / d / "src"
        roots = [r for r in (src / "lib.rs", src / "main.rs") if r.exists()]
        for r in roots:
            label = f"{base}-bin" if r.name == "main.rs" and len(roots) > 1 else base
            found.append(Crate(label, {base, name, d, label}, r))
    return found


def report(crate: Crate, root: Path, verbose: bool, tests: bool) -> int:
    """Print the crate's cycles; return how many."""
    hops: dict[tuple[Mod, str, str], list[Ref]] = defaultdict(list)  # (parent, a, b)
    for ref in crate.refs:
        if (target := resolve(crate, ref)) is None or (ref.test and not tests):
            continue
        here, n = ref.here, 0
        while n < min(len(here), len(target)) and here[n] == target[n]:
            n += 1
        if n not in (len(here), len(target)):  # else one contains the other: no edge
            hops[(here[:n], here[n], target[n])].append(ref)
    edges: dict[Mod, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for parent, a, b in hops:
        edges[parent][a].add(b)
    found = [(p, scc) for p in sorted(edges) for scc in tarjan(sorted(edges[p]), edges[p])]
    print(f"{crate.label}: {len(found)} cycle{'s' * (len(found) != 1)}")
    for parent, scc in found:
        full = {c: "::".join((*parent, c)) for c in scc}
        real = {
            a: {b for b in bs if not all(r.test for r in hops[(parent, a, b)])}
            for a, bs in edges[parent].items()
        }
        cycles = [chain(s, scc, real) for s in scc] + [chain(scc[0], scc, edges[parent])]
        cyc = next(c for c in cycles if len(c) > 1)  # prefer a chain without test-only hops
        print(f"  {crate.label}: {' -> '.join(full[c] for c in cyc)}")
        if len(scc) > len(cyc) - 1:
            print(f"    (one cycle of the component {{{', '.join(full[c] for c in scc)}}})")
        pairs = list(pairwise(cyc))
        if verbose:
            pairs = [(a, b) for a in scc for b in sorted(edges[parent][a]) if b in scc]
        for a, b in pairs:
            lines: dict[tuple[Path, int], list[Ref]] = defaultdict(list)
            for r in sorted(hops[(parent, a, b)], key=lambda r: r.test):  # non-test first
                lines[(r.file, r.line)].append(r)
            print(f"    {full[a]} -> {full[b]}  ({len(lines)} line{'s' * (len(lines) != 1)})")
            for (file, line), rs in list(lines.items())[: None if verbose else 1]:
                more = f" (+{len(rs) - 1})" if len(rs) > 1 else ""
                tag = "  [cfg(test)]" if rs[0].test else ""
                print(f"      {file.relative_to(root)}:{line}  {'::'.join(rs[0].segs)}{more}{tag}")
    return len(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crate", help="only this crate (label, directory or package name)")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("-v", "--verbose", action="store_true", help="every edge and line")
    parser.add_argument("--no-tests", action="store_true", help="skip #[cfg(test)] modules")
    args = parser.parse_args()
    selected = [c for c in crates(args.root) if args.crate is None or args.crate in c.names]
    if not selected:
        parser.error(f"no crate named {args.crate}")
    total = 0
    for crate in selected:
        load(crate)
        total += report(crate, args.root, args.verbose, not args.no_tests)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())

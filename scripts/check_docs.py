#!/usr/bin/env python3
"""Checks the Markdown documentation: every relative link resolves.

For README.md, every docs/*.md, python/README.md and testdata/README.md:

- every relative link target, `[text](target)`, `![alt](target)`,
  `[ref]: target` and `<img src=...>` / `<a href=...>`, outside fenced code
  blocks and inline code, must name a file or directory that exists,
  resolved relative to the file that links (a leading `/` is the
  repository root). `http(s)://`, `mailto:` and other URL schemes are not
  checked (no network);
- a `#fragment` into a Markdown file (or a bare `#fragment`, into the file
  itself) must be the GitHub-style slug of one of that file's headings
  (lower-cased, punctuation other than `-` and `_` removed, spaces turned
  into `-`, repeated headings suffixed `-1`, `-2`, ...) or an explicit
  `<a name=...>` / `id=...` anchor;
- README.md is at most 500 lines;
- the repository paths README.md's commands and code name
  (`testdata/...`, `scripts/...`, `.ci/...`, `crates/...`, `python/...`,
  `docs/...`, in code blocks and inline code) exist.

Prints one line per problem, `FILE:LINE: problem`, and exits 1 if there is
any; otherwise prints a one-line summary and exits 0. Standard library
only (Python 3.9+), no network.

    python3 scripts/check_docs.py
"""

from __future__ import annotations

import glob
import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 500

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
# `](` opening an inline link's destination; the text before it is not parsed.
INLINE_DEST = re.compile(r"\]\(")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*(<[^>]*>|\S+)")
HTML_ATTR = re.compile(r"<(?:img|a|source)\b[^>]*?\b(?:src|href)\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+)", re.I)
HTML_ANCHOR = re.compile(r"<[a-z][^>]*?\b(?:name|id)\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+)", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
REPO_PATH = re.compile(r"(?<![\w/.~$-])(?:\./)?(?:testdata|scripts|crates|python|docs|\.ci)/[\w./*?\[\]=+-]*")


def documents() -> list[Path]:
    files = [ROOT / "README.md"]
    files += sorted((ROOT / "docs").glob("*.md"))
    for extra in ("python/README.md", "testdata/README.md"):
        if (ROOT / extra).is_file():
            files.append(ROOT / extra)
    return [f for f in files if f.is_file()]


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def split_code(lines: list[str]) -> list[tuple[int, str, bool]]:
    """(line number, text, inside a fenced code block) for every line."""
    out = []
    fence = None
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            out.append((number, line, True))
        elif fence is not None:
            out.append((number, line, True))
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
                fence = None
        else:
            out.append((number, line, False))
    return out


def blank_code_spans(line: str) -> str:
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def heading_text(raw: str) -> str:
    """The text GitHub renders for a heading's inline Markdown."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)  # links, images
    text = re.sub(r"!?\[([^\]]*)\]\[[^\]]*\]", r"\1", text)  # reference links
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "")
    text = re.sub(r"(\*+|(?<!\w)_+|_+(?!\w))", "", text)  # emphasis markers
    return text.strip()


def slug(text: str) -> str:
    out = []
    for ch in heading_text(text).lower():
        if ch in "-_ ":
            out.append("-" if ch == " " else ch)
        elif unicodedata.category(ch)[0] in "LNM":
            out.append(ch)
    return "".join(out)


_anchor_cache: dict[Path, set[str]] = {}


def anchors(path: Path) -> set[str]:
    if path in _anchor_cache:
        return _anchor_cache[path]
    lines = path.read_text(encoding="utf-8").splitlines()
    seen: dict[str, int] = {}
    found: set[str] = set()

    def add(text: str) -> None:
        base = slug(text)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")

    previous = None  # (text, in_code) of the previous line
    for _, line, in_code in split_code(lines):
        if not in_code:
            m = ATX.match(line)
            if m:
                add(m.group(2) or "")
            elif (
                SETEXT.match(line)
                and previous is not None
                and not previous[1]
                and previous[0].strip()
                and not ATX.match(previous[0])
                and not previous[0].lstrip().startswith(("|", "-", "*", ">"))
                and not SETEXT.match(previous[0])
            ):
                add(previous[0].strip())
            for m in HTML_ANCHOR.finditer(line):
                found.add(m.group(1).strip("\"'"))
        previous = (line, in_code)
    _anchor_cache[path] = found
    return found


def destinations(line: str) -> list[str]:
    """Link destinations on one line (code spans already blanked)."""
    out = []
    for m in INLINE_DEST.finditer(line):
        rest = line[m.end():].lstrip()
        if rest.startswith("<"):
            end = rest.find(">")
            if end > 0:
                out.append(rest[1:end])
            continue
        depth = 0
        target = []
        for ch in rest:
            if ch == "(":
                depth += 1
            elif ch == ")":
                if depth == 0:
                    break
                depth -= 1
            elif ch.isspace():
                break
            target.append(ch)
        if target:
            out.append("".join(target))
    m = REF_DEF.match(line)
    if m:
        out.append(m.group(1).strip("<>"))
    for m in HTML_ATTR.finditer(line):
        out.append(m.group(1).strip("\"'"))
    return out


def check_target(doc: Path, target: str) -> str | None:
    """A problem with one link target, or None."""
    if SCHEME.match(target) or target.startswith("//"):
        return None  # http(s), mailto and other URLs: not checked
    path_part, _, fragment = target.partition("#")
    path_part = unquote(path_part.split("?", 1)[0])
    fragment = unquote(fragment)
    if path_part:
        base = ROOT if path_part.startswith("/") else doc.parent
        resolved = (base / path_part.lstrip("/")).resolve()
        if not resolved.exists():
            return f"broken link: {target} ({rel(resolved)} does not exist)"
        try:
            resolved.relative_to(ROOT)
        except ValueError:
            return f"link leaves the repository: {target}"
    else:
        resolved = doc
    if fragment and resolved.is_file() and resolved.suffix.lower() == ".md":
        if fragment not in anchors(resolved):
            where = "this file" if resolved == doc else rel(resolved)
            return f"broken anchor: {target} (no heading with slug #{fragment} in {where})"
    return None


def check_repo_paths(doc: Path, number: int, text: str, problems: list[str]) -> None:
    for m in REPO_PATH.finditer(text):
        token = m.group(0).rstrip(".,;:)")
        if any(ch in token for ch in "*?["):
            if not glob.glob(str(ROOT / token)):
                problems.append(f"{rel(doc)}:{number}: no path matches {token}")
        elif not (ROOT / token).exists():
            problems.append(f"{rel(doc)}:{number}: path in a command does not exist: {token}")


def main() -> int:
    problems: list[str] = []
    links = 0
    docs = documents()
    for doc in docs:
        lines = doc.read_text(encoding="utf-8").splitlines()
        is_readme = doc == ROOT / "README.md"
        if is_readme and len(lines) > README_MAX_LINES:
            problems.append(
                f"{rel(doc)}:{len(lines)}: README.md has {len(lines)} lines, more than {README_MAX_LINES}"
            )
        for number, line, in_code in split_code(lines):
            if in_code:
                if is_readme and not FENCE.match(line):
                    check_repo_paths(doc, number, line, problems)
                continue
            if is_readme:
                for span in CODE_SPAN.finditer(line):
                    check_repo_paths(doc, number, span.group(2), problems)
            for target in destinations(blank_code_spans(line)):
                links += 1
                problem = check_target(doc, target)
                if problem:
                    problems.append(f"{rel(doc)}:{number}: {problem}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_docs: {len(problems)} problem(s) in {len(docs)} files", file=sys.stderr)
        return 1
    print(f"check_docs: {len(docs)} files, {links} links, all resolve; README.md within {README_MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())

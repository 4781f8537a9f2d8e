#!/usr/bin/env python3
"""Checks docs/performance.md and docs/performance-history.md (make check-docs).

1. Nothing lost in the split of 2026-12-05: every non-blank line of docs/performance.md
   as it stood before (git revision BEFORE_SPLIT, or --against REV) is in one of the two
   files, as many times as it was there (a multiset; a line moved twice counts twice). The
   few lines the move itself made false ("above" that is now "below") are listed in EDITED,
   old and new. Skipped, and said so, when the revision is not in the clone (a shallow one).
2. Every heading of levels 1-3 is unique across the two files (but the table caption
   repeated under several measurements, CAPTION), so a section named by its title is one.
3. Every in-repository reference to a section resolves: a link
   `performance.md#anchor` or `performance-history.md#anchor` names a heading's GitHub
   anchor (lowercase, punctuation dropped, spaces to '-', '-1', '-2' for repeats) in that
   file, and a title quoted right after the file's name (`docs/performance.md, "Figures"`,
   across comment lines too) is part of a heading of the file it names; a link `(#anchor)`
   inside either file (the history's contents) names one of its own headings.

Prints what fails and exits 1; prints one line and exits 0 when all hold. Needs git and
Python 3 only; under a second on the repository.
"""
import collections
import os
import re
import subprocess
import sys

BEFORE_SPLIT = "bcc390505eee0c38d57d71c7fac29fc5f524ea48"  # main before the split
CURRENT, HISTORY = "docs/performance.md", "docs/performance-history.md"
CAPTION = re.compile(r"^#{3,4} regular: 1000 MB of JSONL, 2681900 rows in 20 objects")
EDITED = {
    # The targets moved from the end of the page to its top: the tables are below them now.
    "Each row gives the newest measurement of its target (the sections above hold the tables;":
        "Each row gives the newest measurement of its target (the sections below hold the tables;",
    # Scaling's whole table of 2026-12-02 and the fourteenth round's moved to the history
    # (2026-12-05), the fourteenth round's now first.
    "**The whole table again on a quiet machine, after this round** (the current figures):":
        "**The whole table again on a quiet machine, after this round** (the current figures until 2026-12-05):",
    "quiet table of 2026-12-02 above), 200 families in 27× (50×): what remains is the protocol's":
        "quiet table of 2026-12-02 below), 200 families in 27× (50×): what remains is the protocol's",
}
SCANNED = re.compile(r"(\.md|\.go|\.sh|\.py|/Makefile|^Makefile)$")
LINK = re.compile(r"(performance(?:-history)?\.md)#([^\s)\]`'\">]+)")
QUOTED = re.compile(r"(performance(?:-history)?\.md)`?\)?,?\s*(?:section\s+)?\"([^\"]{2,300})\"?")


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True)


def headings(text):
    """The file's headings as (level, title), in order, outside fenced code."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"^(#{1,6}) (.*)$", line)
        if m:
            out.append((len(m.group(1)), m.group(2).strip(), line))
    return out


def anchors(heads):
    """GitHub's anchors for the headings, repeats numbered as GitHub does."""
    seen, out = collections.Counter(), set()
    for _, title, _ in heads:
        a = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        out.add(a if seen[a] == 0 else "%s-%d" % (a, seen[a]))
        seen[a] += 1
    return out


def check_lines(texts, rev, errors):
    old = git("show", "%s:%s" % (rev, CURRENT))
    if old.returncode != 0:
        print("doclines: lines not checked: %s is not in this clone (%s)" % (rev, old.stderr.strip()), file=sys.stderr)
        return 0
    have = collections.Counter(l for t in texts.values() for l in t.split("\n") if l.strip())
    want = collections.Counter(EDITED.get(l, l) for l in old.stdout.split("\n") if l.strip())
    for line, n in want.items():
        if have[line] < n:
            errors.append("%s:%s: line lost (%d of %d left): %s" % (rev[:7], CURRENT, have[line], n, line[:120]))
    return sum(want.values())


def check_headings(texts, errors):
    count = collections.Counter()
    for path, text in texts.items():
        for level, title, line in headings(text):
            if level <= 3 and not CAPTION.match(line):
                count[title] += 1
    for title, n in count.items():
        if n > 1:
            errors.append("heading %d times in %s and %s: %s" % (n, CURRENT, HISTORY, title[:120]))


def flatten(path, text):
    """The text as one line, comment markers dropped, so a quote may run across lines."""
    lines = text.split("\n")
    if not path.endswith(".md"):
        lines = [re.sub(r"^\s*(//|#)\s?", "", l) for l in lines]
    return " ".join(l.strip() for l in lines)


def check_references(texts, errors):
    heads = {os.path.basename(p): headings(t) for p, t in texts.items()}
    anch = {f: anchors(h) for f, h in heads.items()}
    titles = {f: [re.sub(r"\s+", " ", t).lower() for _, t, _ in h] for f, h in heads.items()}
    files = [f for f in git("ls-files").stdout.split("\n")
             if SCANNED.search(f) and os.path.isfile(f) and f != "bench/doclines.py"]  # not its own examples
    files += [f for f in texts if f not in files]
    n = 0
    for path, text in texts.items():  # a link inside the file: its contents list
        for m in re.finditer(r"\]\(#([^)\s]+)\)", text):
            n += 1
            if m.group(1) not in anch[os.path.basename(path)]:
                errors.append("%s: link to a missing section of its own: #%s" % (path, m.group(1)))
    for path in files:
        text = texts.get(path) or open(path, encoding="utf-8", errors="replace").read()
        if "performance" not in text:
            continue
        for m in LINK.finditer(text):
            n += 1
            if m.group(2) not in anch[m.group(1)]:
                errors.append("%s: link to a missing section: %s#%s" % (path, m.group(1), m.group(2)))
        for m in QUOTED.finditer(flatten(path, text)):
            n += 1
            quote = re.sub(r"\s+", " ", m.group(2)).strip().rstrip("….").lower()
            if not any(quote in t for t in titles[m.group(1)]):
                errors.append("%s: %s names no section \"%s\"" % (path, m.group(1), m.group(2)[:100]))
    return n


def main():
    rev = BEFORE_SPLIT
    if sys.argv[1:2] == ["--against"] and len(sys.argv) == 3:
        rev = sys.argv[2]
    elif sys.argv[1:]:
        sys.exit("usage: bench/doclines.py [--against REV]")
    root = git("rev-parse", "--show-toplevel").stdout.strip()
    os.chdir(root)
    texts = {p: open(p, encoding="utf-8").read() for p in (CURRENT, HISTORY)}
    errors = []
    lines = check_lines(texts, rev, errors)
    check_headings(texts, errors)
    refs = check_references(texts, errors)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        sys.exit(1)
    print("doclines: %d lines of %s at %s kept, headings unique, %d references resolve" % (lines, CURRENT, rev[:7], refs))


if __name__ == "__main__":
    main()

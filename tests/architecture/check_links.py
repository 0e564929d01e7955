#!/usr/bin/env python3
"""Fails when a Markdown file of the repository links to a relative path that
does not exist, or cites a page under docs/ that does not exist. Web links
and in-page anchors are not followed. Run as: check_links.py <repository root>.
"""
import os
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# "docs/statistics.md" written as text (in Markdown and in source comments).
CITED_PAGE = re.compile(r"(?<![\w/.-])docs/[\w.-]+\.md\b")
SKIPPED_DIRS = {"node_modules", ".git"}
SOURCE_SUFFIXES = (".md", ".h", ".cc", ".cu", ".cuh", ".proto", ".yaml", ".sh", ".py", ".txt", ".cmake")


def files(root):
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith("build")]
        for name in names:
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.join(dirpath, name)


def main(root):
    problems = []
    for path in sorted(files(root)):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if path.endswith(".md"):
            for m in LINK.finditer(text):
                target = m.group(1)
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                target = target.split("#", 1)[0]
                if target and not os.path.exists(os.path.join(os.path.dirname(path), target)):
                    line = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{rel}:{line}: link to {target}, which does not exist")
        for m in CITED_PAGE.finditer(text):
            if not os.path.exists(os.path.join(root, m.group(0))):
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{rel}:{line}: cites {m.group(0)}, which does not exist")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} broken link(s) or citation(s)")
        return 1
    print("every relative link and every cited docs/ page exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

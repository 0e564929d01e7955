#!/usr/bin/env python3
"""Fails when a source file or a function outgrows the limits of
docs/architecture.md: no file over 600 lines (CUDA kernels
excepted), no function body over 80 lines (CUDA kernels and tests
excepted). Run as: check_sizes.py <repository root>.

Functions are found by brace matching with comments, strings and character
literals skipped: a brace opened at file, namespace or class level whose
header (the text since the previous ';', '{' or '}') has a parameter list and
is not a class, struct, union, enum or namespace is a function body; its
length is the number of lines from its opening to its closing brace.
"""
import os
import re
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
SKIPPED_DIRS = {"tests", "build", "node_modules", "deploy", "docs", "scripts"}
SCOPE = re.compile(r"^\s*(template\s*<.*>\s*)?(namespace|class|struct|union|enum|extern)\b", re.S)


def strip(text):
    """The text with comments, strings and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator: 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(first line, line count) of every function body in stripped text."""
    found = []
    stack = []  # per open brace: "scope", "function" or "block"
    header_start = 0
    line = 1
    open_line = {}
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            if all(kind == "scope" for kind in stack):
                header = re.sub(r"^\s*#.*$", "", text[header_start:i], flags=re.M)
                if SCOPE.match(header):
                    kind = "scope"
                elif ")" in header and "=" not in header.split(")")[-1]:
                    kind = "function"
                else:
                    kind = "block"
            else:
                kind = "block"
            stack.append(kind)
            open_line[len(stack)] = line
            header_start = i + 1
        elif c == "}":
            if stack:
                if stack[-1] == "function":
                    found.append((open_line[len(stack)], line - open_line[len(stack)] + 1))
                stack.pop()
            header_start = i + 1
        elif c == ";":
            header_start = i + 1
    return found


def main(root):
    problems = []
    for folder in sorted(os.listdir(root)):
        path = os.path.join(root, folder)
        if folder.startswith(".") or folder.startswith("build") or folder in SKIPPED_DIRS or not os.path.isdir(path):
            continue
        for dirpath, _, names in os.walk(path):
            for name in sorted(names):
                if not name.endswith((".cc", ".h")):
                    continue  # .cu/.cuh: CUDA kernels
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                with open(full, encoding="utf-8") as f:
                    text = f.read()
                lines = text.count("\n")
                if lines > MAX_FILE_LINES:
                    problems.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES})")
                for first, count in functions(strip(text)):
                    if count > MAX_FUNCTION_LINES:
                        problems.append(f"{rel}:{first}: a function of {count} lines (at most {MAX_FUNCTION_LINES})")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} size limit(s) broken; split the file or the function")
        return 1
    print("every file and function is within the size limits")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

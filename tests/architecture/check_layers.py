#!/usr/bin/env python3
"""Fails when the coordinator's inner layers (docs/architecture.md, "Inside
the coordinator") are crossed:

1. libpqxx is included only under coordinator/store/ (tests aside: they read
   the database directly to check what was written);
2. the store's internal headers (those that include libpqxx) are included
   only under coordinator/store/;
3. coordinator/store/ includes, of the coordinator, only itself and the
   domain-free headers listed in STORE_MAY_INCLUDE: storage knows nothing
   of the service, HTTP or gRPC above it;
4. no coordinator file includes the gRPC service (service.h) but the server
   that registers it;
5. the dashboard's modules (coordinator/dashboard/src/*.js) import each
   other without a cycle.

Run as: check_layers.py <repository root>.
"""
import os
import re
import sys

STORE = "coordinator/store/"
STORE_INTERNAL = {"coordinator/store/database.h", "coordinator/store/sql.h",
                  "coordinator/store/ingest_checks.h", "coordinator/store/outbox.h"}
STORE_MAY_INCLUDE = {"coordinator/migrations.h", "coordinator/process_medians.h"}
SERVICE_USERS = {"coordinator/server.h", "coordinator/server.cc", "coordinator/service.cc"}
SKIPPED_DIRS = {"tests", "node_modules", "deploy", "docs", "scripts"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def sources(root):
    for folder in sorted(os.listdir(root)):
        path = os.path.join(root, folder)
        if folder.startswith((".", "build")) or folder in SKIPPED_DIRS or not os.path.isdir(path):
            continue
        for dirpath, _, names in os.walk(path):
            for name in sorted(names):
                if name.endswith((".h", ".cc", ".cu", ".cuh", ".in")):
                    full = os.path.join(dirpath, name)
                    yield os.path.relpath(full, root).replace(os.sep, "/"), full


def problems_of(rel, text):
    out = []
    in_store = rel.startswith(STORE)
    for kind, target in INCLUDE.findall(text):
        if kind == "<" and target.startswith("pqxx/") and not in_store:
            out.append(f"{rel}: includes <{target}>; only {STORE} may use libpqxx (call a repository)")
        if kind != '"':
            continue
        if target in STORE_INTERNAL and not in_store:
            out.append(f"{rel}: includes {target}, internal to {STORE}; include coordinator/store.h "
                       "or one repository's header")
        if in_store and target.startswith("coordinator/") and not target.startswith(STORE) \
                and target not in STORE_MAY_INCLUDE:
            out.append(f"{rel}: includes {target}; {STORE} may include of the coordinator only "
                       f"itself and {', '.join(sorted(STORE_MAY_INCLUDE))}")
        if target == "coordinator/service.h" and rel.startswith("coordinator/") \
                and rel not in SERVICE_USERS:
            out.append(f"{rel}: includes coordinator/service.h; only the server registers the service")
    return out


JS_IMPORT = re.compile(r"^\s*import\b[^;]*?from\s*'\./([\w.-]+)'", re.M)
DASHBOARD = "coordinator/dashboard/src"


def js_cycles(root):
    """Problems for each import cycle among the dashboard's modules."""
    folder = os.path.join(root, DASHBOARD)
    if not os.path.isdir(folder):
        return []
    graph = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".js"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                graph[name] = JS_IMPORT.findall(f.read())
    problems, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for nxt in graph.get(node, []):
            if state.get(nxt) == "open":
                cycle = path[path.index(nxt):] + [nxt]
                problems.append(f"{DASHBOARD}: modules import each other in a circle: {' -> '.join(cycle)}")
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node, [node])
    return problems


def main(root):
    problems = js_cycles(root)
    for rel, full in sources(root):
        with open(full, encoding="utf-8") as f:
            problems += problems_of(rel, f.read())
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) cross the coordinator's layers; docs/architecture.md shows them")
        return 1
    print("the coordinator's layers hold: libpqxx only in coordinator/store/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

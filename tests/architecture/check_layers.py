#!/usr/bin/env python3
"""Fails when the coordinator's inner layers (docs/architecture.md, "Inside
the coordinator") are crossed; the coordinator's build runs it, so a wrong
include fails the build:

1. libpqxx is included only under coordinator/store/ (tests aside: they read
   the database directly to check what was written);
2. the store's internal headers (those that include libpqxx) are included
   only under coordinator/store/;
3. coordinator/store/ includes, of the coordinator, only itself and the
   domain-free headers listed in STORE_MAY_INCLUDE: storage knows nothing
   of the domain, HTTP or gRPC above it;
4. coordinator/domain/ includes, of the coordinator, only itself, the store
   and STORE_MAY_INCLUDE: the rules know nothing of the front doors
   (coordinator/api/) or the commands of the binary;
5. coordinator/api/ includes nothing of the binary's commands (the files
   directly under coordinator/ but the store's);
6. no coordinator file includes the gRPC service (service.h) but the server
   that registers it;
7. the dashboard's modules (coordinator/dashboard/src/*.js) import each
   other without a cycle.

Run as: check_layers.py <repository root>; check_layers.py --self-test
judges a list of includes each rule must pass or refuse.
"""
import os
import re
import sys

STORE = "coordinator/store/"
STORE_INTERNAL = {"coordinator/store/database.h", "coordinator/store/sql.h",
                  "coordinator/store/ingest_checks.h", "coordinator/store/outbox.h"}
STORE_MAY_INCLUDE = {"coordinator/migrations.h", "coordinator/process_medians.h"}
STORE_HEADER = "coordinator/store.h"  # the Store: every repository over one pool
DOMAIN = "coordinator/domain/"
API = "coordinator/api/"
SERVICE_USERS = {"coordinator/api/server.h", "coordinator/api/server.cc", "coordinator/api/service.cc"}
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


def layer_problems(rel, target):
    """The domain and the front doors against the layers above them."""
    if not target.startswith("coordinator/"):
        return []
    in_layer = target.startswith((STORE, DOMAIN)) or target in STORE_MAY_INCLUDE or target == STORE_HEADER
    if rel.startswith(DOMAIN) and not in_layer:
        return [f"{rel}: includes {target}; {DOMAIN} may include of the coordinator only itself, "
                f"{STORE}, {STORE_HEADER} and {', '.join(sorted(STORE_MAY_INCLUDE))}"]
    if rel.startswith(API) and not (in_layer or target.startswith(API)):
        return [f"{rel}: includes {target}; {API} may not include the binary's commands"]
    return []


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
        out += layer_problems(rel, target)
        if target == "coordinator/api/service.h" and rel.startswith("coordinator/") \
                and rel not in SERVICE_USERS:
            out.append(f"{rel}: includes coordinator/api/service.h; only the server registers the service")
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


# (file, its include, whether that crosses a layer): each rule once each way.
SELF_TEST = [
    ("coordinator/domain/regressions.cc", '#include "coordinator/api/http_server.h"', True),
    ("coordinator/domain/regressions.cc", '#include "coordinator/config.h"', True),
    ("coordinator/domain/regressions.cc", '#include "coordinator/store/regressions.h"', False),
    ("coordinator/domain/regressions.cc", '#include "coordinator/store.h"', False),
    ("coordinator/domain/regressions.cc", "#include <pqxx/pqxx>", True),
    ("coordinator/api/http_api.cc", '#include "coordinator/domain/evaluate.h"', False),
    ("coordinator/api/http_api.cc", '#include "coordinator/commands.h"', True),
    ("coordinator/api/http_api.cc", '#include "coordinator/store/database.h"', True),
    ("coordinator/api/http_api.cc", '#include "coordinator/api/service.h"', True),
    ("coordinator/api/server.cc", '#include "coordinator/api/service.h"', False),
    ("coordinator/store/runs.cc", '#include "coordinator/domain/evaluate.h"', True),
    ("coordinator/store/runs.cc", '#include "coordinator/process_medians.h"', False),
    ("coordinator/serve_command.cc", '#include "coordinator/api/http_server.h"', False),
]


def self_test():
    wrong = [(rel, line) for rel, line, crosses in SELF_TEST if bool(problems_of(rel, line + "\n")) != crosses]
    for rel, line in wrong:
        print(f"self-test: {rel} with {line}: judged the wrong way")
    return 1 if wrong else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

#!/usr/bin/env python3
"""Makes schema_0010_history.sql: the rows a coordinator of schema version 10
stores for a small history, dumped as data (INSERTs through the partitioned
tables' roots) for tests/e2e/upgrade_e2e_test.cc to load into the schema of
migrations 0001..0010.

Run once, with the perfgate and perfgate-coordinator binaries of a release
whose newest migration is 0010, against a coordinator serving an empty
database:
  make_schema_0010_history.py BUILD_DIR COORDINATOR_ADDRESS CONNINFO PG_DUMP OUT
History: 12 runs of main (commits m01..m12), then a pull request measured
on two nodes (branch pr-slow) whose copy of 4 MiB is 20 % slower, and one
(pr-clean) at main's level; four cases of 30 samples, 1 % noise, seeded.
The dump's psql meta-commands (\restrict) are left out: it is read as SQL.
"""
import json
import random
import subprocess
import sys
import tempfile
import os

SIZES = [65536, 262144, 1048576, 4194304]


def result_file(path, branch, commit, slow, rng):
    cases = []
    for size in SIZES:
        level = size / 1e6 * (1.2 if slow and size == 4194304 else 1.0)
        samples = [{"index": i, "values": [level * (1 + rng.gauss(0, 0.01))]} for i in range(30)]
        cases.append({"benchmark": {"suite": "kernels", "name": "copy", "params": {"bytes": str(size)}},
                      "metrics": [{"name": "time", "unit": "ms", "direction": "lower_is_better"}],
                      "samples": samples, "status": "ok"})
    doc = {"format": "perfgate-results", "version": 1,
           "run": {"run_id": "00000000-0000-4000-8000-000000000000", "sku": "cpu-test", "branch": branch,
                   "commit": commit, "started_at": "2026-11-20T10:00:00Z",
                   "environment": {"cpu_model": "test cpu", "kernel": "6.1"}},
           "cases": cases}
    with open(path, "w") as f:
        json.dump(doc, f)


def main():
    build, address, conninfo, pg_dump, out = sys.argv[1:6]
    rng = random.Random(10)
    runs = [("main", "m%02d" % i, False, "node-1") for i in range(1, 13)]
    runs += [("pr-slow", "p01", True, "node-1"), ("pr-slow", "p01", True, "node-2"),
             ("pr-clean", "p02", False, "node-1")]
    with tempfile.TemporaryDirectory() as tmp:
        for branch, commit, slow, node in runs:
            path = os.path.join(tmp, commit + node + ".json")
            result_file(path, branch, commit, slow, rng)
            subprocess.run([os.path.join(build, "cli/perfgate"), "ingest", path, "--coordinator", address,
                            "--branch", branch, "--commit", commit, "--node", node], check=True)
    dump = subprocess.run([pg_dump, "--data-only", "--inserts", "--load-via-partition-root", "--no-owner",
                           "--exclude-table-data=schema_migrations", conninfo],
                          check=True, capture_output=True, text=True).stdout
    with open(out, "w") as f:
        f.write("-- Made by make_schema_0010_history.py (see there) with a coordinator of schema version 10.\n")
        f.writelines(line for line in dump.splitlines(True) if not line.startswith("\\"))


if __name__ == "__main__":
    main()

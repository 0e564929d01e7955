#!/usr/bin/env bash
# The main job on one machine: install what is missing, build, start a private
# PostgreSQL (as an unprivileged user, data under .perfgate/ of the checkout),
# start the coordinator on loopback, measure the baseline and the candidate
# build interleaved on this node (GPU suites when a GPU is present, a set of
# host cases otherwise), one process per block, stream both sides to the
# coordinator as runs, and print the coordinator's verdict on the pair.
#
# Why A/B and not two runs: samples of one process share its luck, and two
# runs of one unchanged binary can differ by tens of percent on a shared
# machine. Several processes a side, interleaved, are what a verdict needs.
#
# Environment: PERFGATE_PG_PORT (default 55432), PERFGATE_PORT (default
# 50051), PERFGATE_HTTP_PORT (the dashboard's, default 8080), PERFGATE_DEMO_SLOWDOWN (e.g. 'kernels/sgemm{k=1024*=25' to watch the
# gate catch a known slowdown), PERFGATE_CASE_TIMEOUT (seconds per block,
# default 30), PERFGATE_AB_CASE_BUDGET (seconds per case, default 60),
# PERFGATE_WITH_CUDA (ON/OFF: compile the CUDA backends; default ON where an
# NVIDIA driver is loaded), PERFGATE_BUILD_DIR (the build folder; default
# build/, or build-quickstart/ without CUDA).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PERFGATE_BUILD_DIR:-$root/build}
state=$root/.perfgate
pg_port=${PERFGATE_PG_PORT:-55432}
port=${PERFGATE_PORT:-50051}
http_port=${PERFGATE_HTTP_PORT:-8080}
export PERFGATE_CASE_TIMEOUT=${PERFGATE_CASE_TIMEOUT:-30}

say() { printf '\n== %s\n' "$*"; }

say "installing what is missing"
"$root/scripts/install-deps.sh"

say "building"
# The three programs the job runs, configured as scripts/test.sh configures
# (through ccache: either build reuses the other's objects). CUDA objects
# are compiled only where there is a driver to run them or
# PERFGATE_WITH_CUDA=ON asks; without them the build has a folder of its
# own, so that the tests' build (CUDA on wherever nvcc is) stays as it was.
# shellcheck source=scripts/configure.sh
. "$root/scripts/configure.sh"
cuda=${PERFGATE_WITH_CUDA:-}
if [ -z "$cuda" ]; then
  if [ -e /proc/driver/nvidia/version ]; then cuda=ON; else cuda=OFF; fi
fi
if [ "$cuda" = OFF ] && [ -z "${PERFGATE_BUILD_DIR:-}" ]; then build=$root/build-quickstart; fi
perfgate_configure "$root" "$build" -DPERFGATE_WITH_CUDA="$cuda" >/dev/null
cmake --build "$build" -j"$(nproc)" --target perfgate-agent perfgate-coordinator perfgate

say "starting PostgreSQL on 127.0.0.1:$pg_port (data in $state/pgdata)"
pg_bin=$(dirname "$(command -v initdb 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
mkdir -p "$state"
as_db_user() {
  # PostgreSQL refuses to run as root: as root, run it as the postgres user.
  if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/sh -c "$1"; else sh -c "$1"; fi
}
if [ "$(id -u)" -eq 0 ]; then
  chown postgres "$state"
  if ! su postgres -s /bin/sh -c "test -w '$state'"; then
    echo "quickstart: the postgres user cannot write $state (is the checkout under a private home?); clone it somewhere readable, e.g. /srv" >&2
    exit 2
  fi
fi
if [ ! -f "$state/pgdata/PG_VERSION" ]; then
  as_db_user "'$pg_bin/initdb' -D '$state/pgdata' -A trust -U perfgate >/dev/null"
fi
if ! as_db_user "'$pg_bin/pg_ctl' -D '$state/pgdata' status" >/dev/null 2>&1; then
  as_db_user "'$pg_bin/pg_ctl' -D '$state/pgdata' -l '$state/postgres.log' -w start \
    -o \"-p $pg_port -c listen_addresses=127.0.0.1 -c unix_socket_directories=''\"" >/dev/null
fi
db="host=127.0.0.1 port=$pg_port user=perfgate dbname=perfgate"
if ! psql "host=127.0.0.1 port=$pg_port user=perfgate dbname=postgres" -tAc \
    "select 1 from pg_database where datname='perfgate'" | grep -q 1; then
  psql "host=127.0.0.1 port=$pg_port user=perfgate dbname=postgres" -qc "create database perfgate"
fi

say "starting the coordinator on 127.0.0.1:$port"
"$build/coordinator/perfgate-coordinator" --database "$db" serve --listen "127.0.0.1:$port" \
  --http-listen "127.0.0.1:$http_port" >"$state/coordinator.log" 2>&1 &
coordinator=$!
trap 'kill $coordinator 2>/dev/null; wait $coordinator 2>/dev/null || true' EXIT
# Ready when its grpc.health.v1 service answers SERVING.
if ! "$build/cli/perfgate" --coordinator "127.0.0.1:$port" --timeout 30 health; then
  cat "$state/coordinator.log" >&2
  exit 2
fi

export PERFGATE_COORDINATOR=127.0.0.1:$port
commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)

agent="$build/agent/perfgate-agent"
# On a CPU-only machine: one case of each kind the host suites have (compute,
# memory, a training step, a decode step); on a GPU node every case that runs.
selection=()
if "$agent" probe 2>/dev/null | grep -q '^sku: cpu-'; then
  selection=(--filter 'kernels/sgemm{k=1024,*;kernels/triad*;training/step{*;inference/decode{backend=host,batch=1,*')
fi
candidate=("$agent")
[ -n "${PERFGATE_DEMO_SLOWDOWN:-}" ] && candidate+=(--inject-slowdown "$PERFGATE_DEMO_SLOWDOWN")
# `ab` takes each side as one command line; quote every word of the candidate's.
candidate_line=$(printf "'%s' " "${candidate[@]}")

say "A/B: baseline and candidate builds interleaved on this node"
# The verdict table is printed once, by the coordinator's gate below: ab's own
# table (from its "perfgate-agent ab: candidate" header to its verdict line)
# goes to ab.log only.
set +e
"$agent" ab --baseline "$agent" --candidate "$candidate_line" "${selection[@]}" \
  --branch quickstart-candidate --commit "$commit" --policy "$root/deploy/policy/default.yaml" \
  | tee "$state/ab.log" \
  | awk -v logfile="$state/ab.log" '
      /^perfgate-agent ab: candidate / { table = 1 }
      !table { print; fflush() }
      table && /^perfgate-agent ab: (PASS|REGRESSION|INCONCLUSIVE)/ {
        table = 0; print "(ab'"'"'s own table is in " logfile "; the gate below judges the stored pair)"; fflush()
      }'
ab_exit=${PIPESTATUS[0]}
set -e
if [ "$ab_exit" -eq 2 ]; then
  echo "quickstart: the A/B job failed (see above)" >&2
  exit 2
fi
baseline_id=$(sed -n 's/^baseline run_id: //p' "$state/ab.log")
candidate_id=$(sed -n 's/^candidate run_id: //p' "$state/ab.log")
echo "$baseline_id" >"$state/baseline.id"
echo "$candidate_id" >"$state/candidate.id"

say "gate verdict (the coordinator's, on the stored pair)"
set +e
"$build/cli/perfgate" gate --run "$candidate_id" --mode ab --baseline-run "$baseline_id" \
  --policy "$root/deploy/policy/default.yaml" \
  --markdown "$state/report.md" --junit "$state/junit.xml" --json "$state/report.json"
verdict=$?
set -e
echo
echo "reports: $state/report.md, $state/junit.xml, $state/report.json"
# The command that stops PostgreSQL as the user it runs as (pg_ctl refuses root).
stop_db="'$pg_bin/pg_ctl' -D '$state/pgdata' stop"
[ "$(id -u)" -eq 0 ] && stop_db="su postgres -s /bin/sh -c \"$stop_db\""
echo "data: PostgreSQL in $state/pgdata (port $pg_port, left running; stop with"
echo "  $stop_db), coordinator log $state/coordinator.log"
# The coordinator stays up to serve the dashboard, like PostgreSQL.
trap - EXIT
echo
echo "dashboard: http://127.0.0.1:$http_port/  (runs: #/runs, this pair: #/compare?base=$baseline_id&cand=$candidate_id)"
echo "  the coordinator is left running (pid $coordinator); stop it with: kill $coordinator"
exit $verdict

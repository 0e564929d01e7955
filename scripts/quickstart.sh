#!/usr/bin/env bash
# The main job on one machine: install what is missing, build, start a private
# PostgreSQL (as an unprivileged user, data under .perfgate/ of the checkout),
# start the coordinator on loopback, measure a baseline run of branch main and
# a candidate run on whatever hardware is here (GPU suites when a GPU is
# present, host suites otherwise), and print the gate's verdict.
#
# Environment: PERFGATE_PG_PORT (default 55432), PERFGATE_PORT (default
# 50051), PERFGATE_DEMO_SLOWDOWN (e.g. 'kernels/sgemm*=25' to watch the gate
# catch a known slowdown), PERFGATE_CASE_TIMEOUT (seconds per case, default 5).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PERFGATE_BUILD_DIR:-$root/build}
state=$root/.perfgate
pg_port=${PERFGATE_PG_PORT:-55432}
port=${PERFGATE_PORT:-50051}
export PERFGATE_CASE_TIMEOUT=${PERFGATE_CASE_TIMEOUT:-5}

say() { printf '\n== %s\n' "$*"; }

say "installing what is missing"
"$root/scripts/install-deps.sh"

say "building"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
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
  >"$state/coordinator.log" 2>&1 &
coordinator=$!
trap 'kill $coordinator 2>/dev/null; wait $coordinator 2>/dev/null || true' EXIT
# Ready when its grpc.health.v1 service answers SERVING.
if ! "$build/cli/perfgate" --coordinator "127.0.0.1:$port" --timeout 30 health; then
  cat "$state/coordinator.log" >&2
  exit 2
fi

export PERFGATE_COORDINATOR=127.0.0.1:$port
commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)

say "baseline run (branch main)"
"$build/agent/perfgate-agent" run --branch main --commit "$commit" --run-id-file "$state/baseline.id"

say "candidate run (branch quickstart-candidate)"
slow=()
[ -n "${PERFGATE_DEMO_SLOWDOWN:-}" ] && slow=(--inject-slowdown "$PERFGATE_DEMO_SLOWDOWN")
"$build/agent/perfgate-agent" run --branch quickstart-candidate --commit "$commit" \
  --run-id-file "$state/candidate.id" "${slow[@]}"

say "gate verdict"
# The candidate against the baseline run just made on this node (an A/B gate
# of two runs): earlier quickstarts' runs of main stay out of it. In CI the
# gate takes the last K runs of the baseline branch instead (README).
set +e
"$build/cli/perfgate" gate --run "$(cat "$state/candidate.id")" \
  --mode ab --baseline-run "$(cat "$state/baseline.id")" \
  --policy "$root/deploy/policy/default.yaml" \
  --markdown "$state/report.md" --junit "$state/junit.xml" --json "$state/report.json"
verdict=$?
set -e
echo
echo "reports: $state/report.md, $state/junit.xml, $state/report.json"
echo "data: PostgreSQL in $state/pgdata (port $pg_port, left running; stop with"
echo "  pg_ctl -D $state/pgdata stop), coordinator log $state/coordinator.log"
exit $verdict

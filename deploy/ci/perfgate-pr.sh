#!/usr/bin/env bash
# perfgate in a pull request's CI job: measure the checked-out commit, gate
# it against the runs of the merge base's branch, measure once more when the
# gate calls a regression unconfirmed (one run cannot tell it from a noisy
# neighbour), and leave what the CI system posts in OUT_DIR:
#   report.json  junit.xml  comment.md  checks.json  summary.md  (and the
#   summary appended to $GITHUB_STEP_SUMMARY when GitHub sets it).
#
# usage: perfgate-pr.sh OUT_DIR -- MEASURE_COMMAND [ARG...]
#   MEASURE_COMMAND measures this commit and prints "run_id: <id>":
#   `perfgate-agent run ...`, or `perfgate ingest FILE ...` for the results
#   of a team's own benchmark. It is run as given (an argv, no shell).
# environment:
#   PERFGATE_COORDINATOR      the coordinator, host:port (required)
#   PERFGATE_POLICY           the gate policy file (required)
#   PERFGATE_BASE_REF         the branch the pull request merges into (main)
#   PERFGATE_BASELINE_COMMIT  the merge base (default: git merge-base origin/BASE HEAD)
#   PERFGATE_DASHBOARD_URL    the dashboard's address, for the report's link
#   PERFGATE                  the perfgate binary (default: perfgate on PATH)
# exit: the final gate's: 0 pass, 1 regression, 3 inconclusive; 2 when
# something could not run.
set -euo pipefail

usage() { echo "usage: $0 OUT_DIR -- MEASURE_COMMAND [ARG...]" >&2; exit 2; }
[[ $# -ge 3 && $2 == -- ]] || usage
out=$1
shift 2
: "${PERFGATE_COORDINATOR:?set PERFGATE_COORDINATOR to the coordinator (host:port)}"
: "${PERFGATE_POLICY:?set PERFGATE_POLICY to the gate policy file}"
perfgate=${PERFGATE:-perfgate}
base_ref=${PERFGATE_BASE_REF:-main}
merge_base=${PERFGATE_BASELINE_COMMIT:-}
if [[ -z $merge_base ]]; then
  merge_base=$(git merge-base "origin/$base_ref" HEAD) || { echo "perfgate-pr: no merge base with origin/$base_ref" >&2; exit 2; }
fi
mkdir -p "$out"

# Runs the measuring command; prints the run id it reported.
measure() {
  local log
  if ! log=$("$@" 2>&1); then
    printf '%s\n' "$log" >&2
    echo "perfgate-pr: the measuring command failed" >&2
    return 2
  fi
  printf '%s\n' "$log" >&2
  local id
  id=$(printf '%s\n' "$log" | sed -n 's/.*run_id: \([0-9a-f-]\{36\}\).*/\1/p' | tail -n 1)
  [[ -n $id ]] || { echo "perfgate-pr: the measuring command printed no run_id" >&2; return 2; }
  printf '%s\n' "$id"
}

# Gates run $1, writing every file under $out (the job summary to $2); its exit code.
gate() {
  local rc=0
  env -u GITHUB_STEP_SUMMARY "$perfgate" --coordinator "$PERFGATE_COORDINATOR" gate --run "$1" \
    --baseline-branch "$base_ref" --baseline-commit "$merge_base" --policy "$PERFGATE_POLICY" \
    --json "$out/report.json" --junit "$out/junit.xml" --markdown "$out/report.md" \
    --comment-file "$out/comment.md" --checks-json "$out/checks.json" --summary-file "$2" || rc=$?
  return "$rc"
}

run=$(measure "$@") || exit 2
rc=0
gate "$run" "$out/summary-first.md" || rc=$?
if [[ $rc -eq 3 ]] && grep -q '"VERDICT_UNCONFIRMED"' "$out/report.json"; then
  echo "perfgate-pr: a regression is unconfirmed; measuring this commit once more" >&2
  run=$(measure "$@") || exit 2
  rc=0
  gate "$run" "$out/summary.md" || rc=$?
else
  mv "$out/summary-first.md" "$out/summary.md"
fi
rm -f "$out/summary-first.md"
if [[ -n ${GITHUB_STEP_SUMMARY:-} && -f $out/summary.md ]]; then
  cat "$out/summary.md" >> "$GITHUB_STEP_SUMMARY"
fi
exit "$rc"

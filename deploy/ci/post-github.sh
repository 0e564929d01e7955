#!/usr/bin/env bash
# Posts what perfgate-pr.sh left in OUT_DIR to a GitHub pull request: the
# comment (editing perfgate's earlier one when there is one) and a check run.
# Uses the GitHub CLI with the job's token (GH_TOKEN=${{ github.token }};
# the job needs permissions pull-requests: write and checks: write).
#
# usage: post-github.sh OUT_DIR PR_NUMBER
# environment: GITHUB_REPOSITORY (owner/name, set by GitHub Actions), GH_TOKEN.
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 OUT_DIR PR_NUMBER" >&2; exit 2; }
out=$1
pr=$2
: "${GITHUB_REPOSITORY:?set GITHUB_REPOSITORY to owner/name}"
for f in comment.md checks.json; do
  [[ -s $out/$f ]] || { echo "post-github: $out/$f is missing; run perfgate-pr.sh first" >&2; exit 2; }
done
gh=${GH:-gh}

# The comment: perfgate's last one edited, or a new one.
if ! "$gh" pr comment "$pr" --repo "$GITHUB_REPOSITORY" --edit-last --body-file "$out/comment.md"; then
  "$gh" pr comment "$pr" --repo "$GITHUB_REPOSITORY" --body-file "$out/comment.md"
fi
# The check run, as perfgate rendered it (conclusion, title, summary, text).
"$gh" api --method POST "repos/$GITHUB_REPOSITORY/check-runs" --input "$out/checks.json" >/dev/null

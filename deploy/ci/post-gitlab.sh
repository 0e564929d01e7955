#!/usr/bin/env bash
# Posts the comment perfgate-pr.sh left in OUT_DIR to a GitLab merge request
# as a note, with a project access token (scope api) in PERFGATE_GITLAB_TOKEN;
# CI_JOB_TOKEN may not write notes. The variables CI_* are GitLab's own.
#
# usage: post-gitlab.sh OUT_DIR
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 OUT_DIR" >&2; exit 2; }
out=$1
: "${PERFGATE_GITLAB_TOKEN:?set PERFGATE_GITLAB_TOKEN (a project access token with scope api)}"
: "${CI_API_V4_URL:?run inside a GitLab CI job}"
: "${CI_PROJECT_ID:?run inside a GitLab CI job}"
: "${CI_MERGE_REQUEST_IID:?run in a merge request pipeline}"
[[ -s $out/comment.md ]] || { echo "post-gitlab: $out/comment.md is missing; run perfgate-pr.sh first" >&2; exit 2; }
curl=${CURL:-curl}
"$curl" --fail --silent --show-error --request POST \
  --header "PRIVATE-TOKEN: $PERFGATE_GITLAB_TOKEN" \
  --data-urlencode "body@$out/comment.md" \
  "$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$CI_MERGE_REQUEST_IID/notes" >/dev/null

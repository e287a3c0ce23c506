# Shared helpers for the command-line tests: each test is a bash script that exits non-zero on failure.
set -euo pipefail
: "${HRM:?HRM must point at the hrm binary}"
: "${HRM_ROOT:?HRM_ROOT must point at the repository}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# CMD | matches GREP-ARGS...: true when CMD's output has a line grep matches.  It reads all of
# it: "CMD | grep -q" stops reading at the first match, and under pipefail a CMD that is still
# writing then dies of SIGPIPE and fails the pipeline, at random (hrm job --json of a job with
# many tasks writes more than one buffer).
matches() { grep "$@" >/dev/null; }
# need CMD...: fails the test when a tool it relies on is missing, so that a check
# written as "! tool ..." cannot pass because the tool was not found.
need() { local c; for c in "$@"; do command -v "$c" >/dev/null || fail "needs '$c' (scripts/install-deps installs it)"; done; }
# no_process PGREP-ARGS...: true when no process matches.  pgrep's own failure (missing, bad
# pattern) fails the test instead of reading as "none", the trap of a bare "! pgrep".
no_process() {
  need pgrep
  local rc=0
  pgrep "$@" >/dev/null || rc=$?
  [ "$rc" -le 1 ] || fail "pgrep $* failed with status $rc"
  [ "$rc" -eq 1 ]
}
# expect_exit CODE CMD...: runs CMD, keeps stdout/stderr in $TMP/out and $TMP/err
expect_exit() {
  local want=$1; shift
  set +e; "$@" >"$TMP/out" 2>"$TMP/err"; local got=$?; set -e
  [ "$got" -eq "$want" ] || { cat "$TMP/err" >&2; fail "'$*' exited $got, expected $want"; }
}

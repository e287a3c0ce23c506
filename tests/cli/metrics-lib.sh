# Helpers for the metrics tests (t0218-t0220), sourced after rtlib.sh.
need promtool python3
M="$HRM_ROOT/tests/cli/metrics.py"
# metrics_up NODES up-flags...: hrm up in $TMP/up (HRM_STATE points there), waiting for its
# nodes and its HTTP address.
metrics_up() {
  local nodes=$1; shift
  U="$TMP/up"
  export HRM_STATE="$U"
  timeout -k 10 500 "$HRM" up --nodes "$nodes" --state "$U" "$@" >"$TMP/up.out" 2>"$TMP/up.err" &
  PIDS+=("$!")
  until_ok 90 nodes_up "$nodes" || { cat "$TMP/up.err" >&2; fail "hrm up did not start"; }
  until_ok 60 test -s "$U/http" || fail "no $U/http"
}
# scrape FILE: GET /metrics (read-only token) into FILE, which promtool must accept (the
# format and the names); value FILE SERIES: one sample; is FILE SERIES WANT: it equals WANT.
scrape() {
  python3 "$M" fetch "$U" "$1" || fail "GET /metrics"
  promtool check metrics <"$1" >"$TMP/promtool.out" 2>&1 ||
    { cat "$TMP/promtool.out" >&2; fail "promtool check metrics refused $1"; }
}
value() { python3 "$M" value "$@"; }
is() { python3 "$M" is "$@"; }

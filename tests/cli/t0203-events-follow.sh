# hrm events --follow prints an event that happens after it started, stops cleanly on SIGTERM and SIGINT, and says so and fails when the master goes away.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 2 --mem 2G
until_ok 60 nodes_up 1 || fail "node did not register"
# follow FILE: hrm events --follow --json into FILE, in the background (pid in FOLLOWER)
follow() {
  timeout 120 "$HRM" events --follow --json --timeout 3 >"$1" 2>"$1.err" &
  FOLLOWER=$!; PIDS+=("$FOLLOWER")
  until_ok 60 grep -q '"kind":"node_up"' "$1" || fail "the follower printed nothing"
}
follow "$TMP/f1"
id=$("$HRM" submit -- true) || fail "submit"
until_ok 60 grep -q "\"job\":$id,\"kind\":\"job_finished\"" "$TMP/f1" ||
  { cat "$TMP/f1" >&2; fail "--follow did not print the new job's events"; }
kill -TERM "$FOLLOWER"
rc=0; wait "$FOLLOWER" || rc=$?
[ "$rc" -eq 0 ] || fail "SIGTERM: exit $rc"
follow "$TMP/f2"
kill -INT "$FOLLOWER"
rc=0; wait "$FOLLOWER" || rc=$?
[ "$rc" -eq 0 ] || fail "SIGINT: exit $rc"

# The master goes away: the follower says so and exits 1.
follow "$TMP/f3"
kill -TERM "$MASTER"; wait "$MASTER" || true
rc=0; wait "$FOLLOWER" || rc=$?
[ "$rc" -eq 1 ] || fail "master gone: exit $rc"
matches "master went away" "$TMP/f3.err" || { cat "$TMP/f3.err" >&2; fail "no message"; }
echo ok

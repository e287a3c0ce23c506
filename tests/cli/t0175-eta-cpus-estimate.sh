# A job that cannot start because another holds the node's CPUs: hrm job names the CPUs it waits
# for, and its estimate is unknown (null) while the holder's run time is unknown, a number once
# the holder is a task with a known run time (--time).
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 2 --mem 4G
until_ok 60 nodes_up 1 || fail "node did not register"
# field JOB KEY: the job object's KEY as JSON
field() { "$HRM" job "$1" --json | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin).get(sys.argv[1], "absent")))' "$2"; }
hold() { echo "touch '$TMP/go-$1'; while [ ! -e '$TMP/stop-$1' ]; do sleep 0.05; done"; }

# a holds both CPUs; nobody knows how long it runs (no --time, a command never run before).
a=$("$HRM" submit --cpus 2 -- sh -c "$(hold a)") || fail "submit a"
until_ok 60 test -e "$TMP/go-a" || fail "a did not start"
b=$("$HRM" submit --cpus 2 --time 30s -- sh -c "$(hold b)") || fail "submit b"
reason=$(field "$b" pending_reason)
case "$reason" in
  *"waiting for 2 CPUs free on one node (CPUs short on 1 node)"*) ;;
  *) fail "b's reason does not name the CPUs it waits for: $reason" ;;
esac
[ "$(field "$b" estimated_start_s)" = null ] || fail "b: an estimate although a's run time is unknown: $(field "$b" estimated_start_s)"
"$HRM" job "$b" >"$TMP/bj"
grep -qx "pending: waiting for 2 CPUs free on one node (CPUs short on 1 node)" "$TMP/bj" || { cat "$TMP/bj" >&2; fail "hrm job b: no pending line"; }
grep -qx "estimated start: unknown" "$TMP/bj" || { cat "$TMP/bj" >&2; fail "hrm job b: no unknown estimate"; }

# a ends; b (expected 30 s) takes the node; c waits for it: its estimate is known, within b's 30 s.
c=$("$HRM" submit --cpus 1 -- true) || fail "submit c"
touch "$TMP/stop-a"
until_ok 60 test -e "$TMP/go-b" || fail "b did not start"
est=$(field "$c" estimated_start_s)
python3 -c 'import sys; v = sys.argv[1]; sys.exit(0 if v.isdigit() and 0 <= int(v) <= 30 else 1)' "$est" \
  || fail "c: estimate '$est' is not a number of seconds within b's expected 30 s"
case "$(field "$c" pending_reason)" in
  *"waiting for 1 CPU free on one node (CPUs short on 1 node)"*) ;;
  *) fail "c's reason: $(field "$c" pending_reason)" ;;
esac
"$HRM" job "$c" | grep -Eq "^estimated start: in [0-9]+s$" || { "$HRM" job "$c" >&2; fail "hrm job c: estimate not shown"; }
touch "$TMP/stop-b"
expect_exit 0 timeout 60 "$HRM" wait "$c"
# An ended job is pending no more: both fields null.
[ "$(field "$c" pending_reason)" = null ] && [ "$(field "$c" estimated_start_s)" = null ] \
  || fail "ended job c still has a reason or an estimate"
echo "ok"

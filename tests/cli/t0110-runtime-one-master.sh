# One master per state folder: a second hrm master or hrm up on a folder in use is refused at once, naming the pid that holds it.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 2 --mem 1G
until_ok 60 nodes_up 1 || fail "agent did not register"
[ "$(cat "$S/master.lock")" = "$MASTER" ] || fail "master.lock does not hold the master's pid"
id=$("$HRM" submit -- true) || fail "submit"
[ "$id" = 1 ] || fail "first job is $id"

# A second master on the same folder: refused (under timeout: a second master that
# started would serve until killed, and 124 is not 1).
expect_exit 1 timeout 30 "$HRM" master --state "$S"
grep -q "in use" "$TMP/err" || fail "no 'in use' reason: $(cat "$TMP/err")"
grep -q "pid $MASTER" "$TMP/err" || fail "the holder's pid is not named: $(cat "$TMP/err")"
[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "more than one line: $(cat "$TMP/err")"
# hrm up on it too, before it touches anything (the endpoint stays).
cp "$S/endpoint" "$TMP/endpoint.before"
expect_exit 1 timeout 30 "$HRM" up --nodes 1 --state "$S"
grep -q "pid $MASTER" "$TMP/err" || fail "hrm up does not name the master's pid: $(cat "$TMP/err")"
cmp -s "$S/endpoint" "$TMP/endpoint.before" || fail "hrm up changed the endpoint of a folder in use"
# The first master still serves, and job ids go on from its table.
id=$("$HRM" submit -- true) || fail "submit after the refusals"
[ "$id" = 2 ] || fail "second job is $id"
"$HRM" jobs --all --json | python3 -c 'import json, sys
d = json.load(sys.stdin); jobs = d["jobs"] if isinstance(d, dict) else d
sys.exit(0 if sorted(j["id"] for j in jobs) == [1, 2] else 1)' || fail "jobs are not 1 and 2"

# hrm up twice on one folder: the second is refused, naming the first hrm up's pid.
U="$TMP/up"
timeout 200 "$HRM" up --nodes 1 --cpus 1 --state "$U" >"$TMP/up.out" 2>"$TMP/up.err" &
PIDS+=("$!")
up_ready() { HRM_STATE="$U" nodes_up 1; }
until_ok 60 up_ready || { cat "$TMP/up.err" >&2; fail "hrm up did not start"; }
up_pid=$(cat "$U/up.lock")
kill -0 "$up_pid" || fail "up.lock does not hold a live pid"
expect_exit 1 timeout 30 "$HRM" up --nodes 1 --state "$U"
grep -q "hrm up with pid $up_pid" "$TMP/err" || fail "second hrm up: $(cat "$TMP/err")"
expect_exit 1 timeout 30 "$HRM" master --state "$U"
grep -q "pid $(cat "$U/master.lock")" "$TMP/err" || fail "master beside hrm up: $(cat "$TMP/err")"
HRM_STATE="$U" "$HRM" nodes >/dev/null || fail "the first cluster stopped serving"

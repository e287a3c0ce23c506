# Two agents registering with one name (and one key): the newer connection becomes the node, the older one is told why and stops, instead of the two taking the name from each other at every message.
. "$(dirname "$0")/rtlib.sh"
keygen
"$HRM" keygen --node twin1 "$S/keys" >/dev/null || fail "keygen"
start_master
# exec: run in the background, the agent is the job itself, so $! is its pid (rt_cleanup stops it)
sim() { exec "$HRM" agent --state "$S" --no-cgroup --name twin1 --cpus 2 --mem 1G --log-level info "$@"; }
sim >>"$TMP/first.log" 2>&1 &
FIRST=$!; PIDS+=("$FIRST")
until_ok 60 nodes_up 1 || fail "the first agent did not register"
job=$("$HRM" submit --cpus 1 -- sleep 600) || fail "submit"
until_ok 60 started "$job" 1 || fail "the task did not start on the first agent"
sim >>"$TMP/second.log" 2>&1 &
SECOND=$!; PIDS+=("$SECOND")
until_ok 60 grep -q "node twin1 registered again from another connection" "$TMP/master.log" || fail "no log line about the second connection"
# The first one is told, says why and exits 1.
for _ in $(seq 600); do kill -0 "$FIRST" 2>/dev/null || break; sleep 0.1; done
kill -0 "$FIRST" 2>/dev/null && fail "the first agent still runs"
rc=0; wait "$FIRST" || rc=$?
[ "$rc" -eq 1 ] || fail "the first agent exited $rc, expected 1"
grep -q "registered again from another connection, which replaces this one" "$TMP/first.log" || fail "the first agent did not say why it stopped"
# The second one is the node: up, and the task it does not run is placed again there.
kill -0 "$SECOND" || fail "the second agent died"
until_ok 60 started "$job" 1 || fail "the task does not run on the node again"
"$HRM" nodes --json | python3 -c '
import json, sys
n = [x for x in json.load(sys.stdin) if x["name"] == "twin1"]
assert len(n) == 1 and n[0]["state"] == "up", n
' || fail "twin1 is not one node, up"
n=$(grep -c "twin1 .*registered" "$TMP/master.log")
[ "$n" -le 3 ] || fail "$n registrations of twin1: the two agents kept taking the name"
"$HRM" cancel "$job" >/dev/null || fail "cancel"
echo ok

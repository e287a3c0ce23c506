# 100 simulated agents register with a master that cannot answer yet (stopped with SIGSTOP), so each sends its registration again on the same connection; when the master resumes it reconciles each node once and only welcomes the copy again (a copy carries an older list of runs: reconciling it again after a launch would call that run lost and run the task twice); then a job runs exactly once on every node.
. "$(dirname "$0")/rtlib.sh"
need python3
N=100
keygen
"$HRM" keygen --node f --node-count $N "$S/keys" >/dev/null || fail "keygen --node-count"
start_master --reconcile 60s --node-timeout 600s
kill -STOP "$MASTER"
"$HRM" agent --state "$S" --simulate-exec --count $N --name-prefix f --cpus 1 --mem 1G \
  --log-level debug >>"$TMP/fleet.log" 2>&1 &
FLEET=$!; PIDS+=("$FLEET")
resent() { [ "$(grep -c "registration sent; .*(retry 6 s)" "$TMP/fleet.log")" -ge "$1" ]; }
until_ok 120 resent $N || { kill -CONT "$MASTER"; fail "the agents did not send their registration again"; }
kill -CONT "$MASTER"
until_ok 120 nodes_up $N || fail "not all $N agents registered"
handled() { grep -Eq "sent its registration again on the same connection|registered again" "$TMP/master.log"; }
until_ok 60 handled || fail "the registrations sent again were not handled"
again=$(grep -c "registered again" "$TMP/master.log" || true)
[ "$again" -eq 0 ] || fail "$again registrations sent again were reconciled a second time"
once=$(grep -c "registered; 0 lost" "$TMP/master.log" || true)
[ "$once" -eq $N ] || fail "$once registrations reconciled for $N agents"
job=$("$HRM" submit --count $N --cpus 1 -- sleep 3600) || fail "submit"
until_ok 120 started "$job" $N || fail "not every task started"
"$HRM" job "$job" --json | python3 -c '
import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
nodes = [t["node"] for t in j["tasks"]]
assert len(set(nodes)) == len(nodes), "two tasks on one node"
assert all(t["attempt"] == 1 for t in j["tasks"]), "a task was placed twice"' || fail "runs are not one per node, once"
"$HRM" cancel "$job" >/dev/null || fail "cancel"
echo ok

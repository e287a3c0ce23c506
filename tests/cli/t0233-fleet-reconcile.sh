# 200 simulated agents connect at once, each runs a task; the master is killed (SIGKILL) and restarted: every agent registers again, every run is kept where it was (same node, same attempt), none is lost or run twice, and the master answers throughout.
. "$(dirname "$0")/rtlib.sh"
N=200
keygen
"$HRM" keygen --node f --node-count $N "$S/keys" >/dev/null || fail "keygen --node-count"
start_master --reconcile 120s
"$HRM" agent --state "$S" --simulate-exec --count $N --name-prefix f --cpus 1 --mem 1G --log-level warning >>"$TMP/fleet.log" 2>&1 &
PIDS+=("$!")
until_ok 120 nodes_up $N || fail "not all $N agents registered"
job=$("$HRM" submit --count $N --cpus 1 -- sleep 3600) || fail "submit"
until_ok 120 started "$job" $N || fail "not every task started"
placement() { "$HRM" job "$job" --json | python3 -c '
import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
print(" ".join("%s:%s" % (t["node"], t["attempt"]) for t in j["tasks"]))'; }
before=$(placement)
[ "$(echo "$before" | tr " " "\n" | cut -d: -f1 | sort -u | wc -l)" -eq $N ] || fail "the tasks are not one per node"

kill -KILL "$MASTER"; wait "$MASTER" 2>/dev/null || true
start_master --reconcile 120s
until_ok 120 grep -q "reconciliation over" "$TMP/master.log" || fail "reconciliation did not end"
after=$(placement)
[ "$before" = "$after" ] || fail "runs moved or restarted across the restart"
lost=$(grep "registered" "$TMP/master.log" | grep -vc "; 0 lost" || true)
[ "$lost" -eq 0 ] || fail "$lost registrations lost runs"
started "$job" $N || fail "not every task runs after the restart"
expect_exit 0 "$HRM" jobs
"$HRM" cancel "$job" >/dev/null || fail "cancel"
expect_exit 143 timeout 120 "$HRM" wait "$job"
echo ok

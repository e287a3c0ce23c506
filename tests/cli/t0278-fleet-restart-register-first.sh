# 100 simulated agents each run a task; the master is killed (SIGKILL) and restarted: every agent notices its connection dropped and queues its registration for the new one, so the restarted master gets each agent's registration without first answering one of its messages not_registered (before, every agent's registration waited for such an answer to one of its messages queued meanwhile: N answers at least, 2N in practice); every run is kept in place.
. "$(dirname "$0")/rtlib.sh"
N=100
keygen
"$HRM" keygen --node f --node-count $N "$S/keys" >/dev/null || fail "keygen --node-count"
start_master --reconcile 120s --node-timeout 600s
"$HRM" agent --state "$S" --simulate-exec --count $N --name-prefix f --cpus 1 --mem 1G \
  --log-level info >>"$TMP/fleet.log" 2>&1 &
PIDS+=("$!")
until_ok 120 nodes_up $N || fail "not all $N agents registered"
job=$("$HRM" submit --count $N --cpus 1 -- sleep 3600) || fail "submit"
until_ok 120 started "$job" $N || fail "not every task started"

kill -KILL "$MASTER"; wait "$MASTER" 2>/dev/null || true
start_master --reconcile 120s --node-timeout 600s
until_ok 120 grep -q "reconciliation over" "$TMP/master.log" || fail "reconciliation did not end"
line=$(grep "reconciliation over" "$TMP/master.log")
regs=$(echo "$line" | sed -n 's/.*(\([0-9]*\) registrations handled.*/\1/p')
unreg=$(echo "$line" | sed -n 's/.*, \([0-9]*\) agent messages answered before.*/\1/p')
[ -n "$regs" ] && [ -n "$unreg" ] || fail "the reconciliation's end does not say what it handled: $line"
[ "$regs" -ge $N ] || fail "$regs registrations for $N agents"
# A message an agent sent in the instant between the kill and its noticing it (its ZeroMQ
# thread sees the connection drop a moment later, longer on a busy host) is still answered;
# one answer per agent or more is what waiting for the answer to register costs.
[ "$unreg" -lt $N ] || fail "$unreg messages answered not_registered for $N agents"
dropped=$(grep -c "connection to the master dropped" "$TMP/fleet.log" || true)
[ "$dropped" -ge $N ] || fail "$dropped of $N agents noticed the master's connection drop"
lost=$(grep "registered" "$TMP/master.log" | grep -vc "; 0 lost" || true)
[ "$lost" -eq 0 ] || fail "$lost registrations lost runs"
started "$job" $N || fail "not every task runs after the restart"
"$HRM" cancel "$job" >/dev/null || fail "cancel"
expect_exit 143 timeout 120 "$HRM" wait "$job"
echo ok

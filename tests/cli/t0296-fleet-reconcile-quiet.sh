# 100 simulated agents each run a task; the master is killed (SIGKILL) and restarted while one more agent (another process, killed with it) never comes back, so the master reconciles for its whole --reconcile window: the agents back already stay quiet meanwhile (their welcome asks for it), so the master handles few of their heartbeats and usage reports during the window (before, two a second each: over a thousand here); every run is kept, the missing node's run is requeued, and the agents report again after the window.
. "$(dirname "$0")/rtlib.sh"
need python3
N=100
keygen
"$HRM" keygen --node f --node-count $N "$S/keys" >/dev/null || fail "keygen --node-count"
"$HRM" keygen --node g --node-count 1 "$S/keys" >/dev/null || fail "keygen --node-count"
start_master --reconcile 8s --node-timeout 600s
"$HRM" agent --state "$S" --simulate-exec --count $N --name-prefix f --cpus 1 --mem 1G \
  --log-level debug >>"$TMP/fleet.log" 2>&1 &
PIDS+=("$!")
"$HRM" agent --state "$S" --simulate-exec --count 1 --name-prefix g --cpus 1 --mem 1G \
  --log-level info >>"$TMP/lost.log" 2>&1 &
LOST=$!; PIDS+=("$LOST")
until_ok 120 nodes_up $((N + 1)) || fail "not all $((N + 1)) agents registered"
job=$("$HRM" submit --count $((N + 1)) --cpus 1 -- sleep 3600) || fail "submit"
until_ok 120 started "$job" $((N + 1)) || fail "not every task started"

kill -KILL "$LOST" "$MASTER"; wait "$LOST" "$MASTER" 2>/dev/null || true
start_master --reconcile 8s --node-timeout 600s
until_ok 120 grep -q "reconciliation over" "$TMP/master.log" || fail "reconciliation did not end"
line=$(grep "reconciliation over" "$TMP/master.log")
regs=$(echo "$line" | sed -n 's/.*(\([0-9]*\) registrations handled.*/\1/p')
reports=$(echo "$line" | sed -n 's/.*, \([0-9]*\) heartbeats and usage reports meanwhile.*/\1/p')
[ -n "$regs" ] && [ -n "$reports" ] || fail "the reconciliation's end does not say what it handled: $line"
[ "$regs" -ge $N ] || fail "$regs registrations for $N agents"
# An agent welcomed within the window resumes at its end, at an offset within one period; the
# master notices the end at its next tick (later when the host starves it), so some reports may
# land in between: two per agent per second of such delay.  Agents that reported at their period
# through the 8 s window sent over ten each (1,400 here).
[ "$reports" -lt $((N * 3)) ] || fail "$reports heartbeats and usage reports from $N agents while reconciling"
quiet=$(grep -c "the master reconciles: no heartbeat or usage report for" "$TMP/fleet.log" || true)
[ "$quiet" -ge $N ] || fail "$quiet of $N agents were asked to stay quiet"
lost=$(grep "registered" "$TMP/master.log" | grep -vc "; 0 lost" || true)
[ "$lost" -eq 0 ] || fail "$lost registrations lost runs"
started "$job" $N || fail "not every run kept after the restart"
# The quiet ends: every agent reports again (its heartbeat's load, its task's CPU, reaches the
# master's node list; a node registered after a restart has none until then).
until_ok 60 python3 -c '
import json, subprocess, sys
nodes = json.loads(subprocess.check_output([sys.argv[1], "nodes", "--json"]))
back = [n for n in nodes if n["name"].startswith("f") and n["load"] >= 1]
sys.exit(0 if len(back) >= int(sys.argv[2]) else 1)' "$HRM" $N || fail "the agents did not report again after the quiet"
"$HRM" cancel "$job" >/dev/null || fail "cancel"
expect_exit 143 timeout 120 "$HRM" wait "$job"
echo ok

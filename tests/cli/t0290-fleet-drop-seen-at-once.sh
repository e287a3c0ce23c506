# 100 simulated agents whose heartbeat and usage report come once an hour, each running a task; the master killed (SIGKILL) and restarted: every agent sees its connection drop when it happens (its link's monitor wakes the fleet's loop) and registers with the new master, which reconciles all 100 (before, an agent saw the drop only at its next timer, an hour away: none registered).
. "$(dirname "$0")/rtlib.sh"
N=100
keygen
start_master --reconcile 600s --node-timeout 36000s
start_fleet $N f --cpus 1 --mem 1G --heartbeat 3600s --usage-period 3600s --log-level info
job=$("$HRM" submit --count $N --cpus 1 -- sleep 3600) || fail "submit"
until_ok 120 started "$job" $N || fail "not every task started"

kill -KILL "$MASTER"; wait "$MASTER" 2>/dev/null || true
start_master --reconcile 600s --node-timeout 36000s
reconciled_all $N "$job"
dropped=$(grep -c "connection to the master dropped" "$TMP/fleet.log" || true)
[ "$dropped" -eq $N ] || fail "$dropped of $N agents saw the master's connection drop"
echo ok

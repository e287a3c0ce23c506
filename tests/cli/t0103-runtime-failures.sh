# Failures: an agent killed with SIGKILL has its tasks rescheduled; a master killed mid-load loses no acknowledged job and reruns nothing finished.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --node-timeout 2s --reconcile 3s
start_agent n1 --cpus 2
start_agent n2 --cpus 2
until_ok 60 nodes_up 2 || fail "nodes did not register"
mkdir -p "$TMP/runs"

# Agent SIGKILL: 4 one-CPU tasks fill both nodes and hold them (until the test creates a-go);
# n1 dies; once the master has seen it go, its tasks finish on n2.
j=$("$HRM" submit --count 4 -- sh -c "echo \$HRM_NODE >> $TMP/runs/a-\$HRM_TASK_ID; while [ ! -e $TMP/a-go ]; do sleep 0.05; done") || fail "submit"
until_ok 60 sh -c "'$HRM' job $j --json | grep -q '\"running\": 4'" || fail "tasks never ran"
kill -KILL "$AGENT_n1"
until_ok 60 sh -c "'$HRM' nodes | grep -q 'n1 .*down'" || fail "n1 never went down"
touch "$TMP/a-go"
expect_exit 0 timeout 120 "$HRM" wait "$j"
"$HRM" job "$j" --json >"$TMP/j"
grep -q '"attempt": 2' "$TMP/j" || fail "no task was retried"
[ "$(cat "$TMP"/runs/a-* | grep -c n2)" -ge 4 ] || fail "tasks did not end on n2"
"$HRM" nodes >"$TMP/nodes"; grep -q "n1 .*down" "$TMP/nodes" || fail "n1 not down"
start_agent n1 --cpus 2
until_ok 60 nodes_up 2 || fail "n1 did not come back"

# Master SIGKILL mid-load: four tasks of k hold the cores (until k-go) across the restart, the
# rest of k and the 20 one-task jobs wait for them.
k=$("$HRM" submit --count 8 -- sh -c "echo x >> $TMP/runs/k-\$HRM_TASK_ID; while [ ! -e $TMP/k-go ]; do sleep 0.05; done") || fail "submit k"
acked=()
for i in $(seq 20); do acked+=("$("$HRM" submit --name q -- sh -c "echo x >> $TMP/runs/q-$i")") || fail "submit q$i"; done
until_ok 60 sh -c "'$HRM' job $k --json | grep -q '\"running\": 4'" || fail "k never ran"
kill -KILL "$MASTER"
wait "$MASTER" 2>/dev/null || true
start_master --node-timeout 2s --reconcile 3s
until_ok 60 nodes_up 2 || fail "agents did not re-register"
touch "$TMP/k-go"
expect_exit 0 timeout 120 "$HRM" wait "$k"
for id in "${acked[@]}"; do expect_exit 0 timeout 120 "$HRM" wait "$id"; done
ran_once k 8 "job k"
ran_once q 20 "acknowledged one-task jobs"

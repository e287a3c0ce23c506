# GET /metrics: promtool accepts the text, the gauges match the job and node tables (tasks by state of a finished job, a running task's allocation on its node), and the counters grow.
. "$(dirname "$0")/rtlib.sh"
. "$(dirname "$0")/metrics-lib.sh"
metrics_up 2 --cpus 4 --mem 8G --gpus 2

scrape "$TMP/m0"
for n in node1 node2; do
  is "$TMP/m0" "hrm_node_cpu_cores{node=\"$n\"}" 4 || fail "$n: cpu cores $(value "$TMP/m0" "hrm_node_cpu_cores{node=\"$n\"}")"
  is "$TMP/m0" "hrm_node_gpus{node=\"$n\"}" 2 || fail "$n: gpus"
  is "$TMP/m0" "hrm_node_memory_bytes{node=\"$n\"}" $((8 << 30)) || fail "$n: memory"
  age=$(value "$TMP/m0" "hrm_node_heartbeat_age_seconds{node=\"$n\"}")
  python3 -c 'import sys; sys.exit(0 if 0 <= float(sys.argv[1]) < 60 else 1)' "$age" || fail "$n: heartbeat age $age"
done
grep -q '^hrm_node_up{node="node1",rack="[^"]*"} 1$' "$TMP/m0" || fail "node1 is not up in the metrics"

# A job of 3 tasks that all succeed: the tasks-by-state gauges count them done.
ok=$("$HRM" submit --count 3 --cpus 1 -- true) || fail "submit"
expect_exit 0 timeout 120 "$HRM" wait "$ok"
scrape "$TMP/m1"
is "$TMP/m1" 'hrm_tasks{state="done"}' 3 || fail "done tasks: $(value "$TMP/m1" 'hrm_tasks{state="done"}')"
is "$TMP/m1" 'hrm_tasks{state="pending"}' 0 || fail "pending tasks"
is "$TMP/m1" 'hrm_jobs{queue="default",state="done"}' 1 || fail "done jobs"
is "$TMP/m1" 'hrm_task_wait_seconds_count{queue="default"}' 3 || fail "task waits"
is "$TMP/m1" 'hrm_task_wait_seconds_bucket{queue="default",le="+Inf"}' 3 || fail "wait +Inf bucket"
dec1=$(value "$TMP/m1" hrm_sched_decisions_total)
[ "$dec1" != none ] && [ "$dec1" -ge 3 ] || fail "decisions: $dec1"
sub1=$(value "$TMP/m1" 'hrm_messages_received_total{type="submit"}')
[ "$sub1" != none ] && [ "$sub1" -ge 1 ] || fail "submit messages: $sub1" # a slow answer is resent
commits1=$(value "$TMP/m1" hrm_store_commit_duration_seconds_count)
[ "$commits1" != none ] && [ "$commits1" -ge 1 ] || fail "store commits: $commits1"

# Running tasks hold their requests on their nodes (a GPU share counts as its fraction).
mkdir -p "$TMP/gate"
gated="while [ ! -e $TMP/gate/go ]; do sleep 0.05; done"
hold=$("$HRM" submit --cpus 3 --mem 1G -- sh -c "$gated") || fail "submit hold"
gpu=$("$HRM" submit --cpus 0.5 --gpus 0.5 -- sh -c "$gated") || fail "submit gpu"
until_ok 60 started "$hold" 1 || fail "the holding task never started"
until_ok 60 started "$gpu" 1 || fail "the GPU task never started"
node_of() { "$HRM" job "$1" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); j=d.get("job", d); print(j["tasks"][0]["node"])'; }
node=$(node_of "$hold"); gnode=$(node_of "$gpu")
cores=3; [ "$node" = "$gnode" ] && cores=3.5
wide=$("$HRM" submit --count 2 --cpus 4 -- true) || fail "submit wide"
scrape "$TMP/m2"
is "$TMP/m2" "hrm_node_cpu_allocated_cores{node=\"$node\"}" "$cores" || fail "$node: allocated cores $(value "$TMP/m2" "hrm_node_cpu_allocated_cores{node=\"$node\"}"), want $cores"
is "$TMP/m2" "hrm_node_memory_allocated_bytes{node=\"$node\"}" $((1 << 30)) || fail "$node: allocated memory"
is "$TMP/m2" "hrm_node_gpus_allocated{node=\"$gnode\"}" 0.5 || fail "$gnode: allocated GPU share"
is "$TMP/m2" 'hrm_tasks{state="running"}' 2 || fail "running tasks"
is "$TMP/m2" 'hrm_jobs{queue="default",state="running"}' 2 || fail "running jobs"
grep -q '^hrm_queue_pending_tasks{queue="default"} ' "$TMP/m2" || fail "no queue length"
touch "$TMP/gate/go"
expect_exit 0 timeout 120 "$HRM" wait "$hold"
expect_exit 0 timeout 120 "$HRM" wait "$gpu"
expect_exit 0 timeout 120 "$HRM" wait "$wide"

# Counters only grow.
scrape "$TMP/m3"
is "$TMP/m3" 'hrm_tasks{state="done"}' 7 || fail "done tasks at the end"
is "$TMP/m3" "hrm_node_cpu_allocated_cores{node=\"$node\"}" 0 || fail "$node still holds cores"
dec3=$(value "$TMP/m3" hrm_sched_decisions_total)
[ "$dec3" -ge $((dec1 + 4)) ] || fail "decisions did not grow: $dec1 -> $dec3"
[ "$(value "$TMP/m3" 'hrm_messages_received_total{type="submit"}')" -ge $((sub1 + 3)) ] || fail "submit messages did not grow"
[ "$(value "$TMP/m3" hrm_store_commit_duration_seconds_count)" -gt "$commits1" ] || fail "store commits did not grow"
for s in hrm_shared_commit_conflicts_total hrm_negotiator_moves_total hrm_sched_pass_duration_seconds_count; do
  [ "$(value "$TMP/m3" "$s")" != none ] || fail "no $s"
done
grep -q '^hrm_usage_samples_total{kind="task",result="accepted"} ' "$TMP/m3" || fail "no usage samples series"
echo ok

# Bad usage samples from an agent (an unknown task, a task running on another node or in another attempt, negative values, more than the node has) are logged, never handed to the policy, and do not stop the master; a flood of them is rate-limited in the log.
. "$(dirname "$0")/rtlib.sh"
keygen
# The raw agents below send no heartbeat: none may be declared down, however slow the machine.
start_master --log-level debug --node-timeout 300s
mkdir "$TMP/agentkeys"; cp "$S/keys/master.pub" "$TMP/agentkeys/"; cp "$S/keys/agent.key" "$TMP/agentkeys/client.key"
"$HRM" keygen --node rawB "$S/keys" >/dev/null || fail "keygen --node rawB"
mkdir "$TMP/keysB"; cp "$S/keys/master.pub" "$TMP/keysB/"; cp "$S/keys/agent-rawB.key" "$TMP/keysB/client.key"
reg() { printf '{"v":1,"type":"register","name":"%s","rack":"r0","cpu":4000,"mem":8589934592,"gpus":0,"running":[],"finished":[]}' "$1"; }
reg rawA >"$TMP/regA.json"; reg rawB >"$TMP/regB.json"

# rawA registers, then waits (its next frame is a FIFO) while a job is placed on it.
mkfifo "$TMP/usageA"
timeout 120 "$HRM" raw --keys "$TMP/agentkeys" --timeout 3 "$TMP/regA.json" "$TMP/usageA" >"$TMP/rawA.out" 2>&1 &
PIDS+=($!)
until_ok 60 grep -q "node rawA .* registered" "$TMP/master.log" || fail "rawA did not register"
job=$("$HRM" submit --cpus 1 -- true) || fail "submit"
on_rawA() { "$HRM" job "$job" --json | matches '"node": "rawA"'; }
until_ok 60 on_rawA || fail "the task was not placed on rawA"

sample() { # JOB ATTEMPT CPU_DELTA_US RSS: a task sample of task 0 over one second
  printf '{"job":%s,"task":0,"attempt":%s,"cpu_us":%s,"rss":%s,"rss_peak":%s,"interval_us":1000000,"cpu_delta_us":%s,"source":"cgroup"}' \
    "$1" "$2" "$(( $3 < 0 ? 0 : $3 ))" "$4" "$(( $4 < 0 ? 0 : $4 ))" "$3"
}
# From rawB: a sample of the task that runs on rawA.
printf '{"v":1,"type":"usage","samples":[%s]}' "$(sample "$job" 1 100000 1048576)" >"$TMP/usageB.json"
timeout 60 "$HRM" raw --keys "$TMP/keysB" --timeout 2 "$TMP/regB.json" "$TMP/usageB.json" >"$TMP/rawB.out" 2>&1 || true
grep -q "bad usage sample from node rawB: task sample 0: task $job.0 attempt 1 is not running on this node" "$TMP/master.log" || fail "a sample from another node was not refused"

# From rawA: one good sample, then each kind of bad one, and a node sample over the host.
good=$(sample "$job" 1 500000 1048576)
bad="$(sample "$job" 2 100000 1048576),$(sample 999999 1 100000 1048576),$(sample "$job" 1 -5 1048576),$(sample "$job" 1 10000000 1048576),$(sample "$job" 1 100000 17179869184)"
node='{"interval_us":1000000,"cpus":2,"busy_us":9000000,"tasks_cpu_us":0,"mem_total":8589934592,"mem_used":1048576,"tasks_mem":0}'
printf '{"v":1,"type":"usage","samples":[%s,%s],"node":%s}' "$good" "$bad" "$node" >"$TMP/usageA"
for why in "task sample 1: task $job.0 attempt 2 is not running on this node" \
           "task sample 2: no task 999999.0" \
           "task sample 3: 'cpu_delta_us' is negative" \
           "task sample 4: cpu 10000 milli-cores over 1000000 us is above the node's 4 cores" \
           "task sample 5: memory 17179869184 bytes is above the node's 8589934592" \
           "node sample: busy_us 9000000 over 1000000 us is above the host's 2 CPUs"; do
  until_ok 60 grep -qF "bad usage sample from node rawA: $why" "$TMP/master.log" || fail "not refused: $why"
done
# Only the good sample reached the policy (the node sample did not).
handed=$(grep -c "usage to the policy" "$TMP/master.log" || true)
[ "$handed" -eq 1 ] || fail "$handed samples handed to the policy, expected the 1 good one"
grep -q "usage to the policy: task_usage node 0 task 0 attempt 1: cpu 500 milli-cores, memory 1048576 bytes over 1000000 us" "$TMP/master.log" || fail "the good sample was not handed as 500 milli-cores"

# A flood: 200 bad samples in one message make a bounded number of lines.
before=$(grep -c "bad usage sample" "$TMP/master.log" || true)
python3 - "$TMP/flood.json" <<'P'
import json, sys
s = [{"job": 999999, "task": i, "attempt": 1, "cpu_us": 0, "rss": 0, "interval_us": 1000000, "cpu_delta_us": 0} for i in range(200)]
open(sys.argv[1], "w").write(json.dumps({"v": 1, "type": "usage", "samples": s}))
P
timeout 60 "$HRM" raw --keys "$TMP/keysB" --timeout 2 "$TMP/regB.json" "$TMP/flood.json" >"$TMP/rawC.out" 2>&1 || true
until_ok 60 grep -q "more this minute are dropped silently" "$TMP/master.log" || fail "no line saying complaints are being dropped"
after=$(grep -c "bad usage sample" "$TMP/master.log" || true)
[ $((after - before)) -lt 200 ] || fail "$((after - before)) lines for 200 bad samples: not rate-limited"
kill -0 "$MASTER" || fail "master died"
expect_exit 0 "$HRM" nodes
echo ok

# Fractional GPUs shown and sent: hrm job says "0.5 GPU, 4.0G", hrm job --json has gpus, gpu_share and gpu_mem in the job's description, and the agent's task_launch carries gpu_share (thousandths) and gpu_mem (bytes) beside gpus and gpu_mask.
. "$(dirname "$0")/gpushare-lib.sh"
keygen
# (A node timeout longer than the test: the raw agent sends no heartbeat until the end.)
start_master --policy hrm --node-timeout 300s
# A raw agent with one 16G GPU: it registers, then waits (its next frame is a FIFO) while a job
# is placed on it; the heartbeat it then sends gets no reply, so what it reads is the launch.
mkdir "$TMP/agentkeys"; cp "$S/keys/master.pub" "$TMP/agentkeys/"; cp "$S/keys/agent.key" "$TMP/agentkeys/client.key"
printf '{"v":1,"type":"register","name":"rawg","rack":"r0","cpu":4000,"mem":8589934592,"gpus":1,"gpu_mem":17179869184,"running":[],"finished":[]}' >"$TMP/reg.json"
mkfifo "$TMP/next"
timeout 120 "$HRM" raw --keys "$TMP/agentkeys" --timeout 30 "$TMP/reg.json" "$TMP/next" >"$TMP/raw.out" 2>&1 &
PIDS+=($!)
until_ok 60 grep -q "node rawg .* registered" "$TMP/master.log" || fail "rawg did not register"
job=$("$HRM" submit --gpus 0.5 --gpu-mem 4G --cpus 1 -- true) || fail "submit"
on_rawg() { "$HRM" job "$job" --json | matches '"node": "rawg"'; }
until_ok 60 on_rawg || fail "the task was not placed on rawg"
printf '{"v":1,"type":"heartbeat"}' >"$TMP/next"
until_ok 60 grep -q "task_launch" "$TMP/raw.out" || fail "rawg got no launch: $(cat "$TMP/raw.out")"
grep "task_launch" "$TMP/raw.out" | sed 's/^[^{]*//' | python3 -c '
import json, sys
m = json.load(sys.stdin)
launches = [x for x in m.get("msgs", [m]) if x.get("type") == "task_launch"]
l = launches[0]
assert (l["gpus"], l["gpu_share"], l["gpu_mem"], l["gpu_mask"]) == (1, 500, 4 << 30, 1), l
' || fail "the launch does not carry gpu_share 500 and gpu_mem 4G: $(cat "$TMP/raw.out")"
"$HRM" job "$job" >"$TMP/job.txt"
grep -qF "tasks[0]: 0.5 GPU, 4.0G per task" "$TMP/job.txt" || fail "hrm job does not show the GPU request: $(cat "$TMP/job.txt")"
"$HRM" job "$job" --json | python3 -c '
import json, sys
d = json.load(sys.stdin); j = d.get("job", d); g = j["spec"]["tasks"][0]
assert (g["gpus"], g["gpu_share"], g["gpu_mem"]) == (1, 500, 4 << 30), g
' || fail "hrm job --json lacks the GPU request's fields"
# A whole GPU reads as such (it waits: the half holds rawg's GPU, whose runs never end).
whole=$("$HRM" submit --gpus 1 -- true) || fail "submit whole"
"$HRM" job "$whole" | matches -F "tasks[0]: 1 GPU per task" || fail "hrm job does not show a whole GPU"

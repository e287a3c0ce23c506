# Virtual GPUs without NVML: `hrm agent --gpus N --gpu-mem SIZE` and `hrm up --gpus N --gpu-mem SIZE` declare them (default 16G, in --help), `hrm nodes --json` lists them, a bad --gpu-mem is refused naming the flag, and a job that sets the MPS limits or HRM_GPU_* itself is refused with the variable's name.
. "$(dirname "$0")/rtlib.sh"
"$HRM" agent --help >"$TMP/agent.help" 2>&1
grep -Eq -- "--gpu-mem SIZE .*default 16G" "$TMP/agent.help" || fail "hrm agent --help does not document --gpu-mem and its default"
"$HRM" up --help >"$TMP/up.help" 2>&1
grep -Eq -- "--gpu-mem SIZE .*default 16G" "$TMP/up.help" || fail "hrm up --help does not document --gpu-mem and its default"
expect_exit 2 "$HRM" up --nodes 1 --gpus 1 --gpu-mem lots --state "$TMP/bad" -- true
grep -q -- "--gpu-mem" "$TMP/err" || fail "a bad hrm up --gpu-mem is not named: $(cat "$TMP/err")"
expect_exit 2 "$HRM" agent --gpus 1 --gpu-mem 0 --state "$TMP/bad"
grep -q -- "--gpu-mem" "$TMP/err" || fail "a bad hrm agent --gpu-mem is not named: $(cat "$TMP/err")"

# hrm up: each agent declares 2 virtual GPUs of 8G; a GPU task sees GPU indices (no UUID) and its memory.
cat >"$TMP/up.sh" <<'X'
set -e
"$HRM" nodes --json >"$TMP/up-nodes.json"
id=$("$HRM" submit --gpus 1 -- sh -c 'echo "$CUDA_VISIBLE_DEVICES $HRM_GPU_SHARE $HRM_GPU_MEM"')
timeout 120 "$HRM" wait "$id"
"$HRM" logs "$id" >"$TMP/up-task.out"
X
TMP=$TMP expect_exit 0 timeout 300 "$HRM" up --nodes 1 --cpus 2 --gpus 2 --gpu-mem 8G --state "$TMP/up" -- bash "$TMP/up.sh"
python3 - "$TMP/up-nodes.json" <<'P' || fail "hrm up --gpu-mem 8G: $(cat "$TMP/up-nodes.json")"
import json, sys
n = json.load(open(sys.argv[1]))[0]
assert n["gpus"] == 2 and n["gpu_mem"] == 8 << 30, n
assert [(g["index"], g["uuid"], g["name"], g["mem"]) for g in n["gpu_list"]] == [(0, "", "virtual", 8 << 30), (1, "", "virtual", 8 << 30)], n["gpu_list"]
P
grep -Eqx "[01] 1 $((8 << 30))" "$TMP/up-task.out" || fail "a task on a virtual 8G GPU sees: $(cat "$TMP/up-task.out")"

# A job may not set its own GPU share: refused at submission (the master) or at launch (the
# agent's own check), naming the variable either way.
keygen
start_master
start_agent n1 --cpus 2 --mem 2G --gpus 1 --gpu-mem 4G
until_ok 60 nodes_up 1 || fail "n1 did not register"
for v in CUDA_MPS_ACTIVE_THREAD_PERCENTAGE CUDA_MPS_PINNED_DEVICE_MEM_LIMIT HRM_GPU_SHARE HRM_GPU_MEM; do
  if id=$("$HRM" submit --gpus 1 --env "$v=1" -- true 2>"$TMP/err"); then
    expect_exit 127 timeout 120 "$HRM" wait "$id" # could not start
    "$HRM" job "$id" >"$TMP/job.txt"
    grep -q "$v" "$TMP/job.txt" || fail "a task setting $v did not fail naming it: $(cat "$TMP/job.txt")"
  else
    grep -q "$v" "$TMP/err" || fail "a job setting $v was refused without naming it: $(cat "$TMP/err")"
  fi
done
# The GPU task without them runs.
expect_exit 0 timeout 120 "$HRM" submit --wait --gpus 1 -- true

# GPU discovery through NVML, with the stand-in libnvidia-ml.so.1 the test build makes: the agent registers each GPU's UUID, name, memory and NUMA domain, `hrm nodes` (and --json, and `hrm agent --check`) shows them, and a GPU task sees its GPUs by UUID in CUDA_VISIBLE_DEVICES, with HRM_GPU_SHARE and HRM_GPU_MEM and no MPS limit for whole GPUs.
. "$(dirname "$0")/rtlib.sh"
stub="$(dirname "$HRM")/nvml-stub"
[ -e "$stub/libnvidia-ml.so.1" ] || fail "no NVML stand-in in $stub (make test-build builds it)"
# The stand-in's GPUs sit on the host's first NUMA node (its OS number, which need not be 0).
node=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | head -1); node=${node##*node}; node=${node:-0}
u0=GPU-5ca1ab1e-0000-4000-8000-00000000000a
u1=GPU-5ca1ab1e-0000-4000-8000-00000000000b
gpus="$u0,Stub GPU 40GB,40960,$node;$u1,Stub GPU 40GB,40960,$node"

HRM_NVML_STUB=$gpus LD_LIBRARY_PATH=$stub "$HRM" agent --check --json --state "$TMP/none" >"$TMP/check.json" 2>"$TMP/err" \
  || fail "hrm agent --check with NVML: $(cat "$TMP/err")"
python3 - "$TMP/check.json" "$u0" "$u1" <<'P' || fail "hrm agent --check --json does not list NVML's GPUs: $(cat "$TMP/check.json")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["nvml_gpus"] == 2 and c["gpu_mem"] == 40960 << 20, c
assert [g["uuid"] for g in c["gpu_list"]] == sys.argv[2:4], c["gpu_list"]
assert all(g["name"] == "Stub GPU 40GB" and g["numa"] == 0 for g in c["gpu_list"]), c["gpu_list"]
P

keygen
start_master
HRM_NVML_STUB=$gpus LD_LIBRARY_PATH=$stub start_agent n1 --cpus 2 --mem 2G
until_ok 60 nodes_up 1 || fail "n1 did not register"
"$HRM" nodes --json >"$TMP/nodes.json" || fail "hrm nodes --json"
python3 - "$TMP/nodes.json" "$u0" "$u1" <<'P' || fail "hrm nodes --json does not show n1's NVML GPUs: $(cat "$TMP/nodes.json")"
import json, sys
n = json.load(open(sys.argv[1]))[0]
assert n["gpus"] == 2 and n["gpu_mem"] == 40960 << 20, n
want = [{"index": i, "uuid": u, "name": "Stub GPU 40GB", "mem": 40960 << 20, "numa": 0}
        for i, u in enumerate(sys.argv[2:4])]
assert n["gpu_list"] == want, n["gpu_list"]
P
"$HRM" nodes >"$TMP/nodes.txt" || fail "hrm nodes"
grep -q "$u0" "$TMP/nodes.txt" && grep -q "$u1" "$TMP/nodes.txt" || fail "hrm nodes does not list the GPUs' UUIDs: $(cat "$TMP/nodes.txt")"

# What a GPU task sees: its GPU by UUID, its share and memory; no MPS limit for a whole GPU.
envtask='for v in CUDA_VISIBLE_DEVICES HRM_GPU_SHARE HRM_GPU_MEM CUDA_MPS_ACTIVE_THREAD_PERCENTAGE CUDA_MPS_PINNED_DEVICE_MEM_LIMIT; do eval "echo $v=\${$v-unset}"; done'
one=$("$HRM" submit --gpus 1 --cpus 1 -- sh -c "$envtask") || fail "submit one"
expect_exit 0 timeout 120 "$HRM" wait "$one"
"$HRM" logs "$one" >"$TMP/one.env" || fail "logs one"
grep -Eqx "CUDA_VISIBLE_DEVICES=($u0|$u1)" "$TMP/one.env" || fail "a one-GPU task's devices are not a UUID: $(cat "$TMP/one.env")"
grep -qx "HRM_GPU_SHARE=1" "$TMP/one.env" || fail "HRM_GPU_SHARE of a whole GPU: $(cat "$TMP/one.env")"
grep -qx "HRM_GPU_MEM=$((40960 << 20))" "$TMP/one.env" || fail "HRM_GPU_MEM of a whole 40G GPU: $(cat "$TMP/one.env")"
grep -qx "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=unset" "$TMP/one.env" && grep -qx "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=unset" "$TMP/one.env" \
  || fail "a whole GPU got MPS limits: $(cat "$TMP/one.env")"
two=$("$HRM" submit --gpus 2 --cpus 1 -- sh -c "$envtask") || fail "submit two"
expect_exit 0 timeout 120 "$HRM" wait "$two"
"$HRM" logs "$two" >"$TMP/two.env" || fail "logs two"
grep -qx "CUDA_VISIBLE_DEVICES=$u0,$u1" "$TMP/two.env" || fail "a two-GPU task's devices: $(cat "$TMP/two.env")"
grep -qx "HRM_GPU_MEM=$((2 * (40960 << 20)))" "$TMP/two.env" || fail "HRM_GPU_MEM of two GPUs: $(cat "$TMP/two.env")"

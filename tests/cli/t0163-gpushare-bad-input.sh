# Fractional GPUs, bad input: a fraction of more than one GPU, shares <= 0 or too fine, GPU memory without GPUs, GPU memory per GPU above every node's GPUs, and job env setting what the agent sets for GPUs (CUDA_MPS_*, CUDA_VISIBLE_DEVICES, HRM_GPU_*) are refused at submission with the field named, and no job is made.
. "$(dirname "$0")/gpushare-lib.sh"
gpu_cluster hrm 2
refused() { # NEEDLE ARGS...: hrm submit ARGS exits 2 naming NEEDLE
  local needle=$1; shift
  expect_exit 2 "$HRM" submit "$@"
  grep -qF -- "$needle" "$TMP/err" || fail "'hrm submit $*' said '$(cat "$TMP/err")', not naming $needle"
}
refused "tasks[0].gpus" --gpus 1.5 -- true
refused "tasks[0].gpus" --gpus -0.5 -- true
refused "tasks[0].gpus" --gpus 0.0001 -- true
refused "tasks[0].gpus" --gpus 33 -- true
refused "--gpus" --gpus half -- true
refused "tasks[0].gpu_mem" --gpu-mem 4G -- true
refused "tasks[0].gpu_mem" --gpus 0 --gpu-mem 4G -- true
refused "tasks[0].gpu_mem" --gpus 0.5 --gpu-mem lots -- true
# Above the GPUs' memory (16G each): checked by the master against the registered GPUs.
refused "tasks[0].gpu_mem" --gpus 0.5 --gpu-mem 20G -- true
refused "tasks[0].gpu_mem" --gpus 2 --gpu-mem 40G -- true
refused "tasks[0].env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE" --gpus 0.5 --env CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100 -- true
refused "tasks[0].env.CUDA_MPS_PINNED_DEVICE_MEM_LIMIT" --gpus 0.5 --env CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=1G -- true
refused "tasks[0].env.CUDA_VISIBLE_DEVICES" --gpus 1 --env CUDA_VISIBLE_DEVICES=1 -- true
refused "tasks[0].env.HRM_GPU_SHARE" --gpus 0.5 --env HRM_GPU_SHARE=1000 -- true
# A job file: the bad group is named, and its good group is not submitted either.
cat >"$TMP/job.json" <<'J'
{"name": "half-bad", "tasks": [{"cmd": "true", "gpus": 0.5, "gpu_mem": "4G"},
                               {"cmd": "true", "gpus": 1.25}]}
J
refused "tasks[1].gpus" "$TMP/job.json"
cat >"$TMP/big.json" <<'J'
{"name": "too-big", "tasks": [{"cmd": "true", "gpus": 0.5},
                              {"cmd": "true", "gpus": 0.5, "gpu_mem": "17G"}]}
J
refused "tasks[1].gpu_mem" "$TMP/big.json"
"$HRM" jobs --json --all | python3 -c 'import json, sys; d = json.load(sys.stdin); d = d.get("jobs", d) if isinstance(d, dict) else d; sys.exit(0 if len(d) == 0 else "jobs: %r" % d)' \
  || fail "a refused submission left a job"
# What fits is taken: 15G per GPU over two GPUs, and a whole GPU's 16G.
ok=$("$HRM" submit --gpus 2 --gpu-mem 30G -- true) || fail "a job within the GPUs' memory was refused"
expect_exit 0 timeout 120 "$HRM" wait "$ok"
ok=$("$HRM" submit --gpus 0.999 --gpu-mem 16G -- true) || fail "a 0.999 share with 16G was refused"
expect_exit 0 timeout 120 "$HRM" wait "$ok"

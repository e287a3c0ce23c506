# Helpers of the fractional-GPU tests (t0160-t0164): GPU tasks that say what they were given and hold until released.
. "$(dirname "$0")/rtlib.sh"
mkdir -p "$TMP/dev"
# hold_task NAME: shell text of a task that writes its CUDA_VISIBLE_DEVICES to $TMP/dev/JOB-TASK,
# then holds until the test creates $TMP/go-NAME
hold_task() {
  echo "echo \"\${CUDA_VISIBLE_DEVICES-unset}\" > $TMP/dev/\$HRM_JOB_ID-\$HRM_TASK_ID.tmp; mv $TMP/dev/\$HRM_JOB_ID-\$HRM_TASK_ID.tmp $TMP/dev/\$HRM_JOB_ID-\$HRM_TASK_ID; while [ ! -e $TMP/go-$1 ]; do sleep 0.05; done"
}
dev() { cat "$TMP/dev/$1-$2"; }
began() { test -e "$TMP/dev/$1-$2"; }
# gpu_cluster POLICY GPUS: a master with POLICY and one agent n1 with GPUS virtual GPUs of 16G
gpu_cluster() {
  keygen
  start_master --policy "$1"
  start_agent n1 --cpus 4 --mem 4G --gpus "$2" --gpu-mem 16G
  until_ok 60 nodes_up 1 || fail "n1 did not register"
}
# starts_after WAITER FIRST: every task of job WAITER started once a task of job FIRST had ended,
# and every task of both jobs ran once (attempt 1: none was stopped and placed again)
starts_after() {
  "$HRM" job "$1" --json >"$TMP/w.json"; "$HRM" job "$2" --json >"$TMP/f.json"
  python3 - "$TMP/w.json" "$TMP/f.json" <<'P' || fail "job $1 started before a task of job $2 gave its GPU share back"
import json, sys
tasks = lambda f: (lambda d: d.get("job", d))(json.load(open(f)))["tasks"]
w, f = tasks(sys.argv[1]), tasks(sys.argv[2])
assert all(t["attempt"] == 1 for t in w + f), (w, f)
assert min(t["start_us"] for t in w) >= min(t["end_us"] for t in f), (w, f)
P
}
# node_shares: the GPU shares n1 holds, as "500 500"
node_shares() { "$HRM" nodes --json | python3 -c 'import json, sys; print(" ".join(str(s) for s in json.load(sys.stdin)[0].get("gpu_shares", [])))'; }
shares_are() { [ "$(node_shares)" = "$1" ]; }

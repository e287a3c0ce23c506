# A master restart keeps GPU runs where they are: tasks holding whole GPUs and shares of one GPU are neither killed nor run again (the agent's registration brings back each run's GPUs), and the GPUs they hold stay held.
. "$(dirname "$0")/rtlib.sh"
keygen
MFLAGS=(--node-timeout 60s --reconcile 120s --policy hrm)
start_master "${MFLAGS[@]}"
start_agent n1 --cpus 4 --mem 4G --gpus 2 --gpu-mem 16G
until_ok 60 nodes_up 1 || fail "n1 did not register"
mkdir -p "$TMP/runs"
held() { # NAME: records each run, then holds until $TMP/go exists
  echo "echo \$HRM_TASK_ID >> $TMP/runs/$1; while [ ! -e $TMP/go ]; do sleep 0.05; done"
}
attempts() { # JOB: the attempts of its tasks, space-separated
  "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d); print(" ".join(str(t["attempt"]) for t in j["tasks"]))'
}
shares() { "$HRM" nodes --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0].get("gpu_shares"))'; }
whole=$("$HRM" submit --gpus 1 --cpus 1 -- sh -c "$(held whole)") || fail "submit whole"
# The whole GPU first, so the two halves must share the other GPU.
until_ok 60 test -s "$TMP/runs/whole" || fail "the whole-GPU task did not start"
half=$("$HRM" submit --count 2 --gpus 0.5 --gpu-mem 4G --cpus 1 -- sh -c "$(held half)") || fail "submit half"
until_ok 60 sh -c "[ \$(cat $TMP/runs/whole $TMP/runs/half 2>/dev/null | wc -l) -eq 3 ]" || fail "the three GPU tasks did not all start"
before=$(shares)
[ "$before" = "[1000, 1000]" ] || fail "GPU shares held before the restart: $before, expected [1000, 1000]"

kill -KILL "$MASTER"
wait "$MASTER" 2>/dev/null || true
start_master "${MFLAGS[@]}"
until_ok 60 nodes_up 1 || fail "n1 did not come back"
# A CPU job submitted after the restart makes the master rebuild its scheduler with the runs.
cpu=$("$HRM" submit --cpus 1 -- true) || fail "submit cpu"
expect_exit 0 timeout 120 "$HRM" wait "$cpu"
[ "$(attempts "$whole")" = "1" ] || fail "the whole-GPU task was run again: attempts $(attempts "$whole")"
[ "$(attempts "$half")" = "1 1" ] || fail "a fractional task was run again: attempts $(attempts "$half")"
[ "$(shares)" = "$before" ] || fail "GPU shares held after the restart: $(shares), before: $before"
[ "$(wc -l < "$TMP/runs/whole")" -eq 1 ] && [ "$(wc -l < "$TMP/runs/half")" -eq 2 ] \
  || fail "a GPU task ran twice: $(cat "$TMP"/runs/*)"
touch "$TMP/go"
expect_exit 0 timeout 120 "$HRM" wait "$whole"
expect_exit 0 timeout 120 "$HRM" wait "$half"
echo ok

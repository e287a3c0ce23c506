# Every distributed policy the daemons run, under chaos: an agent and then the master killed with SIGKILL mid-load; every task ends done, and only tasks whose run died with the agent ran twice.
# The killed agent's node comes back under a new name (n4), so a second run on it is told apart
# from a run that died with n2.
. "$(dirname "$0")/rtlib.sh"
# Node timeout and reconcile window leave room for a loaded host: a live agent whose heartbeat
# is late by more than the timeout is rightly taken as lost and its tasks run again, which the
# exactly-once checks below would then count.
keygen
for pol in dhrm dhrm-batch sparrow d-random; do
  rm -rf "$S/hrm.db"* "$S/endpoint" "$TMP/runs"; mkdir -p "$TMP/runs"
  start_master --policy "$pol" --param instances=3 --node-timeout 6s --reconcile 8s
  for n in n1 n2 n3; do start_agent "$n" --cpus 2; done
  until_ok 60 nodes_up 3 || fail "$pol: nodes did not register"
  ids=()
  for i in $(seq 15); do
    ids+=("$("$HRM" submit --count 40 --cpus 500m -- sh -c "echo \$HRM_NODE >> $TMP/runs/\$HRM_JOB_ID-\$HRM_TASK_ID; sleep 0.0\$((\$HRM_TASK_ID % 4))")") \
      || fail "$pol: submit $i"
  done
  until_ok 60 sh -c "ls $TMP/runs | wc -l | awk '\$1 >= 100 {ok=1} END {exit !ok}'" || fail "$pol: nothing ran"
  kill -KILL "$AGENT_n2"
  start_agent n4 --cpus 2
  until_ok 60 sh -c "'$HRM' nodes | grep -q 'n4 .*up'" || fail "$pol: n4 did not register"
  kill -KILL "$MASTER"
  wait "$MASTER" 2>/dev/null || true
  start_master --policy "$pol" --param instances=3 --node-timeout 6s --reconcile 8s
  for id in "${ids[@]}"; do expect_exit 0 timeout 120 "$HRM" wait "$id"; done
  [ "$(ls "$TMP/runs" | wc -l)" -eq 600 ] || fail "$pol: $(ls "$TMP/runs" | wc -l) of 600 tasks ran"
  for f in "$TMP"/runs/*; do
    runs=$(wc -l <"$f")
    # A second run is allowed only when the first died with n2 (SIGKILL takes its tasks along)
    # and the second ran elsewhere.
    [ "$runs" -eq 1 ] || { [ "$runs" -eq 2 ] && [ "$(head -1 "$f")" = n2 ] && [ "$(tail -1 "$f")" != n2 ]; } \
      || fail "$pol: task $(basename "$f") ran $runs times, on $(tr '\n' ' ' <"$f")"
  done
  "$HRM" jobs --summary >"$TMP/sum"
  grep -q "tasks     600: 600 done" "$TMP/sum" || { cat "$TMP/sum" >&2; fail "$pol: summary"; }
  rt_cleanup
  PIDS=()
done

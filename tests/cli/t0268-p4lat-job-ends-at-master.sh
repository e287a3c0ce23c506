# A job whose instance runs in an hrm sched process ends with its last task_end at the master, as on the central path, without waiting for that process's job_end: it is done while the process is stopped, and the late job_end changes nothing.
. "$(dirname "$0")/rtlib.sh"
keygen
# The node timeout outlasts the test, so the stopped scheduler process is never taken as gone
# (that would hand its jobs out again and blur what is tested).
start_master --policy dhrm-batch --local-instances 0 --node-timeout 300s
start_agent n1 --cpus 2
"$HRM" sched --state "$S" --name s1 --instances 1 --log-level info >>"$TMP/s1.log" 2>&1 &
SCHED=$!; PIDS+=("$SCHED")
until_ok 60 nodes_up 1 || fail "the agent did not register"
until_ok 60 grep -q "registered with the master" "$TMP/s1.log" || fail "s1 did not register"

# state_is JOB STATE: the job's own state (its tasks have states too)
state_is() {
  "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
sys.exit(0 if j["state"] == sys.argv[1] else 1)' "$2"
}
finished_events() { "$HRM" events --json | grep '"kind":"job_finished"' | grep -c "\"job\":$1[,}]" || true; }
mkdir -p "$TMP/runs"
j=$("$HRM" submit --count 2 --cpus 1 -- sh -c "echo x >> $TMP/runs/a-\$HRM_TASK_ID; while [ ! -e $TMP/go ]; do sleep 0.05; done") \
  || fail "submit"
until_ok 60 started "$j" 2 || fail "the job's two tasks did not start"
kill -STOP "$SCHED"
touch "$TMP/go"
# Both tasks end while the process that placed them cannot answer: the master ends the job.
until_ok 60 state_is "$j" done || { kill -CONT "$SCHED"; fail "the job did not end while its scheduler process was stopped"; }
kill -CONT "$SCHED"
ran_once a 2 "the job"
# The process's job_end, late, finds the job ended: one job_finished, the job still done.
k=$("$HRM" submit --count 3 --cpus 1 -- true) || fail "submit after the stop"
expect_exit 0 timeout 120 "$HRM" wait "$k"
state_is "$j" done || fail "the late job_end changed the job"
[ "$(finished_events "$j")" -eq 1 ] || fail "job $j finished $(finished_events "$j") times"
[ "$(finished_events "$k")" -eq 1 ] || fail "job $k finished $(finished_events "$k") times"

# A job with a failed task ends failed the same way.
f=$("$HRM" submit --count 2 --cpus 1 -- sh -c 'exit $((HRM_TASK_ID + 3))') || fail "submit f"
until_ok 120 state_is "$f" failed || fail "the job with a failed task did not end failed"
[ "$(finished_events "$f")" -eq 1 ] || fail "job $f finished $(finished_events "$f") times"

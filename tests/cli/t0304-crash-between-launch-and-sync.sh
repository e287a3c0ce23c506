# A master that dies (SIGKILL) after a turn's launch has left and before the turn's commit is
# synced and acknowledged: the restarted master knows the job (the commit was written before the
# launch left), the task runs exactly once (kept where it runs, or placed again if the launch
# never reached the agent), and a retry with the submission key gives the same job.
. "$(dirname "$0")/rtlib.sh"
keygen
# Test-only hook: the master dies right after sending a turn's launches, before the sync.
HRM_TEST_CRASH_AFTER_COMMIT=launch start_master --reconcile 120s
start_agent n1 --cpus 2 --mem 1G --no-cgroup
until_ok 60 nodes_up 1 || fail "agent did not register"
mkdir -p "$TMP/runs"
# The task records its run, then holds until the test lets it end, so that the restarted
# master finds it running (if its launch arrived) and must keep it, not start it again.
task="echo \$\$ >> '$TMP/runs/r-0'; while [ ! -e '$TMP/go' ]; do sleep 0.05; done"

expect_exit 3 "$HRM" submit --timeout 10 -- sh -c "$task"
key=$(sed -n 's/.*--key \([0-9a-f]*\).*/\1/p' "$TMP/err")
[ "${#key}" -eq 32 ] || fail "no 128-bit key in: $(cat "$TMP/err")"
until_ok 60 sh -c "! kill -0 $MASTER" || fail "the master did not die after the launch"
grep -q "dying after a launch left, before the commit's sync" "$TMP/master.log" ||
  fail "the hook did not fire"

start_master --reconcile 120s
id=$("$HRM" submit --key "$key" -- sh -c "$task") || fail "retry with --key"
[ "$id" = 1 ] || fail "the retry got job $id, not job 1: the committed job was lost"
njobs=$("$HRM" jobs --all --json | python3 -c 'import json, sys
d = json.load(sys.stdin); print(len(d["jobs"] if isinstance(d, dict) else d))')
[ "$njobs" = 1 ] || fail "$njobs jobs after the crash and the retry, not 1"
until_ok 60 test -s "$TMP/runs/r-0" || fail "the task never ran"
until_ok 60 started 1 1 || fail "job 1's task is not running after the restart"
touch "$TMP/go"
expect_exit 0 timeout 120 "$HRM" wait 1
ran_once r 1 "job 1"
echo ok

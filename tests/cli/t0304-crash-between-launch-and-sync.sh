# A master that dies (SIGKILL) after a turn's launch has left and before the turn's commit is
# synced and acknowledged: the restarted master knows the job (the commit was written before the
# launch left), the task runs exactly once (kept where it runs, or placed again if the launch
# never reached the agent), and a retry with the submission key gives the same job.  Job ids
# stay dense across a master's restart on the same host boot; after a host restart (its boot id
# changed), the ids one unsynced commit may have held (1,024, docs/runtime.md) are skipped.
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
id=$("$HRM" submit -- true) || fail "a submission after the restart"
[ "$id" = 2 ] || fail "the first job after a restart on the same host boot got id $id, not 2"

# A host restart, as the state folder sees it: another boot id recorded by the last master.
kill -TERM "$MASTER"; until_ok 60 sh -c "! kill -0 $MASTER" || fail "master did not stop"
python3 - "$S/hrm.db" <<'P' || fail "cannot edit the store"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("UPDATE meta SET value = value + 2 WHERE key = 'host_boot'").rowcount
assert n == 1, "no host_boot recorded"
db.commit()
P
start_master
grep -q "the host restarted since the last master: job ids 3 to 1026 skipped" "$TMP/master.log" ||
  fail "the master did not say it skipped ids after a host restart"
id=$("$HRM" submit -- true) || fail "a submission after the host restart"
[ "$id" = 1027 ] || fail "the first job after a host restart got id $id, not 3 + 1024"
echo ok

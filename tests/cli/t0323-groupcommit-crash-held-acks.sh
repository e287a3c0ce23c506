# A master that dies (SIGKILL) after it wrote the commit of an agent's end report and held the
# report's acknowledgement for a later turn's sync (the group commit): the agent, never told, keeps
# the end and reports it again when it registers with the restarted master; the end is recorded
# once, the task ran once, and the job is done, not run again.
. "$(dirname "$0")/rtlib.sh"
keygen
# Test-only hook: the master dies at the end of a turn that holds acknowledgements of ends.
HRM_TEST_CRASH_AFTER_COMMIT=held start_master --group-commit 600s --reconcile 120s
start_agent n1 --cpus 1 --mem 1G --no-cgroup
until_ok 60 nodes_up 1 || fail "agent did not register"
mkdir -p "$TMP/runs"
id=$("$HRM" submit -- sh -c "echo x >> $TMP/runs/h-0") || fail "submit"
[ "$id" = 1 ] || fail "job $id, not 1"
until_ok 60 sh -c "! kill -0 $MASTER" || fail "the master did not die with an acknowledgement held"
grep -q "test: dying with 1 end acknowledgement held for a later sync" "$TMP/master.log" ||
  fail "the hook did not fire as expected"

start_master --reconcile 120s
until_ok 60 nodes_up 1 || fail "the agent did not come back"
expect_exit 0 timeout 120 "$HRM" wait 1
ran_once h 1 "job 1"
"$HRM" job 1 --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
assert j["state"] == "done", j["state"]
assert [t["attempt"] for t in j["tasks"]] == [1], j["tasks"]' ||
  fail "job 1 is not done at its first attempt after the restart"
njobs=$("$HRM" jobs --all --json | python3 -c 'import json, sys
d = json.load(sys.stdin); print(len(d["jobs"] if isinstance(d, dict) else d))')
[ "$njobs" = 1 ] || fail "$njobs jobs, not 1"
echo ok

# Under hrm up, a submission whose master dies between commit and reply is answered by the restarted master with the same job; a master that keeps dying is restarted a bounded number of times, then hrm up stops the cluster and says why.
. "$(dirname "$0")/rtlib.sh"
U="$TMP/up"
export HRM_STATE="$U"
# Test-only hook, inherited by every master hrm up starts: each new job kills its master.
HRM_TEST_CRASH_AFTER_COMMIT=submit "$HRM" up --nodes 1 --cpus 1 --state "$U" --log-level info \
  >"$TMP/up.out" 2>"$TMP/up.err" &
up_pid=$!; PIDS+=("$up_pid")
until_ok 60 nodes_up 1 || { cat "$TMP/up.err" >&2; fail "hrm up did not start"; }
deaths() { grep -c "dying after the commit" "$U/logs/master.log" || true; }
count_jobs() {
  "$HRM" jobs --all --json | python3 -c 'import json, sys
d = json.load(sys.stdin); jobs = d["jobs"] if isinstance(d, dict) else d
print(len(jobs))'
}

# The client resends with its key until the restarted master answers: one job, its id.
id=$("$HRM" submit --timeout 120 -- true) || fail "submit across a master restart: $(cat "$TMP/up.err")"
[ "$id" = 1 ] || fail "got job '$id'"
[ "$(deaths)" = 1 ] || fail "the master did not die after the commit ($(deaths) deaths)"
until_ok 60 nodes_up 1 || fail "the agent did not come back"
[ "$(count_jobs)" = 1 ] || fail "$(count_jobs) jobs for one submission"
grep -q "restarting the master" "$TMP/up.err" || fail "no restart line: $(cat "$TMP/up.err")"

# Four more deaths in a row are restarted; the sixth is one too many.
for n in 2 3 4 5; do
  id=$("$HRM" submit --timeout 120 -- true) || fail "submit $n: $(cat "$TMP/up.err")"
  [ "$id" = "$n" ] || fail "submission $n got job '$id'"
  until_ok 60 nodes_up 1 || fail "the agent did not come back after death $n"
done
grep -q "restart 5 of at most 5" "$TMP/up.err" || fail "restarts: $(cat "$TMP/up.err")"
set +e; "$HRM" submit --timeout 15 -- true >"$TMP/last.out" 2>"$TMP/last.err"; rc=$?; set -e
# Committed, then no master to answer: the outcome is unknown to the client.
[ "$rc" -eq 3 ] || fail "the last submission exited $rc: $(cat "$TMP/last.err")"
set +e; timeout 60 tail --pid="$up_pid" -f /dev/null; wait "$up_pid"; up_rc=$?; set -e
[ "$up_rc" -eq 1 ] || fail "hrm up exited $up_rc, expected 1: $(cat "$TMP/up.err")"
grep -q "the master died 6 times in a row; giving up" "$TMP/up.err" || fail "$(cat "$TMP/up.err")"
[ "$(deaths)" = 6 ] || fail "$(deaths) deaths"

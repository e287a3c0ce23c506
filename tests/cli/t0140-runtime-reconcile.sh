# Each branch of a master restart's reconciliation, forced on purpose: a run that finished while the master was down is recorded; a run still going is kept; a run the table no longer wants is killed; a launch recorded but never delivered is placed again.
. "$(dirname "$0")/rtlib.sh"
keygen
# --reconcile 120s: the restarted master waits for n1, which always comes back, so the branches
# are decided by its registration alone.
MFLAGS=(--node-timeout 60s --reconcile 120s)
start_master "${MFLAGS[@]}"
start_agent n1 --cpus 4 --mem 4G
until_ok 60 nodes_up 1 || fail "n1 did not register"
mkdir -p "$TMP/runs"
# A task that records its run and pid, then holds until the test creates $TMP/go-NAME.
held() { # NAME
  echo "echo \$\$ >> $TMP/runs/$1; while [ ! -e $TMP/go-$1 ]; do sleep 0.05; done; touch $TMP/end-$1"
}
task_field() { # JOB FIELD: the field of the job's task 0
  "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d); print(j["tasks"][0][sys.argv[1]])' "$2"
}
job_state() { "$HRM" job "$1" --json | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d.get("job", d)["state"])'; }
gone() { ! kill -0 "$1" 2>/dev/null; }
pid_of() { head -1 "$TMP/runs/$1"; }

fin=$("$HRM" submit --cpus 1 -- sh -c "$(held fin)") || fail "submit fin"
run=$("$HRM" submit --cpus 1 -- sh -c "$(held run)") || fail "submit run"
unw=$("$HRM" submit --cpus 1 -- sh -c "$(held unw)") || fail "submit unwanted"
for id in "$fin" "$run" "$unw"; do until_ok 60 started "$id" 1 || fail "job $id never started"; done
for n in fin run unw; do until_ok 60 test -s "$TMP/runs/$n" || fail "$n never ran"; done
# Three of the four cores are taken: a two-core task waits, never launched.
und=$("$HRM" submit --cpus 2 -- sh -c "echo \$\$ >> $TMP/runs/und") || fail "submit undelivered"
until_ok 60 sh -c "'$HRM' job $und --json | grep -q '\"pending\": 1'" || fail "the two-core task did not wait"

kill -KILL "$MASTER"
wait "$MASTER" 2>/dev/null || true

# Finished while the master was down: its process ends and the agent reaps it (the pid is gone).
touch "$TMP/go-fin"
until_ok 60 gone "$(pid_of fin)" || fail "fin did not end"

# Edit the table as a master that died at the wrong moment would have left it:
#  - "unw" recorded done: the node's run of it is one nobody wants;
#  - "und" recorded launched on n1 (attempt 1), though n1 never heard of it.
python3 - "$S/hrm.db" "$unw" "$und" <<'P' || fail "cannot edit the store"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
unw, und = int(sys.argv[2]), int(sys.argv[3])
n = db.execute("UPDATE tasks SET state = 2, exit = 0, end_us = start_us + 1 WHERE job = ? AND idx = 0", (unw,)).rowcount
assert n == 1, "no task row for the unwanted run"
assert db.execute("SELECT COUNT(*) FROM tasks WHERE job = ?", (und,)).fetchone()[0] == 0
db.execute("INSERT INTO tasks(job, idx, state, attempt, node, exit, signal, oom, start_us, end_us)"
           " VALUES(?, 0, 1, 1, 'n1', 0, 0, 0, 1, -1)", (und,))
db.execute("UPDATE jobs SET state = 1 WHERE id = ?", (und,))
db.commit()
db.close()
P

start_master "${MFLAGS[@]}"
until_ok 120 grep -q "reconciliation over" "$TMP/master.log" || fail "reconciliation never ended"
# n1's registration: exactly one run it did not report (und) was placed again.
grep -q "node n1 .*registered.*; 1 lost" "$TMP/master.log" || fail "n1's registration did not requeue exactly one run"

# The unwanted run is killed; the task stays done and does not run again.
until_ok 60 gone "$(pid_of unw)" || fail "the run nobody wants was not killed"
[ ! -e "$TMP/end-unw" ] || fail "the unwanted run ran to its end"
# The run still going was kept: same process, not killed, not placed again.
kill -0 "$(pid_of run)" || fail "the run still going was killed"
[ "$(task_field "$run" attempt)" = 1 ] || fail "the run still going was placed again"
touch "$TMP/go-run"
expect_exit 0 timeout 120 "$HRM" wait "$run"
# The run that finished while the master was down is recorded from n1's report: done, once.
expect_exit 0 timeout 120 "$HRM" wait "$fin"
[ "$(task_field "$fin" attempt)" = 1 ] || fail "the finished run was placed again"
# The undelivered launch is placed again (attempt 2) and runs once.
expect_exit 0 timeout 120 "$HRM" wait "$und"
[ "$(task_field "$und" attempt)" = 2 ] || fail "the undelivered launch was not placed again as attempt 2"
expect_exit 0 timeout 120 "$HRM" wait "$unw"
[ "$(job_state "$unw")" = done ] || fail "the job of the unwanted run is not done"
for n in fin run unw und; do
  [ "$(wc -l <"$TMP/runs/$n")" -eq 1 ] || fail "$n ran $(wc -l <"$TMP/runs/$n") times"
done

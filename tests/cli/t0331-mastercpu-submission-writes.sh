# A submission writes its job row and its event, not a meta row besides (job rows are never
# removed, so a restarted master takes the next id after the highest row): sequential
# submissions, each a turn of its own, cost two statements each in the master's stop line.
# The ids and the event log's numbers go on after a stop and after a SIGKILL, never given twice,
# nor the id of a job whose row could not be read back.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
n=20
# No node is up: every job is accepted and waits, so its submission is all its turn writes.
for i in $(seq $n); do
  id=$("$HRM" submit -- true) || fail "submit $i"
  [ "$id" = "$i" ] || fail "job $i got id $id"
done
kill -TERM "$MASTER"; until_ok 60 sh -c "! kill -0 $MASTER" || fail "master did not stop"
line=$(grep "master stopped" "$TMP/master.log" | tail -1)
statements=$(sed -n 's/.* rows in \([0-9]*\) statements.*/\1/p' <<<"$line")
[ -n "$statements" ] || fail "no statement count in the stop line: $line"
# A job row and an event per submission; the master's start writes a few meta rows.
[ "$statements" -le $((2 * n + 8)) ] ||
  fail "$statements statements for $n submissions, over two each and the start's: $line"

seqs() { python3 -c 'import json, sys
print(" ".join(str(json.loads(l)["seq"]) for l in sys.stdin))'; }
start_master
id=$("$HRM" submit -- true) || fail "submit after a stop"
[ "$id" = $((n + 1)) ] || fail "after a stop the next job is $id, not $((n + 1))"
"$HRM" events --json | seqs >"$TMP/before"
kill -KILL "$MASTER"; wait "$MASTER" 2>/dev/null || true
start_master
id=$("$HRM" submit -- true) || fail "submit after a SIGKILL"
[ "$id" = $((n + 2)) ] || fail "after a SIGKILL the next job is $id, not $((n + 2))"
"$HRM" events --json | seqs >"$TMP/after"
python3 - "$TMP/before" "$TMP/after" $((n + 2)) <<'P' || fail "the event log after the restarts"
import sys
before = open(sys.argv[1]).read().split()
after = [int(s) for s in open(sys.argv[2]).read().split()]
assert after[:len(before)] == [int(s) for s in before], (before, after)
assert after == sorted(set(after)), after
assert len(after) == int(sys.argv[3]), after  # a job_submitted each, none lost or doubled
P

# The highest job's row unreadable (dropped at the load, with a log line): its id is still
# not given again, and the master takes the next submission.
kill -TERM "$MASTER"; until_ok 60 sh -c "! kill -0 $MASTER" || fail "master did not stop"
python3 - "$S/hrm.db" $((n + 2)) <<'P' || fail "cannot edit the store"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("UPDATE jobs SET spec = '{' WHERE id = ?", (int(sys.argv[2]),)).rowcount == 1
db.commit()
P
start_master
id=$("$HRM" submit -- true) || fail "submit after the last job's row was dropped"
[ "$id" = $((n + 3)) ] || fail "after the last row was dropped the next job is $id, not $((n + 3))"
kill -0 "$MASTER" || fail "the master stopped"
echo ok

# The group commit: the turns that record agents' end reports leave their fdatasync to a later
# turn's, so a burst of ends costs fewer syncs than ends, while a client's reply is never held
# for the window: with a window far longer than the test, the submission and the `hrm wait` are
# still answered (their turns sync at their end), and what they say is kept.  The master's stop
# line gives the counts; a stop (SIGTERM) syncs and sends what was held.
. "$(dirname "$0")/rtlib.sh"
keygen
# A window that is not a duration is refused with its name, before anything starts.
for bad in abc -5ms 5x ""; do
  expect_exit 2 "$HRM" master --state "$TMP/bad" --group-commit "$bad"
  grep -q -- "--group-commit" "$TMP/err" || fail "no word of --group-commit for '$bad': $(cat "$TMP/err")"
done
[ ! -e "$TMP/bad/hrm.db" ] || fail "a refused flag left a store behind"
start_master --group-commit 600s
start_agent n1 --cpus 1 --mem 1G --no-cgroup
until_ok 60 nodes_up 1 || fail "agent did not register"
n=40
# One CPU: the tasks run one after the other, each end a report of its own, most in turns of
# their own.
mkdir -p "$TMP/runs"
JOB=$("$HRM" submit --timeout 60 --count $n --cpus 1 -- sh -c "echo x >> $TMP/runs/g-\$HRM_TASK_ID") ||
  fail "submit (a reply held for the window?)"
expect_exit 0 timeout 120 "$HRM" wait "$JOB"
ran_once g $n "the burst"
grep -q "commits whose sync a later turn made" "$TMP/master.log" &&
  fail "the stop line came before the stop"
kill -TERM "$MASTER"; until_ok 60 sh -c "! kill -0 $MASTER" || fail "master did not stop"
line=$(grep "master stopped" "$TMP/master.log" | tail -1)
counts=$(sed -n 's/.* \([0-9]*\) commits, \([0-9]*\) syncs, \([0-9]*\) commits whose sync a later turn made.*/\1 \2 \3/p' <<<"$line")
read -r commits syncs held <<<"$counts"
[ -n "$held" ] || fail "no commit, sync and held counts in the stop line: $line"
[ "$commits" -ge $n ] || fail "$commits commits for $n ends: $line"
[ "$held" -ge 1 ] || fail "no turn left its sync to a later one: $line"
# Every end is a commit; with the window, two ends at least share each sync.
[ $((2 * syncs)) -lt $n ] || fail "$syncs syncs for $n end reports: not shared ($line)"

# A restart keeps every end: the held syncs were made by later turns or at the stop.
start_master --group-commit 0
"$HRM" job "$JOB" --all --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
assert j["state"] == "done", j["state"]
bad = [t for t in j["tasks"] if t["state"] != "done"]
assert len(j["tasks"]) == int(sys.argv[1]) and not bad, bad' $n ||
  fail "after a restart, job $JOB is not done with every task"
echo ok

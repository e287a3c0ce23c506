# Stream jobs under hrm-shared: accepted, their tasks restarted after each exit through a locked (pessimistic) commit of the scheduler instances, the pending reason names the backoff, and a cancel ends the job. (dhrm still refuses them: t0174.)
. "$(dirname "$0")/rtlib.sh"
need python3
up_two_scheds 2 --cpus 2 --mem 2G --policy hrm-shared --param instances=2
mkdir -p "$TMP/runs"
# Each run records itself, then exits 1 after a moment: a service that keeps crashing.
s=$("$HRM" submit --kind stream --count 2 --cpus 1 -- sh -c "echo run >> $TMP/runs/\$HRM_TASK_ID; sleep 0.2; exit 1") \
  || fail "hrm-shared refused a stream job"
runs() { cat "$TMP/runs/$1" 2>/dev/null | wc -l; }
until_ok 120 sh -c "[ \$(cat $TMP/runs/0 2>/dev/null | wc -l) -ge 3 ] && [ \$(cat $TMP/runs/1 2>/dev/null | wc -l) -ge 3 ]" \
  || fail "the stream tasks were not restarted: runs $(runs 0) and $(runs 1)"
"$HRM" job "$s" --json >"$TMP/s.json" || fail "hrm job"
python3 - "$TMP/s.json" <<'P' || fail "the stream job's record is wrong: $(cat "$TMP/s.json")"
import json, sys
d = json.load(open(sys.argv[1])); j = d.get("job", d)
assert j["kind"] == "stream" and j["state"] == "running", j["state"]
assert all(t["restarts"] >= 2 for t in j["tasks"]), [t["restarts"] for t in j["tasks"]]
P
# Every claim of a stream job is made under the cell lock.
locked=$("$HRM" stats --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["shared"]["txns_locked"])')
[ "$locked" -ge 3 ] || fail "stream claims were not locked: txns_locked $locked"
# A task in its backoff is named as such (the backoff grows to 4 s after the third exit).
until_ok 60 sh -c "'$HRM' job $s --json | grep -q 'crash-loop backoff'" || fail "the pending reason does not name the backoff"
"$HRM" cancel "$s" >/dev/null || fail "cancel"
until_ok 60 sh -c "'$HRM' job $s --json | grep -q '\"state\": \"cancelled\"'" || fail "the stream job did not end cancelled"
n0=$(runs 0); n1=$(runs 1)
# Nothing restarts after the cancel: a batch job runs to its end and the counts stay.
b=$("$HRM" submit --count 2 --cpus 1 -- true) || fail "submit batch"
expect_exit 0 timeout 120 "$HRM" wait "$b"
[ "$(runs 0)" -eq "$n0" ] && [ "$(runs 1)" -eq "$n1" ] || fail "a cancelled stream task ran again"
echo ok

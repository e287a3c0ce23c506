# While a turn of the master's loop is long (here held on purpose: $HRM_TEST_HOLD_TURN names a
# file the turn waits on), `hrm jobs` is answered beside it from the snapshot of the job table
# the last commit published, with what the loop itself answers; a submission waits for the loop
# (writes stay on it), and once it is acknowledged no listing leaves it out.
. "$(dirname "$0")/rtlib.sh"
keygen
HOLD="$TMP/hold"
export HRM_TEST_HOLD_TURN="$HOLD"
# No agents: the jobs stay pending, so nothing changes while a turn is held.  The age bound is
# wide: how long the test's own commands take is no part of what it checks.
start_master --snapshot-max-age 600s
for i in 1 2 3; do "$HRM" submit --name "fs$i" -- true >/dev/null || fail "submit $i"; done
helds() { grep -c "test: turn held" "$TMP/master.log" || true; }
held_since() { [ "$(helds)" -gt "$1" ]; }
# hold: a listing the loop answers (its commit publishes a snapshot), then a held turn
hold() {
  "$HRM" jobs --all --json >"$TMP/loop.json" || fail "hrm jobs before the hold"
  local before; before=$(helds)
  touch "$HOLD"
  until_ok 60 held_since "$before" || fail "no turn held"
}
hold
timeout 60 "$HRM" jobs --all --json >"$TMP/beside.json" || fail "hrm jobs was not answered while a turn is held"
cmp -s "$TMP/loop.json" "$TMP/beside.json" || fail "the listing beside the loop differs: $(diff "$TMP/loop.json" "$TMP/beside.json")"
[ "$(grep -c '"name": "fs' "$TMP/beside.json")" -eq 3 ] || fail "not the 3 jobs: $(cat "$TMP/beside.json")"
timeout 60 "$HRM" jobs >"$TMP/beside.txt" || fail "hrm jobs (text) while held"
grep -q fs3 "$TMP/beside.txt" || fail "text listing: $(cat "$TMP/beside.txt")"
# A submission is not answered beside the loop: it waits for the held turn to end.
timeout 120 "$HRM" submit --name fs4 -- true >"$TMP/submit4.out" 2>&1 &
SUB=$!
timeout 60 "$HRM" jobs --all --json >"$TMP/beside2.json" || fail "hrm jobs after a submission, while held"
kill -0 "$SUB" 2>/dev/null || fail "the submission was answered while the loop was held: $(cat "$TMP/submit4.out")"
grep -q '"fs4"' "$TMP/beside2.json" && fail "a job not yet acknowledged was listed"
[ "$(helds)" -eq "$(grep -c "test: turn released" "$TMP/master.log")" ] && fail "the turn was released early"
rm -f "$HOLD"
wait "$SUB" || fail "submit after the hold: $(cat "$TMP/submit4.out")"
# Acknowledged: a listing beside a held turn shows it.
hold
timeout 60 "$HRM" jobs --all --json >"$TMP/beside3.json" || fail "hrm jobs while held again"
grep -q '"fs4"' "$TMP/beside3.json" || fail "an acknowledged job is not listed: $(cat "$TMP/beside3.json")"
cmp -s "$TMP/loop.json" "$TMP/beside3.json" || fail "the second listing differs: $(diff "$TMP/loop.json" "$TMP/beside3.json")"
rm -f "$HOLD"
grep -q "answered beside the loop" "$TMP/master.log" || fail "the master did not log listings answered beside its loop"
echo ok

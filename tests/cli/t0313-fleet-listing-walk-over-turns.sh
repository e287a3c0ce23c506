# While 50 simulated agents start and end tasks by the hundred every second, `hrm jobs` is
# answered from the latest estimate walk and a new walk runs over the next turns, at most
# --eta-turn-rows rows in each, instead of walking the whole queue (up to a million rows) in the
# listing's own turn, which every request behind it waited for.  The master's debug log says how
# each walk ran: "over N turns" for a walk spread over the turns, none for a walk taken at once.
. "$(dirname "$0")/rtlib.sh"
N=50
ROWS=20000
keygen
"$HRM" keygen --node jw --node-count $N "$S/keys" >/dev/null || fail "keygen --node-count"
start_master --log-level debug --node-timeout 600s --eta-turn-rows $ROWS
"$HRM" agent --state "$S" --simulate-exec --count $N --name-prefix jw --cpus 4 --mem 8G \
  --log-level warning >>"$TMP/fleet.log" 2>&1 &
PIDS+=("$!")
until_ok 120 nodes_up $N || fail "not all $N agents registered"
# 200 slots, 100,000 tasks of 100 ms: tasks start and end all through the listings below, and
# a walk of the queue reaches its bound of a million rows (50 turns of $ROWS at least).
job=$("$HRM" submit --count 100000 --cpus 1 -- sleep 0.1) || fail "submit"
# One listing: true when the job is pending with an estimate, and running and ending tasks.
listing_ok() {
  "$HRM" jobs --json >"$TMP/jobs.json" || return 1
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); jobs = d.get("jobs", d) if isinstance(d, dict) else d
j = [x for x in jobs if x["id"] == int(sys.argv[2])][0]
ok = j["running"] - j["queued"] > 0 and j["done"] > 0 and j["pending"] > 0
ok = ok and isinstance(j["estimated_start_s"], int)
sys.exit(0 if ok else 1)' "$TMP/jobs.json" "$job"
}
until_ok 120 listing_ok || fail "the tasks did not start running and ending with an estimate listed"
spread() { grep -c "estimates: a walk .* over [0-9]* turns" "$TMP/master.log" || true; }
at_once() { grep "estimates: a walk" "$TMP/master.log" | grep -vc " over [0-9]* turns" || true; }
before_once=$(at_once)
# Listings until two walks have run over the turns, each answered with its estimate.
listings=0
max_gap=0
two_spread() {
  local t0 t1
  t0=$(date +%s%N)
  listing_ok || fail "a listing during the flood lost the job's estimate: $(cat "$TMP/jobs.json")"
  t1=$(date +%s%N)
  listings=$((listings + 1))
  [ $(((t1 - t0) / 1000000)) -gt "$max_gap" ] && max_gap=$(((t1 - t0) / 1000000))
  [ "$(spread)" -ge 2 ]
}
until_ok 120 two_spread || fail "no two estimate walks ran over the turns in $listings listings"
turns=$(grep -o "estimates: a walk .* over [0-9]* turns" "$TMP/master.log" | head -n 1 |
  sed 's/.* over \([0-9]*\) turns/\1/')
[ "$turns" -ge 2 ] || fail "a walk of the queue ran in $turns turn(s) at $ROWS rows a turn"
# No listing walked in its own turn: the memo was at most a second old, or a walk ran over the
# turns.  (A listing that reaches the master more than 5 s after the walk before it walks at
# once; only a host where one `hrm jobs` takes seconds does that.)
once=$(($(at_once) - before_once))
if [ "$max_gap" -lt 2000 ]; then
  [ "$once" -eq 0 ] || fail "$once of $listings listings walked in their own turn"
fi
"$HRM" cancel "$job" >/dev/null || fail "cancel"
echo ok

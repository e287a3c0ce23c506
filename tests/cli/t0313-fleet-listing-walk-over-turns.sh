# While 50 simulated agents start and end tasks by the hundred every second, `hrm jobs` is
# answered from the latest estimate walk and a new walk runs over the next turns, at most
# --eta-turn-rows rows in each, instead of walking the whole queue (up to a million rows) in the
# listing's own turn, which every request behind it waited for.  The master's debug log says how
# each walk ran: "over N turns" for a walk spread over the turns, none for a walk taken at once.
. "$(dirname "$0")/rtlib.sh"
N=50
ROWS=20000
keygen
start_master --log-level debug --node-timeout 600s --eta-turn-rows $ROWS
start_fleet $N jw --cpus 4 --mem 8G --log-level warning
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
# Three listers, one after the other each, so that listings reach the master at most seconds
# apart even on a host where one `hrm jobs` takes seconds (a listing that finds no walk for more
# than 5 s walks at once); each listing must keep the job's estimate.
for k in 1 2 3; do
  ( while [ ! -e "$TMP/stop-listing" ]; do
      "$HRM" jobs --json >"$TMP/jobs-$k.json" 2>/dev/null || continue
      python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); jobs = d.get("jobs", d) if isinstance(d, dict) else d
j = [x for x in jobs if x["id"] == int(sys.argv[2])][0]
sys.exit(0 if j["pending"] == 0 or isinstance(j["estimated_start_s"], int) else 1)' \
        "$TMP/jobs-$k.json" "$job" || cp "$TMP/jobs-$k.json" "$TMP/lost-estimate.json"
    done ) &
  PIDS+=("$!")
done
two_spread() { [ "$(spread)" -ge 2 ]; }
until_ok 120 two_spread || fail "no two estimate walks ran over the turns during the listings"
touch "$TMP/stop-listing"
[ ! -e "$TMP/lost-estimate.json" ] ||
  fail "a listing during the flood lost the job's estimate: $(cat "$TMP/lost-estimate.json")"
turns=$(grep -o "estimates: a walk .* over [0-9]* turns" "$TMP/master.log" | head -n 1 |
  sed 's/.* over \([0-9]*\) turns/\1/')
[ "$turns" -ge 2 ] || fail "a walk of the queue ran in $turns turn(s) at $ROWS rows a turn"
"$HRM" cancel "$job" >/dev/null || fail "cancel"
echo ok

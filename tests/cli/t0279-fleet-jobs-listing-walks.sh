# While 50 simulated agents place and end tasks by the hundred every second, `hrm jobs` asked again and again walks the queue for its estimates at most once a second (the estimates of a listing are whole seconds; before, every task start or end since the last walk made each listing walk up to a million rows again, and the listing waited for it): the master's debug log counts the walks against the seconds the listings took.
. "$(dirname "$0")/rtlib.sh"
N=50
K=12
keygen
start_master --log-level debug --node-timeout 600s
start_fleet $N f --cpus 4 --mem 8G --log-level warning
# 200 slots, 100,000 tasks of 100 ms: tasks start and end all through the listings below.
job=$("$HRM" submit --count 100000 --cpus 1 -- sleep 0.1) || fail "submit"
flooding() { "$HRM" job "$job" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
sys.exit(0 if j["running"] - j["queued"] > 0 and j["done"] > 0 else 1)'; }
until_ok 120 flooding || fail "the tasks did not start running and ending"
walks() { grep -c "estimates: a walk" "$TMP/master.log" || true; }
before=$(walks)
# hrm job of a job with pending tasks walks: the count is there to be read.
[ "$before" -ge 1 ] || fail "hrm job of a pending job logged no walk: nothing to count"
t0=$(date +%s.%N)
for _ in $(seq $K); do "$HRM" jobs >/dev/null || fail "hrm jobs"; done
t1=$(date +%s.%N)
after=$(walks)
flooding || fail "the tasks stopped changing before the listings ended: nothing measured"
# At most one walk per started second of the listings (and one for the first listing).
secs=$(python3 -c 'import math, sys; print(math.ceil(float(sys.argv[2]) - float(sys.argv[1])))' "$t0" "$t1")
n=$((after - before))
[ "$n" -le $((secs + 1)) ] || fail "$n walks for $K listings in ${secs} s"
# hrm job ID still walks after a change: its estimate and reason stay exact.
"$HRM" job "$job" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
assert isinstance(j["pending_reason"], str) and j["pending_reason"], j' || fail "job: no pending reason"
"$HRM" cancel "$job" >/dev/null || fail "cancel"
echo ok

# hrm up --policy hrm-shared: two scheduler processes run the shared-state instances, jobs of every size complete with each task run once, both processes get jobs, hrm stats / hrm nodes show the commits, and a cancelled or failed job gives its CPUs back.
. "$(dirname "$0")/rtlib.sh"
up_two_scheds 2 --cpus 2 --policy hrm-shared --log-level debug
mkdir -p "$TMP/runs"
ids=()
total=0
for i in $(seq 6); do
  n=$((i * 2))
  ids+=("$("$HRM" submit --count "$n" --cpus 1 -- sh -c "echo x >> $TMP/runs/j$i-\$HRM_TASK_ID")") \
    || fail "submit j$i"
  total=$((total + n))
done
for id in "${ids[@]}"; do expect_exit 0 timeout 120 "$HRM" wait "$id"; done
for i in $(seq 6); do ran_once "j$i" $((i * 2)) "job j$i"; done
# The master handed jobs to instances of both processes.
for p in sched1 sched2; do
  grep -q "to instance [0-9]* of $p" "$U/logs/master.log" || fail "$p was given no job"
done
# Every task was committed once through a claim; hrm stats says so, hrm nodes too.
expect_exit 0 "$HRM" stats --json
python3 - "$TMP/out" "$total" <<'PY' || fail "hrm stats: $(cat "$TMP/out")"
import json, sys
s = json.load(open(sys.argv[1]))["shared"]
want = int(sys.argv[2])
assert s["committed"] == want, s
assert s["claims"] == s["committed"] + s["conflicts"], s
assert s["protocol_errors"] == 0 and s["launches_refused"] == 0, s
PY
expect_exit 0 "$HRM" nodes
grep -q "^shared state: .* $total committed" "$TMP/out" || fail "no footer: $(cat "$TMP/out")"
expect_exit 0 "$HRM" stats
grep -q "^committed  *$total$" "$TMP/out" || fail "hrm stats: $(cat "$TMP/out")"

# A job cancelled while 4 of its tasks run and 4 wait in an instance, and a job whose tasks fail:
# the cell gets their CPUs back (a job needing every CPU runs after), and the claims that were on
# their way are no protocol error.
c=$("$HRM" submit --count 8 --cpus 1 -- sleep 60) || fail "submit c"
until_ok 60 started "$c" 4 || fail "c did not start"
expect_exit 0 "$HRM" cancel "$c"
f=$("$HRM" submit --count 3 --cpus 1 -- sh -c 'exit 3') || fail "submit f"
expect_exit 3 timeout 120 "$HRM" wait "$f"
full=$("$HRM" submit --count 2 --cpus 2 -- sh -c "echo x >> $TMP/runs/full-\$HRM_TASK_ID") || fail "submit full"
expect_exit 0 timeout 120 "$HRM" wait "$full"
ran_once full 2 "the job after the cancel"
expect_exit 0 "$HRM" stats --json
python3 - "$TMP/out" <<'PY' || fail "hrm stats: $(cat "$TMP/out")"
import json, sys
s = json.load(open(sys.argv[1]))["shared"]
assert s["protocol_errors"] == 0, s
PY

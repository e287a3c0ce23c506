# The master's step trace (--trace FILE): every task of a job placed by an hrm sched process has each step of its way (submit, handed, probes and replies, run, started, ended, done) in order on one clock; bench/p4-testbed --trace turns it into "where the time goes" and --run-scale runs a series of its own; a trace file that cannot be made stops the master with the flag named.
. "$(dirname "$0")/rtlib.sh"
need timeout
keygen
expect_exit 1 timeout 60 "$HRM" master --state "$S" --trace "$TMP/no/such/dir/trace"
matches -- "--trace $TMP/no/such/dir/trace" <"$TMP/err" || fail "the bad --trace is not named: $(cat "$TMP/err")"
"$HRM" master --help | matches -- "--trace FILE" || fail "--help does not document --trace"

start_master --policy dhrm-batch --local-instances 0 --trace "$TMP/trace"
start_agent n1 --cpus 2
start_agent n2 --cpus 2
# Its probes through the master (--probe-via-master), so that the trace holds them too.
"$HRM" sched --state "$S" --name s1 --instances 1 --probe-via-master --log-level info >>"$TMP/s1.log" 2>&1 &
PIDS+=("$!")
until_ok 60 nodes_up 2 || fail "the agents did not register"
until_ok 60 grep -q "registered with the master" "$TMP/s1.log" || fail "s1 did not register"
j=$("$HRM" submit --count 6 --cpus 1 -- true) || fail "submit"
expect_exit 0 timeout 120 "$HRM" wait "$j"
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true # the trace is complete once it stops

python3 - "$TMP/trace" "$j" 6 <<'PY' || fail "the trace does not hold every step: $(head -40 "$TMP/trace")"
import sys
path, job, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
steps, probes, replies, flushes = {}, 0, 0, 0
prev = 0
for line in open(path):
    t, step, j, task, node = line.split()
    t, j, task, node = int(t), int(j), int(task), int(node)
    assert t >= prev - 1000000, line  # one wall clock, in order (within a second of slew)
    prev = max(prev, t)
    if step == "flush":
        assert j >= 1 and task >= 0, line
        flushes += 1
    elif step == "probe":
        assert 0 <= node < 2, line
        probes += 1
    elif step == "reply":
        assert 0 <= node < 2, line
        replies += 1
    elif j == job:
        steps.setdefault((step, task), []).append((t, node))
def one(step, task=-1):
    got = steps.get((step, task), [])
    assert len(got) == 1, f"{step} {task}: {len(got)} lines"
    return got[0][0]
sub, handed, done = one("submit"), one("handed"), one("done")
assert sub <= handed <= done, "submit, handed, done out of order"
for k in range(n):
    run, started, ended = one("run", k), one("started", k), one("ended", k)
    assert handed <= run <= started <= ended <= done, f"task {k}: steps out of order"
    assert steps[("run", k)][0][1] == steps[("started", k)][0][1] == steps[("ended", k)][0][1], \
        f"task {k}: run, start and end on different nodes"
assert probes >= 1 and replies >= 1 and flushes >= 1, (probes, replies, flushes)
PY

# The bench: --trace prints the table of phases, a row per phase, for each policy that ran;
# --run-scale is a series of its own, named so in the header and in its BENCH lines.
TB=$HRM_ROOT/bench/p4-testbed
printf '0 10\n' >"$TMP/w.txt"
expect_exit 2 "$HRM" bench p4real --workload "$TMP/w.txt" --trace "$TMP/no/such/dir/t"
matches -- "--trace $TMP/no/such/dir/t" <"$TMP/err" || fail "p4real's bad --trace is not named: $(cat "$TMP/err")"
expect_exit 2 "$TB" "$HRM" --run-scale 0
matches -- "--run-scale" <"$TMP/err" || fail "a bad --run-scale is not named: $(cat "$TMP/err")"
expect_exit 0 timeout 600 "$TB" "$HRM" --loads 30 --seconds 2 --nodes 2 --cpus 2 --sched-procs 1 \
  --policies dhrm-nego,drf --no-sim --trace --run-scale 2
matches "^checks: .*: ok$" <"$TMP/out" || fail "the checks did not pass: $(tail -5 "$TMP/out")"
matches "run times uniform 100..300 ms (--run-scale 2: NOT P4's task lengths)" <"$TMP/out" \
  || fail "the header does not say the series is not P4's: $(head -5 "$TMP/out")"
matches "^BENCH p4_real_x2\.dhrm_nego\.p50_over_ideal_30 [0-9.]" <"$TMP/out" || fail "no p4_real_x2 BENCH line"
! matches "^BENCH p4_real\." <"$TMP/out" || fail "a --run-scale series printed P4's BENCH names"
matches "where the time goes at 30 %" <"$TMP/out" || fail "no 'where the time goes' table: $(tail -30 "$TMP/out")"
for ph in submit handed to_probe probe_run run_start overrun end_report report_done response-ideal; do
  awk -v ph="$ph" '$1 == ph && NF >= 3 && $2 ~ /^-?[0-9]/ { ok = 1 } END { exit !ok }' "$TMP/out" \
    || fail "no figures for the phase $ph: $(grep -A12 'where the time goes' "$TMP/out")"
done

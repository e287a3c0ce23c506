# bench/p4-testbed --trace splits a distributed job's "handed -> run" at its hrm sched process: hrm bench p4real gives each process a trace beside the master's (FILE.sched1 ...), emptied first, and the testbed prints sched_in, sched_round, sched_out and the holds' round trips for the distributed policy only.  No timing is asserted.
. "$(dirname "$0")/lib.sh"
need python3 timeout
TB=$HRM_ROOT/bench/p4-testbed
expect_exit 0 "$HRM" bench p4real --help
matches "FILE.sched1" <"$TMP/out" || fail "bench p4real --help does not say where the processes' traces go"

# A leftover trace from an earlier replay is emptied, not appended to.
printf '0 100 100\n0.05 100 100\n' >"$TMP/w.txt"
echo "1 job 999999 -1 -1" >"$TMP/t.sched1"
expect_exit 0 timeout 300 "$HRM" bench p4real --workload "$TMP/w.txt" --nodes 1 --cpus 2 \
  --policy dhrm-nego --sched-procs 1 --param instances=1 --state "$TMP/st" --trace "$TMP/t"
[ -s "$TMP/t" ] || fail "no master trace"
[ -s "$TMP/t.sched1" ] || fail "no trace from the scheduler process"
matches " job 999999 " <"$TMP/t.sched1" && fail "the process's trace kept an earlier replay's lines"
# The warm-up job and the two of the workload, each with a run per task.
[ "$(grep -c ' job ' "$TMP/t.sched1")" = 3 ] || fail "expected three jobs at sched1: $(grep ' job ' "$TMP/t.sched1")"
[ "$(grep -c ' run ' "$TMP/t.sched1")" -ge 6 ] || fail "expected a run per task at sched1"

expect_exit 0 timeout 600 "$TB" "$HRM" --tpch --nodes 2 --cpus 4 --loads 30 --seconds 2 \
  --policies drf,dhrm-nego --sched-procs 1 --no-sim --trace --keep "$TMP/k"
cp "$TMP/out" "$TMP/tb.out"
matches "^checks: .*: ok$" <"$TMP/tb.out" || fail "the checks did not pass: $(tail -5 "$TMP/tb.out")"
for k in sched_in sched_round sched_out probe_rtt; do
  # drf has no scheduler process: its cell is '-'; dhrm-nego's is "median / mean"
  matches -E "^ +$k +[0-9.]+ / [0-9.]+ +- " <"$TMP/tb.out" \
    || fail "no $k row for dhrm-nego: $(grep -A14 'where the time goes' "$TMP/tb.out")"
done

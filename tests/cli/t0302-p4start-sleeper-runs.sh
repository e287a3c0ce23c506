# hrm bench p4real --sleeper runs every task as PROGRAM SECONDS (warm-up and query stages included), and bench/p4-testbed --sleeper both replays the same jobs with /bin/sleep and with the static sleeper it builds, reports both side by side (tables, BENCH lines of their own), and gives the simulator the measured slot time beyond the run (execution.task_overhead) in a column of its own.  No timing is asserted.
. "$(dirname "$0")/lib.sh"
need python3 timeout cc
TB=$HRM_ROOT/bench/p4-testbed

# A recording sleeper: each task appends its argument, then sleeps as /bin/sleep would.
cat >"$TMP/rec-sleep" <<P
#!/bin/sh
echo "\$1" >>"$TMP/calls"
exec /bin/sleep "\$1"
P
chmod +x "$TMP/rec-sleep"
printf '0 120 80\n> 60\n0.05 90\n' >"$TMP/q.txt"
expect_exit 0 timeout 300 "$HRM" bench p4real --workload "$TMP/q.txt" --nodes 1 --cpus 2 \
  --sleeper "$TMP/rec-sleep" --state "$TMP/st"
matches "^BENCH p4real.jobs_ended 3 " <"$TMP/out" || fail "not every job ended: $(cat "$TMP/err")"
# The warm-up (one 10 ms task per slot) and the four tasks, each through the program.
sort "$TMP/calls" >"$TMP/got"
printf '0.010\n0.010\n0.060\n0.080\n0.090\n0.120\n' >"$TMP/want"
diff "$TMP/want" "$TMP/got" >&2 || fail "the tasks did not all run through --sleeper"

# The testbed with both sleepers, tiny.
expect_exit 0 timeout 900 "$TB" "$HRM" --tpch --nodes 2 --cpus 4 --loads 30 --seconds 2 \
  --policies dhrm-nego --sched-procs 1 --sleeper both --keep "$TMP/k"
cp "$TMP/out" "$TMP/tb.out"
matches "^checks: .*: ok$" <"$TMP/tb.out" || fail "the checks did not pass: $(tail -5 "$TMP/tb.out")"
matches -F -- "-- tasks: /bin/sleep --" <"$TMP/tb.out" || fail "no /bin/sleep table"
matches -F -- "-- tasks: bench/p4-sleeper.c, static --" <"$TMP/tb.out" || fail "no static sleeper table"
[ "$(grep -c '^== load 30 %' "$TMP/tb.out")" = 2 ] || fail "not one table per sleeper"
for key in p4_real_tpch p4_real_tpch_static; do
  for m in p50_over_ideal_30 p95_over_ideal_30 run_over_ms_30; do
    matches "^BENCH $key\.dhrm_nego\.$m [0-9.]" <"$TMP/tb.out" || fail "no BENCH $key.dhrm_nego.$m"
  done
done
[ -x "$TMP/k/p4-sleeper" ] || fail "the static sleeper was not built"
file "$TMP/k/p4-sleeper" 2>/dev/null | matches "statically linked" || \
  ! command -v file >/dev/null || fail "the sleeper is not static"
for raw in "$TMP/k/load30-dhrm-nego.out" "$TMP/k/load30-dhrm-nego-static.out"; do
  [ -s "$raw" ] || fail "no raw output $raw"
done
# The decomposition: per policy, the simulator at its run's measured latency, with its measured
# slot time beyond the run (execution.task_overhead = the run's mean run+ms), and both.
matches "from the simulator to the real run" <"$TMP/tb.out" || fail "no decomposition"
for r in "hrm sim at the measured latency" "hrm sim with the measured slot time" "hrm sim at both" \
  "real, ideal of the declared run times"; do
  matches -F "$r" <"$TMP/tb.out" || fail "no row '$r'"
done
for suffix in "" "-static"; do
  spec=$TMP/k/load30-sim-both-dhrm-nego$suffix.json
  [ -s "$spec" ] || fail "no simulator spec with the measured costs ($suffix)"
  raw=$TMP/k/load30-dhrm-nego$suffix.out
  python3 - "$spec" "$raw" "$TMP/k/load30.txt" <<'P' || fail "the costs given to the simulator are not the measured ones ($suffix)"
import json, sys
spec = json.load(open(sys.argv[1]))
assert spec["sim"]["policies"] == ["ideal", "dhrm-nego"], spec["sim"]["policies"]
ov, lat = spec["execution"]["task_overhead"], spec["cluster"]["network"]["latency"]
assert ov.endswith("us") and lat.endswith("us"), (ov, lat)
runs = {}
for line in open(sys.argv[3]):
    if not line.startswith("#"):
        runs[len(runs)] = [int(x) for x in line.split()[1:]]
over, rtt = [], None
for line in open(sys.argv[2]):
    w = line.split()
    if w and w[0] == "RUN":
        over += [float(x) - d for x, d in zip(w[2:], runs[int(w[1])])]
    if w[:2] == ["BENCH", "p4real.submit_rtt_p50_ms"]:
        rtt = float(w[2])
mean_us = sum(over) / len(over) * 1000
assert abs(float(ov[:-2]) - max(mean_us, 0)) <= 1, (ov, mean_us)
assert abs(float(lat[:-2]) - rtt / 2 * 1000) <= 1, (lat, rtt)
P
done
echo ok

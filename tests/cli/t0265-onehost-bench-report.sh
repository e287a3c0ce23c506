# bench/slurm_vs_hrm.py: the short-task load's queueing bound (jobs of 100 tasks of 0.1 s on 128 slots, FIFO, launching free), the one-host goals in the report (each met or not), and the old-against-new table of `compare`.
. "$(dirname "$0")/lib.sh"
need python3
PYS="$HRM_ROOT/bench/slurm_vs_hrm.py"

# Two jobs at once: the first takes 100 slots and ends at 0.1 s; the second gets the 28 left,
# its other 72 tasks wait for the first's: it ends at 0.2 s.  Mean 0.15 s.
printf '0\n0\n' >"$TMP/arr2.txt"
[ "$(python3 "$PYS" bound "$TMP/arr2.txt")" = 0.1500 ] || fail "bound of two jobs at once: $(python3 "$PYS" bound "$TMP/arr2.txt")"
# Far apart: each job has the slots to itself, the ideal.
printf '0\n1\n2\n' >"$TMP/arr3.txt"
[ "$(python3 "$PYS" bound "$TMP/arr3.txt")" = 0.1000 ] || fail "bound of spaced jobs"
# On 50 slots a lone job runs in two waves.
[ "$(python3 "$PYS" bound "$TMP/arr3.txt" 50)" = 0.2000 ] || fail "bound on 50 slots"

# The report: hrm's lines only, each new goal with its verdict.
cat >"$TMP/new.txt" <<'X'
BENCH throughput.bare.serial_per_s 1000 spawns/s
BENCH throughput.bare.two_way_per_s 1500 spawns/s
BENCH throughput.bare.agents_way_per_s 2000 spawns/s
BENCH throughput.count.tasks_per_s 1900 tasks/s
BENCH throughput.count.cpu_ms_per_task 0.090 ms
BENCH throughput.count.tasks_cpu_ms_per_task 0.5 ms
BENCH throughput.latency.start_p50_ms 1.5 ms
BENCH throughput.short.resp_mean_s 0.200 s
X
ST_ARRIVALS="$TMP/arr2.txt" python3 "$PYS" report "$TMP/new.txt" >"$TMP/report.md" || fail "report"
row() { grep -F "| $1 |" "$TMP/report.md" || fail "no goal row '$1': $(cat "$TMP/report.md")"; }
row "throughput >= 90 % of the best bare rate of this run" | grep -q "| yes | 95 % (1,900 / 2,000) |" || fail "90 % goal: $(row "throughput >= 90 % of the best bare rate of this run")"
row "submit -> start p50 < 1 ms" | grep -q "| no | 1.50 ms |" || fail "1 ms goal"
row "< 0.1 ms CPU per task across hrm's processes" | grep -q "| yes | 0.090 ms |" || fail "0.1 ms goal"
row "short tasks: mean response <= 1.5 x the ideal (0.15 s)" | grep -q "| no | 0.200 s = 2.00 x 0.1 s |" || fail "short-task goal"
row "(for reference) the same over the queueing bound of these arrivals" | grep -q "1.33 x 0.150 s" || fail "bound row"

# compare: one column per run, named by its file.
sed 's/1900/950/' "$TMP/new.txt" >"$TMP/hrm-old-1.txt"
cp "$TMP/new.txt" "$TMP/hrm-new-1.txt"
python3 "$PYS" compare "$TMP/hrm-old-1.txt" "$TMP/hrm-new-1.txt" >"$TMP/cmp.md" || fail "compare"
grep -qF "| metric | hrm-old-1 | hrm-new-1 |" "$TMP/cmp.md" || fail "compare's header: $(head -1 "$TMP/cmp.md")"
grep -qF "| 5,000 tasks as one job (tasks/s) | 950 | 1,900 |" "$TMP/cmp.md" || fail "compare's throughput row"
grep -qF "|   over the best bare rate of the same run | 0.47 | 0.95 |" "$TMP/cmp.md" || fail "compare's ratio row"

# bench/slurm-vs-hrm refuses an HRM_OLD that is not a binary, before measuring anything.
expect_exit 2 env HRM_OLD="$TMP/none" SLURM=0 OUT="$TMP/svh" bash "$HRM_ROOT/bench/slurm-vs-hrm" "$HRM"
echo ok

# hrm bench throughput --gpus: agents declare virtual GPUs, and the hrm policy's P0 path is measured
# on them; bench/p0-path-cost and bench/p0-fig12-real document themselves (--help).
. "$(dirname "$0")/lib.sh"
st="$TMP/bench-gpus"
expect_exit 0 timeout 240 "$HRM" bench throughput --policy hrm --nodes 1 --cpus 4 --gpus 2 \
  --tasks 20 --jobs 10 --latency 2 --bare 0 --queue 0 --state "$st"
for k in count.tasks_per_s jobs.cpu_ms_per_task latency.start_p50_ms; do
  grep -Eq "^BENCH throughput\.$k [0-9.]+ " "$TMP/out" || { cat "$TMP/out" "$TMP/err" >&2; fail "no $k line"; }
done
grep -q "policy hrm" "$st/logs/master.log" || fail "the master did not run hrm"
no_process -f "state $st" || fail "daemons left behind"
expect_exit 2 timeout 60 "$HRM" bench throughput --gpus many
grep -q -- "--gpus" "$TMP/err" || fail "bad --gpus not named: $(cat "$TMP/err")"
expect_exit 0 timeout 60 "$HRM" bench throughput --help
grep -q -- "--gpus N" "$TMP/out" || fail "--gpus not in --help"
expect_exit 0 "$HRM_ROOT/bench/p0-path-cost" --help
grep -q "hrm_over_drf_start_p50" "$TMP/out" || fail "p0-path-cost --help does not name its BENCH lines"
expect_exit 0 "$HRM_ROOT/bench/p0-fig12-real" --help
grep -q "cpu_util" "$TMP/out" || fail "p0-fig12-real --help does not name its BENCH lines"
expect_exit 2 "$HRM_ROOT/bench/p0-path-cost" /nonexistent/hrm
expect_exit 2 "$HRM_ROOT/bench/p0-fig12-real" /nonexistent/hrm

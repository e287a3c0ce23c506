# hrm bench throughput runs a small cluster through every measurement, prints its BENCH lines, and leaves no daemon or task behind.
. "$(dirname "$0")/lib.sh"
st="$TMP/bench-state"
expect_exit 0 timeout 240 "$HRM" bench throughput --nodes 1 --cpus 2 --tasks 20 --jobs 10 --latency 2 \
  --bare 10 --queue 50 --queue-jobs 5 --short-jobs 2 --short-rate 400 --state "$st"
for k in bare.serial_per_s bare.two_way_per_s count.tasks_per_s count.cpu_ms_per_task \
         jobs.tasks_per_s latency.start_p50_ms latency_bash.start_p50_ms short.resp_mean_s \
         memory.rss_per_queued_task memory.rss_per_queued_job; do
  grep -Eq "^BENCH throughput\.$k [0-9.]+ " "$TMP/out" || { cat "$TMP/out" >&2; fail "no $k line"; }
done
no_process -f "state $st" || fail "daemons left behind"
# This run's holding tasks (tagged with its state folder): other clusters may run on this host.
held_here() {
  local p
  for p in $(pgrep -fx "/bin/sleep 3600" || true); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "BENCH_THROUGHPUT_STATE=$st" && echo "$p"
  done
  return 0
}
need pgrep
[ -z "$(held_here)" ] || fail "holding tasks left behind: $(held_here)"
# The distributed path measures the same way (execution queues in the agents).
expect_exit 0 timeout 240 "$HRM" bench throughput --nodes 2 --cpus 2 --tasks 20 --jobs 10 --latency 2 \
  --bare 0 --queue 0 --policy dhrm-batch --param instances=2 --state "$st-d"
for k in count.tasks_per_s jobs.tasks_per_s latency.start_p50_ms; do
  grep -Eq "^BENCH throughput\.$k [0-9.]+ " "$TMP/out" || { cat "$TMP/out" >&2; fail "dhrm-batch: no $k line"; }
done
grep -q "policy dhrm-batch" "$st-d/logs/master.log" || fail "the master did not run dhrm-batch"
no_process -f "state $st-d" || fail "daemons left behind (dhrm-batch)"
expect_exit 2 timeout 60 "$HRM" bench throughput --param nokey
# Bad usage: exit 2 with a message.
expect_exit 2 timeout 60 "$HRM" bench throughput --tasks -3
expect_exit 2 timeout 60 "$HRM" bench throughput -- relative/cmd
grep -q "absolute path" "$TMP/err" || fail "relative command not explained"
expect_exit 0 timeout 60 "$HRM" bench throughput --help

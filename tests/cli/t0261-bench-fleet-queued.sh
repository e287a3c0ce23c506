# hrm bench fleet --queued: one BENCH line per figure and queue length (placements/s, the ratio to the first point, arrivals' acknowledgement, master CPU and RSS), every job cancelled after each point; bad --queued and --window values are refused with a line naming the flag.
. "$(dirname "$0")/lib.sh"
expect_exit 2 "$HRM" bench fleet --queued 0
grep -q -- "--queued" "$TMP/err" || fail "no error naming --queued: $(cat "$TMP/err")"
expect_exit 2 "$HRM" bench fleet --queued 1000,abc
grep -q -- "--queued" "$TMP/err" || fail "no error naming --queued: $(cat "$TMP/err")"
expect_exit 2 "$HRM" bench fleet --queued 1,2,3,4,5,6,7,8,9
grep -q "at most 8" "$TMP/err" || fail "no error about the number of points: $(cat "$TMP/err")"
expect_exit 2 "$HRM" bench fleet --queued 1000 --window 0
grep -q -- "--window" "$TMP/err" || fail "no error naming --window: $(cat "$TMP/err")"
"$HRM" bench fleet --help | grep -q -- "--queued N" || fail "--help does not document --queued"

out="$TMP/bench.out"
timeout -k 10 500 "$HRM" bench fleet --agents 20 --cpus 2 --queued 400,2000 --per-job 100 \
  --task-ms 20 --window 2 --state "$TMP/fleet" >"$out" 2>"$TMP/bench.err" ||
  { cat "$TMP/bench.err" >&2; fail "bench fleet --queued failed"; }
for n in 400 2000; do
  for k in placements_per_s ratio arrival_ack_p50_ms arrival_ack_p99_ms master_cpu_ms_per_1k \
    master_rss_mb submit_s; do
    grep -Eq "^BENCH fleet\.queued_$n\.$k [0-9.]+" "$out" || fail "no BENCH fleet.queued_$n.$k"
  done
done
grep -q "^BENCH fleet.queued_400.ratio 1.00 " "$out" || fail "the first point's ratio is not 1"
# Every job of both points was cancelled or ended: nothing left running on the master's books.
grep -q "master stopped" "$TMP/fleet/master.log" || fail "the master did not stop cleanly"
echo ok

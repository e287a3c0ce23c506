# hrm bench fleet waits for the load's own jobs, not for any done job: 400 tasks of 0.5 s on 20 simulated agents of 4 CPUs run in five waves, so the last start is at least 2 s after the submission and the rate at most 200/s (before, the idle series' jobs, already done, ended the wait at its first look and the figures came from the first wave); --jobs-every and --daemons are checked.
. "$(dirname "$0")/lib.sh"
expect_exit 2 "$HRM" bench fleet --jobs-every 0
grep -q -- "--jobs-every" "$TMP/err" || fail "no error naming --jobs-every: $(cat "$TMP/err")"
expect_exit 2 "$HRM" bench fleet --daemons "$TMP/no-such-hrm"
grep -q -- "--daemons" "$TMP/err" || fail "no error naming --daemons: $(cat "$TMP/err")"
"$HRM" bench fleet --help | grep -q -- "--jobs-every MS" || fail "--help does not document --jobs-every"

out="$TMP/bench.out"
# --daemons: this very build, by path (the master and the agents are spawned from it).
timeout -k 10 500 "$HRM" bench fleet --agents 20 --tasks 400 --per-job 200 --task-ms 500 \
  --no-reconcile --jobs-every 50 --daemons "$HRM" --state "$TMP/fleet" >"$out" 2>"$TMP/bench.err" ||
  { cat "$TMP/bench.err" >&2; fail "bench fleet failed"; }
value() { sed -n "s/^BENCH fleet\.$1 \([0-9.]*\) .*/\1/p" "$out"; }
rate=$(value placements_per_s) p99=$(value start_p99_ms)
[ -n "$rate" ] && [ -n "$p99" ] || fail "no placements_per_s or start_p99_ms: $(cat "$out")"
# 80 slots, tasks of 0.5 s: the fifth wave cannot start before 2 s.
python3 -c 'import sys; r, p = map(float, sys.argv[1:]); sys.exit(0 if r <= 200 and p >= 2000 else 1)' \
  "$rate" "$p99" || fail "placements_per_s $rate, start_p99_ms $p99: not the whole load's (at most 200/s, p99 at least 2000 ms)"
echo ok

# hrm bench flood runs end to end on a small job: its BENCH lines are there, every flooder's wait was
# answered when the job ended, and no request got an error.
. "$(dirname "$0")/lib.sh"
expect_exit 0 timeout 300 "$HRM" bench flood --tasks 2000 --clients 2 --waits 500 --probes 20 --nodes 1
for k in answer_p50_ms answer_p99_ms flood_answer_p50_ms flood_answer_p99_ms flood_answer_p50_ratio \
         flood_listings_per_s; do
  grep -Eq "^BENCH master\.$k [0-9.]+ " "$TMP/out" || { cat "$TMP/out" "$TMP/err" >&2; fail "no BENCH master.$k"; }
done
grep -qx "BENCH master.flood_waits_answered 1000 of 1000 waits" "$TMP/out" || { cat "$TMP/out" >&2; fail "waits"; }
grep -qx "BENCH master.flood_errors 0 replies" "$TMP/out" || fail "errors"
expect_exit 2 "$HRM" bench flood --clients 0
grep -q -- "--clients" "$TMP/err" || fail "bad --clients not named"

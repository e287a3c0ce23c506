# A flood of placements is started in passes of at most --max-pass-starts tasks (default 500), each pass followed by a turn that answers the clients first: the hrm policy with a bound of 7 places 80 slots in passes of 7, drf with the default places 600 in a pass of 500 and one of 100; a bad bound is refused naming the flag.
. "$(dirname "$0")/rtlib.sh"
expect_exit 2 "$HRM" master --state "$S" --max-pass-starts -3
out=$("$HRM" master --state "$S" --max-pass-starts many 2>&1) && fail "a bad bound was taken"
grep -q -- "--max-pass-starts" <<<"$out" || fail "a bad --max-pass-starts is not refused by name: $out"
"$HRM" master --help | grep -q -- "--max-pass-starts N.*default 500" || fail "--help: no default"

bounded() { grep -c "scheduling pass: $1 starts, the bound (--max-pass-starts $1)" "$TMP/master.log" || true; }
# A fleet of N simulated agents of CPUS cores under the master started with the flags given.
fleet() { # N CPUS master-flags...
  local n=$1 cpus=$2; shift 2
  keygen
  start_master --log-level debug --node-timeout 600s "$@"
  start_fleet "$n" f --cpus "$cpus" --mem 64G --log-level warning
}

# hrm, a bound of 7: 2 agents of 40 cores, 100 tasks of one core that hold it for 10 minutes.
fleet 2 40 --policy hrm --max-pass-starts 7
job=$("$HRM" submit --count 100 --cpus 1 -- sleep 600) || fail "submit"
until_ok 120 started "$job" 80 || fail "80 tasks did not start"
n=$(bounded 7)
# 80 starts: 11 passes of 7 ended at the bound, then one of 3.
[ "$n" -eq 11 ] || fail "$n passes ended at the bound of 7 (want 11)"
if grep "scheduling pass: [0-9]* starts, the bound" "$TMP/master.log" | grep -v "pass: 7 starts"; then
  fail "a pass started more than the bound"
fi
"$HRM" jobs >/dev/null || fail "hrm jobs"
"$HRM" cancel "$job" >/dev/null || fail "cancel"
kill -TERM "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; PIDS=()

# drf and the default bound: 6 agents of 100 cores, 600 tasks.
S="$TMP/state2"; export HRM_STATE="$S"
fleet 6 100
job=$("$HRM" submit --count 600 --cpus 1 -- sleep 600) || fail "submit"
until_ok 120 started "$job" 600 || fail "600 tasks did not start"
[ "$(bounded 500)" -eq 1 ] || fail "$(bounded 500) passes ended at the default bound of 500 (want 1)"
"$HRM" cancel "$job" >/dev/null || fail "cancel"
echo ok

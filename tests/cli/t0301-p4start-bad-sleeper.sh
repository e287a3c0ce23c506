# hrm bench p4real --sleeper, bench/p4-testbed --sleeper and execution.task_overhead refuse bad input with the flag or key named and a usage status: a relative or missing program, an unknown sleeper choice, an overhead without a unit or beyond a minute.  The static sleeper refuses arguments that are not seconds.
. "$(dirname "$0")/lib.sh"
need python3 cc
TB=$HRM_ROOT/bench/p4-testbed
printf '0 100\n' >"$TMP/w.txt"

expect_exit 0 "$HRM" bench p4real --help
matches -- "--sleeper PATH" <"$TMP/out" || fail "hrm bench p4real --help does not document --sleeper"
expect_exit 2 "$HRM" bench p4real --workload "$TMP/w.txt" --sleeper sleep
matches -- "--sleeper sleep: not an executable file given by its absolute path" <"$TMP/err" \
  || fail "a relative --sleeper is not named: $(cat "$TMP/err")"
expect_exit 2 "$HRM" bench p4real --workload "$TMP/w.txt" --sleeper "$TMP/nosuch"
matches -- "--sleeper $TMP/nosuch" <"$TMP/err" || fail "a missing --sleeper is not named: $(cat "$TMP/err")"
printf 'not a program\n' >"$TMP/plain"
chmod 644 "$TMP/plain"
expect_exit 2 "$HRM" bench p4real --workload "$TMP/w.txt" --sleeper "$TMP/plain"
matches -- "--sleeper $TMP/plain" <"$TMP/err" || fail "a file that is not executable is not refused"
[ ! -e "$TMP/w.txt.state" ] || fail "a cluster was started for bad input"

expect_exit 0 "$TB" --help
matches -- "--sleeper" <"$TMP/out" || fail "bench/p4-testbed --help does not document --sleeper"
expect_exit 2 "$TB" "$HRM" --sleeper busybox --sim-only
matches -- "--sleeper" <"$TMP/err" || fail "an unknown --sleeper choice is not named: $(cat "$TMP/err")"

# The simulator's knob: a duration with a unit, at most a minute.
mkspec() {
  python3 - "$1" "$2" <<'P'
import json, sys
json.dump({"cluster": {"nodes": [{"name": "n", "count": 1, "cores": 1, "mem": "1G"}]},
           "workload": {"jobs": [{"name": "j", "submit": "0s", "task": {"cpu": 1, "mem": "1G"},
                                  "tasks": [{"duration": "100ms"}]}]},
           "execution": {"task_overhead": json.loads(sys.argv[2])}}, open(sys.argv[1], "w"))
P
}
mkspec "$TMP/long.json" '"2m"'
expect_exit 2 "$HRM" sim "$TMP/long.json" -q
matches "execution.task_overhead: must be at most 1m" <"$TMP/err" || fail "a long overhead is not refused: $(cat "$TMP/err")"
mkspec "$TMP/nounit.json" '"5"'
expect_exit 2 "$HRM" sim "$TMP/nounit.json" -q
matches "task_overhead" <"$TMP/err" || fail "an overhead without a unit is not named: $(cat "$TMP/err")"
mkspec "$TMP/ok.json" '"5ms"'
expect_exit 0 "$HRM" sim "$TMP/ok.json" -q

# The static sleeper itself.
cc -static -O2 -std=c17 -Wall -Werror -o "$TMP/p4-sleeper" "$HRM_ROOT/bench/p4-sleeper.c" \
  || fail "bench/p4-sleeper.c does not build static"
for bad in "" x 1e3 1.2.3 -1 " 1" "0.5s"; do
  expect_exit 2 "$TMP/p4-sleeper" "$bad"
  matches "usage: p4-sleeper SECONDS" <"$TMP/err" || fail "p4-sleeper '$bad': no usage line"
done
expect_exit 2 "$TMP/p4-sleeper"
expect_exit 2 "$TMP/p4-sleeper" 1 2
expect_exit 0 "$TMP/p4-sleeper" 0.001
expect_exit 0 "$TMP/p4-sleeper" 0
echo ok

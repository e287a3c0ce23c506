# hrm bench central: the central role's decision cost on a spec, one line per policy, and its bad input.
. "$(dirname "$0")/lib.sh"
spec="$HRM_ROOT/examples/p4-exp2-100ms.json"
"$HRM" bench central --spec "$spec" --policy fifo,drf --repeat 1 >"$TMP/out" || fail "bench central failed"
for p in fifo drf min; do
  grep -Eq "^BENCH central\.decision_us\.$p [0-9]+\.[0-9]{3} us/task$" "$TMP/out" ||
    fail "no decision cost line for $p"
done
# P4 Fig. 7's burst: 140 jobs x 160 tasks, every one started by the role.
grep -q "^BENCH central.decisions.fifo 22400 tasks$" "$TMP/out" || fail "fifo did not start 22,400 tasks"
grep -q "^BENCH central.decisions.drf 22400 tasks$" "$TMP/out" || fail "drf did not start 22,400 tasks"
"$HRM" bench central --help | grep -q -- "--repeat N" || fail "--help lacks --repeat"
expect_exit 2 "$HRM" bench central --spec "$spec" --policy dhrm-nego
grep -q "'dhrm-nego' is not a central policy" "$TMP/err" || fail "no message naming the policy"
expect_exit 2 "$HRM" bench central --spec "$TMP/none.json"
grep -q -- "--spec" "$TMP/err" || fail "missing spec: message does not name --spec"
expect_exit 2 "$HRM" bench central --repeat 0
grep -q -- "--repeat" "$TMP/err" || fail "bad --repeat: message does not name the flag"

# hrm bench flow --dimacs: a bad file is refused with FILE:LINE and the reason (exit 2), supplies
# that cannot be routed name the file and the nodes (exit 1); neither prints a solve figure.
. "$(dirname "$0")/lib.sh"

printf 'p min 2 1\na 1 2 0 -4 1\n' >"$TMP/neg.min"
expect_exit 2 "$HRM" bench flow --dimacs "$TMP/neg.min"
grep -q "neg.min:2: arc 1 -> 2: capacity -4 is negative" "$TMP/err" || fail "negative capacity: $(cat "$TMP/err")"

printf 'c x\r\np min 2 1\r\nn 1 5\r\na 1 2 0 9 1\r\n' >"$TMP/unbalanced.min"
expect_exit 2 "$HRM" bench flow --dimacs "$TMP/unbalanced.min"
grep -q "unbalanced.min:4: supplies do not balance: total supply 5, total demand 0" "$TMP/err" ||
  fail "unbalanced: $(cat "$TMP/err")"

printf 'p min 3 1\nn 1 2\nn 3 3\nn 2 -5\na 1 2 0 9 1\n' >"$TMP/stuck.min"
expect_exit 1 "$HRM" bench flow --dimacs "$TMP/stuck.min"
grep -q "stuck.min: supplies cannot be met (total supply = demand = 5): 3 units of node 3 cannot reach any demand, node 2 lacks 3" "$TMP/err" ||
  fail "infeasible: $(cat "$TMP/err")"
! grep -q "flow.solve_ms" "$TMP/out" || fail "a failed solve printed a time"

printf '\0\0\0\0' >"$TMP/nul.min"
expect_exit 2 "$HRM" bench flow --dimacs "$TMP/nul.min"
grep -q "nul.min:1: NUL byte" "$TMP/err" || fail "NUL bytes: $(cat "$TMP/err")"
echo ok

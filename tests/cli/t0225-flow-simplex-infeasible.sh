# hrm bench flow --algo simplex on supplies that cannot be routed: exit 1, the file, the total and
# the nodes left with supply and demand named (as the other engines do), and no solve figure.
. "$(dirname "$0")/lib.sh"

printf 'p min 4 3\nn 1 4\nn 4 -4\na 1 2 0 3 1\na 2 4 0 9 1\na 3 4 0 9 1\n' >"$TMP/cut.min"
expect_exit 1 "$HRM" bench flow --dimacs "$TMP/cut.min" --algo simplex
grep -q "cut.min: supplies cannot be met (total supply = demand = 4): 1 units of node 1 cannot reach any demand, node 4 lacks 1" "$TMP/err" ||
  fail "infeasible: $(cat "$TMP/err")"
! grep -q "flow.solve_ms" "$TMP/out" || fail "a failed solve printed a time"

# the same file with enough capacity solves, at cost 4 x 2
printf 'p min 4 3\nn 1 4\nn 4 -4\na 1 2 0 4 1\na 2 4 0 9 1\na 3 4 0 9 1\n' >"$TMP/ok.min"
"$HRM" bench flow --dimacs "$TMP/ok.min" --algo simplex --repeat 0 >"$TMP/out" 2>"$TMP/err" || fail "$(cat "$TMP/err")"
grep -q "^BENCH flow.cost 8 " "$TMP/out" || fail "cost: $(cat "$TMP/out")"
echo ok

# bench/flow-vs-lemon checks its flags before it builds or generates anything: a size other than
# S or M, an empty --sizes and an unknown option are refused with exit 2 and a line that names
# the flag (before, a bad size was found by the first generator, after the build).
. "$(dirname "$0")/lib.sh"
B=$HRM_ROOT/bench/flow-vs-lemon
expect_exit 2 bash "$B" --hrm "$HRM" --sizes "S X"
matches -F "flow-vs-lemon: --sizes: 'X' is not S or M" "$TMP/err" || fail "bad size: $(cat "$TMP/err")"
[ ! -s "$TMP/out" ] || fail "a refused run printed a table: $(cat "$TMP/out")"
expect_exit 2 bash "$B" --hrm "$HRM" --sizes ""
matches -F "flow-vs-lemon: --sizes: empty" "$TMP/err" || fail "empty sizes: $(cat "$TMP/err")"
expect_exit 2 bash "$B" --hrm "$HRM" --size S
matches -F "flow-vs-lemon: unknown option --size" "$TMP/err" || fail "unknown option: $(cat "$TMP/err")"
expect_exit 0 bash "$B" --help
matches -F -- "--sizes" "$TMP/out" || fail "--help does not describe --sizes"
echo ok

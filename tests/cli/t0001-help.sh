# Every command and benchmark answers --help with a usage text and exit 0; unknown ones exit 2.
. "$(dirname "$0")/lib.sh"
expect_exit 0 "$HRM" --help;            grep -q "usage: hrm" "$TMP/out" || fail "hrm --help"
expect_exit 0 "$HRM" sim --help;        grep -q "usage: hrm sim" "$TMP/out" || fail "sim --help"
expect_exit 0 "$HRM" bench --help;      grep -q "usage: hrm bench" "$TMP/out" || fail "bench --help"
expect_exit 0 "$HRM" bench sim --help;  grep -q "usage: hrm bench sim" "$TMP/out" || fail "bench sim --help"
expect_exit 2 "$HRM" nosuch;            grep -q "unknown command 'nosuch'" "$TMP/err" || fail "unknown command"
expect_exit 2 "$HRM" bench nosuch;      grep -q "unknown benchmark" "$TMP/err" || fail "unknown bench"
expect_exit 2 "$HRM";                   grep -q "usage" "$TMP/err" || fail "no command"
expect_exit 0 "$HRM" sim --list-policies
for p in fifo capacity fair drf random spread; do
  grep -q "^$p " "$TMP/out" || fail "policy $p not listed"
done

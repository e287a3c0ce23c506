# Bad specs and flags give a clear message naming the problem and exit 2, never a crash.
. "$(dirname "$0")/lib.sh"
spec="$HRM_ROOT/examples/p1-testbed.json"
expect_exit 2 "$HRM" sim "$TMP/missing.json"
grep -q "missing.json" "$TMP/err" || fail "missing file not named"
echo '{"cluster": {' >"$TMP/broken.json"
expect_exit 2 "$HRM" sim "$TMP/broken.json"
grep -q "broken.json" "$TMP/err" || fail "broken JSON not named"
expect_exit 2 "$HRM" sim "$spec" --policy fifo,nosuch
grep -q "unknown policy 'nosuch'" "$TMP/err" || fail "unknown policy"
expect_exit 2 "$HRM" sim "$spec" --seed -4
grep -q -- "--seed" "$TMP/err" || fail "bad seed"
expect_exit 2 "$HRM" sim "$spec" --sample-interval 5parsecs
grep -q -- "--sample-interval" "$TMP/err" || fail "bad interval"
expect_exit 2 "$HRM" sim "$spec" --param fifo.nosuch=1 --policy fifo
grep -q "nosuch" "$TMP/err" || fail "unknown policy parameter not named"
expect_exit 2 "$HRM" sim
expect_exit 2 "$HRM" bench sim --nodes 0
grep -q -- "--nodes" "$TMP/err" || fail "bad bench flag"

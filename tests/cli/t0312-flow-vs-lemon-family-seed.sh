# bench/flow-vs-lemon --family, --seed, --algos and --goal-seeds: bad values are refused with exit 2 and a line
# that names the flag, before anything is built or generated; --help describes each.
. "$(dirname "$0")/lib.sh"
B=$HRM_ROOT/bench/flow-vs-lemon
refused() { # $1 the expected message, then the flags
  local msg=$1; shift
  expect_exit 2 bash "$B" --hrm "$HRM" "$@"
  matches -F "$msg" "$TMP/err" || fail "$*: $(cat "$TMP/err")"
  [ ! -s "$TMP/out" ] || fail "a refused run ($*) printed: $(cat "$TMP/out")"
}
refused "flow-vs-lemon: --family: 'netgn' is not netgen, gridgen, goto, p1 or p1-rack" --family "goto netgn"
refused "flow-vs-lemon: --family: empty" --family ""
refused "flow-vs-lemon: --seed: 'x1' is not a non-negative integer" --seed x1
refused "flow-vs-lemon: --seed: '-3' is not a non-negative integer" --seed -3
refused "flow-vs-lemon: --algos: 'fast' is not auto, ssp, scaling or simplex" --algos "auto fast"
for bad in 0 1001 x 07 ""; do
  refused "flow-vs-lemon: --goal-seeds: '$bad' is not a whole number from 1 to 1000" --goal-seeds "$bad"
done
expect_exit 0 bash "$B" --help
for flag in --family --seed --algos --goal-seeds; do
  matches -F -- "$flag" "$TMP/out" || fail "--help does not describe $flag"
done
echo ok

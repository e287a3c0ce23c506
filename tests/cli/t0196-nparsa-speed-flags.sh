# The flags that slow a node: hrm agent --speed / --disk-bps and hrm up --node-speed / --node-disk-bps refuse a value outside their range with the flag named, before anything starts; --help documents them.
. "$(dirname "$0")/lib.sh"
for v in 0 1.5 -0.5 abc 0.5x ""; do
  expect_exit 2 "$HRM" agent --state "$TMP/s" --speed "$v"
  grep -q -- "--speed: '$v'" "$TMP/err" || fail "agent --speed '$v' is not named: $(cat "$TMP/err")"
  grep -q "(0, 1\]" "$TMP/err" || fail "agent --speed '$v': the range is not said"
done
for v in 0 -5 fast 10Q; do
  expect_exit 2 "$HRM" agent --state "$TMP/s" --disk-bps "$v"
  grep -q -- "--disk-bps: '$v'" "$TMP/err" || fail "agent --disk-bps '$v' is not named"
done
for v in 1,0 1,1,0.5,2 1,,0.5 x ""; do
  expect_exit 2 "$HRM" up --nodes 2 --state "$TMP/up" --node-speed "$v" -- true
  grep -q -- "--node-speed" "$TMP/err" || fail "up --node-speed '$v' is not named: $(cat "$TMP/err")"
done
expect_exit 2 "$HRM" up --nodes 2 --state "$TMP/up" --node-disk-bps 50MB/s,0 -- true
grep -q -- "--node-disk-bps: '0'" "$TMP/err" || fail "up --node-disk-bps '0' is not named"
# Nothing started, nothing left: the state folder was not even made.
[ ! -e "$TMP/up/logs" ] || fail "hrm up started something with a bad flag"
"$HRM" agent --help >"$TMP/help" || fail "agent --help"
for f in "--bench" "--rebench" "--speed F" "--disk-bps RATE"; do
  grep -q -- "$f" "$TMP/help" || fail "agent --help does not document $f"
done
"$HRM" up --help >"$TMP/help" || fail "up --help"
for f in "--node-speed F" "--node-disk-bps R"; do
  grep -q -- "$f" "$TMP/help" || fail "up --help does not document $f"
done
echo ok

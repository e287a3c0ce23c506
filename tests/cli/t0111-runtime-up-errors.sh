# hrm up says why a daemon could not start, in the daemon's own words, at once: bad agent flags, a bad policy, a missing key.
. "$(dirname "$0")/lib.sh"
# Flags hrm up passes to its agents are checked as the agents check them, before anything starts.
expect_exit 2 timeout 60 "$HRM" up --nodes 2 --cpus 0 --state "$TMP/a"
grep -q -- "--cpus" "$TMP/err" || fail "bad --cpus not named: $(cat "$TMP/err")"
# Agents bind whole cores: a fraction is refused, not silently rounded down.
for bad in 1.5 2500m; do
  expect_exit 2 timeout 60 "$HRM" up --nodes 2 --cpus "$bad" --state "$TMP/a"
  grep -q -- "--cpus.*whole number" "$TMP/err" || fail "--cpus $bad not refused as a fraction: $(cat "$TMP/err")"
  expect_exit 2 "$HRM" agent --cpus "$bad" --state "$TMP/a"
  grep -q -- "--cpus: '$bad': expected a whole number" "$TMP/err" || fail "agent --cpus $bad: $(cat "$TMP/err")"
done
expect_exit 2 timeout 60 "$HRM" up --nodes 2 --mem lots --state "$TMP/a"
grep -q -- "--mem" "$TMP/err" || fail "bad --mem not named: $(cat "$TMP/err")"
expect_exit 2 timeout 60 "$HRM" up --nodes 2 --node-timeout soon --state "$TMP/a"
grep -q -- "--node-timeout" "$TMP/err" || fail "bad --node-timeout not named: $(cat "$TMP/err")"
[ ! -e "$TMP/a/endpoint" ] || fail "a refused hrm up started a master"

# A master that refuses its policy: its own reason, not a pointer to a log.
expect_exit 1 timeout 60 "$HRM" up --nodes 2 --policy no-such-policy --state "$TMP/b"
grep -q "master.*unknown policy 'no-such-policy'" "$TMP/err" || fail "policy: $(cat "$TMP/err")"
grep -q "came up" "$TMP/err" && fail "waited for nodes instead: $(cat "$TMP/err")"

# Agents that cannot load their key: each one's reason, and everything stopped.
mkdir -p "$TMP/c"
"$HRM" keygen --node node1,node2 "$TMP/c/keys" >/dev/null || fail "keygen"
echo "not a key" >"$TMP/c/keys/agent-node1.key"   # mode 0600 kept: only its content is bad
expect_exit 1 timeout 60 "$HRM" up --nodes 2 --state "$TMP/c"
grep -q "node1.*agent-node1.key" "$TMP/err" || fail "agent key: $(cat "$TMP/err")"
grep -q "came up" "$TMP/err" && fail "waited for nodes instead: $(cat "$TMP/err")"
# The master it started is stopped: its lock is free again (a master may start).
"$HRM" keygen --force --node node1 "$TMP/c/keys" >/dev/null || fail "keygen --force --node node1"
expect_exit 0 timeout 60 "$HRM" up --nodes 1 --state "$TMP/c" -- true

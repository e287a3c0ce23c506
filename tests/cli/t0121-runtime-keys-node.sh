# An agent key registers only as its node: node= in authorized, or the name of its first registration.
. "$(dirname "$0")/rtlib.sh"
keygen
"$HRM" keygen --node n1,n2 "$S/keys" >/dev/null || fail "keygen --node n1,n2"
grep -Eq '^agent [^ ]+ node=n1$' "$S/keys/authorized" || fail "no node=n1 line"
grep -Eq '^agent [^ ]+ node=n2$' "$S/keys/authorized" || fail "no node=n2 line"
[ "$(stat -c %a "$S/keys/agent-n1.key")" = 600 ] || fail "agent-n1.key is not 0600"
# shared_keys DIR: a folder with the master's public key and the shared agent.key only
shared_keys() { mkdir -p "$1"; cp "$S/keys/master.pub" "$S/keys/agent.key" "$1/"; }
start_master
start_agent n1 --cpus 2
until_ok 60 nodes_up 1 || fail "n1 with its own key did not register"

# n2's key used to register as n1: refused; the agent stops and says why; the master logs it.
mkdir "$TMP/k2"; cp "$S/keys/master.pub" "$TMP/k2/"; cp "$S/keys/agent-n2.key" "$TMP/k2/agent.key"
expect_exit 1 timeout 60 "$HRM" agent --state "$S" --keys "$TMP/k2" --name n1 --cpus 2
grep -q "refused this node: register as 'n1' refused: this agent key is bound to node 'n2'" "$TMP/err" \
  || fail "the agent does not say why it was refused"
grep -q "refused a registration as 'n1'" "$TMP/master.log" || fail "the refusal is not logged"
"$HRM" nodes --json | matches '"state": "up"' || fail "n1 lost its place"

# The shared agent.key (no node=) is bound to the name it first registers as...
shared_keys "$TMP/k0"
"$HRM" agent --state "$S" --keys "$TMP/k0" --name n5 --cpus 2 --log-level info >>"$TMP/n5.log" 2>&1 &
PIDS+=($!)
until_ok 60 nodes_up 2 || fail "n5 with agent.key did not register"
grep -q "bound to node 'n5'" "$TMP/master.log" || fail "the binding is not logged"
# ...so a second node with it is refused, naming the fix...
expect_exit 1 timeout 60 "$HRM" agent --state "$S" --keys "$TMP/k0" --name n6 --cpus 2
grep -q "registered first as node 'n5'" "$TMP/err" || fail "a second node took the shared key"
grep -q "hrm keygen --node n6" "$TMP/err" || fail "the refusal does not name the fix"
# ...and the binding outlives a master restart.
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true
start_master
expect_exit 1 timeout 60 "$HRM" agent --state "$S" --keys "$TMP/k0" --name n6 --cpus 2
grep -q "registered first as node 'n5'" "$TMP/err" || fail "the binding was lost with the restart"
until_ok 60 nodes_up 2 || fail "n1 and n5 did not come back"
if "$HRM" nodes --json | matches '"name": "n6"'; then fail "n6 was listed"; fi

# An unbound key cannot take a name that has a key of its own (a fresh cluster: agent.key is free).
rt_cleanup; PIDS=()
S="$TMP/s2"; export HRM_STATE="$S"
keygen
"$HRM" keygen --node n1 "$S/keys" >/dev/null || fail "keygen --node n1"
shared_keys "$TMP/k3"
start_master
expect_exit 1 timeout 60 "$HRM" agent --state "$S" --keys "$TMP/k3" --name n1 --cpus 2
grep -q "node 'n1' has a key of its own" "$TMP/err" || fail "an unbound key took n1's name"

# Bad input to keygen --node.
expect_exit 1 "$HRM" keygen --node n1 "$S/keys"
grep -q "agent-n1.key exists (use --force" "$TMP/err" || fail "an existing node key was replaced"
expect_exit 1 "$HRM" keygen --node ../x "$S/keys"
grep -q "\-\-node '../x'" "$TMP/err" || fail "a bad node name was accepted"
# --force replaces the key and its line: one node=n1 line, with the new key.
old=$(cat "$S/keys/agent-n1.pub")
expect_exit 0 "$HRM" keygen --force --node n1 "$S/keys"
[ "$(grep -c 'node=n1$' "$S/keys/authorized")" -eq 1 ] || fail "--force left two node=n1 lines"
grep -qF -e "$old" "$S/keys/authorized" && fail "--force kept the old key's line"
grep -qF -e "$(cat "$S/keys/agent-n1.pub") node=n1" "$S/keys/authorized" || fail "the new key is not listed"

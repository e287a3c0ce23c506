# An unauthenticated client is refused and logged; malformed messages get error replies and the master stays up.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 2

# A key the master does not know: refused at the handshake.
"$HRM" keygen "$TMP/other" >/dev/null
cp "$S/keys/master.pub" "$TMP/other/master.pub"
expect_exit 1 "$HRM" nodes --keys "$TMP/other" --timeout 5
grep -q "refused" "$TMP/err" || fail "no refusal message"
until_ok 60 grep -q "refused a peer" "$TMP/master.log" || fail "refusal not logged"
# The agent key may not act as a client.
mkdir "$TMP/agentkeys"; cp "$S/keys/master.pub" "$TMP/agentkeys/"; cp "$S/keys/agent.key" "$TMP/agentkeys/client.key"
echo '{"v":1,"type":"jobs","req":1}' >"$TMP/jobs.json"
expect_exit 0 "$HRM" raw --keys "$TMP/agentkeys" "$TMP/jobs.json"
grep -q '"code":"forbidden"' "$TMP/out" || fail "agent key used as client"

# Batches: a client may not send one; an agent's batch is checked item by item.
echo '{"v":1,"type":"batch","msgs":[{"v":1,"type":"jobs","req":2}]}' >"$TMP/b1.json"
expect_exit 0 "$HRM" raw "$TMP/b1.json"
grep -q '"code":"forbidden"' "$TMP/out" || fail "a client's batch was accepted"
echo '{"v":1,"type":"batch","msgs":[{"v":1,"type":"batch","msgs":[]}]}' >"$TMP/b2.json"
expect_exit 0 "$HRM" raw --keys "$TMP/agentkeys" "$TMP/b2.json"
grep -q '"code":"unknown_type"' "$TMP/out" || fail "a nested batch was accepted"
echo '{"v":1,"type":"batch","msgs":[{"v":1,"type":"heartbeat","load":"high"}]}' >"$TMP/b3.json"
expect_exit 0 "$HRM" raw --keys "$TMP/agentkeys" "$TMP/b3.json"
grep -q '"code":"bad_field"' "$TMP/out" || fail "a bad batch item was accepted"

# The corpus: every frame gets an error reply.
corpus="$HRM_ROOT/tests/data/wire/bad"
frames=("$corpus"/*.json @empty @big:2000000)
expect_exit 0 "$HRM" raw "${frames[@]}"
n=$(grep -c '"type":"error"' "$TMP/out")
[ "$n" -eq "${#frames[@]}" ] || { cat "$TMP/out" >&2; fail "$n error replies for ${#frames[@]} frames"; }
grep -q '"code":"too_big"' "$TMP/out" || fail "oversized frame"
grep -q '"code":"bad_version"' "$TMP/out" || fail "version"
grep -q '"code":"bad_spec"' "$TMP/out" || fail "bad spec"
# ...and the daemons are still up and working.
until_ok 60 nodes_up 1 || fail "agent lost after the corpus"
id=$("$HRM" submit -- echo still-alive) || fail "submit after corpus"
expect_exit 0 timeout 120 "$HRM" wait "$id"
[ "$("$HRM" logs "$id")" = "still-alive" ] || fail "logs after corpus"
kill -0 "$MASTER" || fail "master died"

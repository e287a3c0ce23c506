# hrm up gives each of its nodes a key bound to its name, and keeps its logs private.
. "$(dirname "$0")/lib.sh"
need stat
cat >"$TMP/run.sh" <<'X'
set -e
id=$("$HRM" submit -- true)
timeout 60 "$HRM" wait "$id"
"$HRM" job "$id" --json | grep "\"user\": \"$(id -un)\"" >/dev/null
X
timeout 300 "$HRM" up --nodes 2 --cpus 2 --state "$TMP/st" -- bash "$TMP/run.sh" >"$TMP/out" 2>"$TMP/err" \
  || { cat "$TMP/err" "$TMP/st/logs/master.log" >&2; fail "hrm up run failed"; }
k="$TMP/st/keys"
for n in node1 node2; do
  [ -f "$k/agent-$n.key" ] || fail "no key of its own for $n"
  grep -qF -e "$(cat "$k/agent-$n.pub") node=$n" "$k/authorized" || fail "$n's key is not bound to $n"
done
# The nodes registered with their own keys: the shared one was bound to nothing.
if grep -q "bound to node" "$TMP/st/logs/master.log"; then fail "a node used the shared key"; fi
[ "$(stat -c %a "$TMP/st/logs")" = 700 ] || fail "logs folder is $(stat -c %a "$TMP/st/logs")"
[ "$(stat -c %a "$TMP/st/logs/master.log")" = 600 ] || fail "master.log is $(stat -c %a "$TMP/st/logs/master.log")"
# A second run on the same folder keeps the keys.
before=$(cat "$k/agent-node1.pub")
timeout 300 "$HRM" up --nodes 2 --cpus 2 --state "$TMP/st" -- true >"$TMP/out" 2>"$TMP/err" \
  || { cat "$TMP/err" >&2; fail "second hrm up failed"; }
[ "$(cat "$k/agent-node1.pub")" = "$before" ] || fail "node1's key was replaced"

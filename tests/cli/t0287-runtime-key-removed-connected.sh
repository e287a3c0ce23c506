# A node key removed from authorized while its agent stays connected: the master re-reads the list on its own (no peer hand-shakes), refuses the agent's next message, and the agent stops saying why (stopping its tasks, as any agent that stops); once the key is listed again a restarted agent registers and the lost task runs again to the job's end.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 2
until_ok 60 nodes_up 1 || fail "agent did not register"
mkdir -p "$TMP/runs"
job=$("$HRM" submit -- sh -c "echo x >> $TMP/runs/t-0; until [ -e $TMP/go ]; do sleep 0.05; done") ||
  fail "submit"
until_ok 60 test -s "$TMP/runs/t-0" || fail "the task did not start"

line=$(grep -F -e "$(cat "$S/keys/agent-n1.pub")" "$S/keys/authorized") || fail "no line for n1's key"
grep -vF -e "$(cat "$S/keys/agent-n1.pub")" "$S/keys/authorized" >"$TMP/authorized"
cat "$TMP/authorized" >"$S/keys/authorized"
# Nothing connects from here until the agent has stopped: only the master's own check can see it.
gone() { ! kill -0 "$1" 2>/dev/null; }
until_ok 60 gone "$AGENT_n1" || fail "the agent whose key was removed goes on: $(tail -3 "$TMP/n1.log")"
rc=0; wait "$AGENT_n1" || rc=$?
[ "$rc" -ne 0 ] || fail "the agent exited 0 after its key was removed"
grep -q "the master refused this node: this key was removed from the allow-list" "$TMP/n1.log" ||
  fail "the agent does not say why it stopped: $(tail -3 "$TMP/n1.log")"
grep -q "the allow-list changed: [0-9]* keys admitted" "$TMP/master.log" ||
  fail "the master did not re-read the list: $(tail -5 "$TMP/master.log")"

echo "$line" >>"$S/keys/authorized"
start_agent n1 --cpus 2
until_ok 60 nodes_up 1 || fail "the agent did not come back with its key listed again"
touch "$TMP/go"
expect_exit 0 timeout 120 "$HRM" wait "$job"
[ "$(wc -l <"$TMP/runs/t-0")" -eq 2 ] || fail "the task ran $(wc -l <"$TMP/runs/t-0") times, not once with the agent and once after"

# An agent that watches its connection does not send an unanswered registration again 3 s later (here the answer is a refusal, the agent declaring under 1 MiB of memory; at the start or restart of thousands of agents: a master busy with the others' handshakes and registrations): ZeroMQ delivers the one queued and a dropped connection is seen, so the copy waits 24 s.  The master refuses the first registration once while a good agent beside it reports usage 8 times (7 s and more); an agent that does not watch its connection (over its descriptor limit) still sends the copy after 3 s.
. "$(dirname "$0")/rtlib.sh"
keygen
"$HRM" keygen --node bad --node good "$S/keys" >/dev/null || fail "keygen --node"
start_master --log-level debug --node-timeout 600s
"$HRM" agent --state "$S" --simulate-exec --name good --cpus 1 --mem 1G --log-level info \
  >>"$TMP/good.log" 2>&1 &
PIDS+=("$!")
until_ok 60 nodes_up 1 || fail "the good agent did not register"
"$HRM" agent --state "$S" --simulate-exec --name bad --cpus 1 --mem 512K --log-level debug \
  >>"$TMP/bad.log" 2>&1 &
BAD=$!; PIDS+=("$BAD")
refused() { grep -c "refused a registration as '$1'" "$TMP/master.log" || true; }
refused_ge() { [ "$(refused "$1")" -ge "$2" ]; }
until_ok 60 refused_ge bad 1 || fail "the registration under 1 MiB was not refused"
until_ok 60 grep -q "bad: connected to the master; its registration is sent again in 24 s" \
  "$TMP/bad.log" || fail "the agent did not say it waits 24 s on its live connection"
# The good node's usage reports, one a second by its own clock, measure the wait.
usage() { [ "$(grep -c "node_usage node" "$TMP/master.log")" -ge "$1" ]; }
base=$(grep -c "node_usage node" "$TMP/master.log" || true)
until_ok 120 usage $((base + 8)) || fail "the good agent stopped reporting"
[ "$(refused bad)" -eq 1 ] || fail "$(refused bad) registrations refused: the copy did not wait on a live connection"
kill -TERM "$BAD"; wait "$BAD" 2>/dev/null || true

# Without a watched connection (a limit of descriptors too low for it): copies after 3 s.
"$HRM" keygen --node bad1 "$S/keys" >/dev/null || fail "keygen bad1"
(ulimit -n 260 && exec "$HRM" agent --state "$S" --simulate-exec --count 1 --name-prefix bad \
  --cpus 1 --mem 512K --log-level debug) >>"$TMP/bad2.log" 2>&1 &
PIDS+=("$!")
until_ok 60 grep -q "do without watching" "$TMP/bad2.log" || fail "the second agent watches its connection"
until_ok 60 refused_ge bad1 2 || fail "an unwatched agent did not send its copy"
echo ok

# Alg. 3 on a real cluster: FGM learns that a command is light, then the same command burns CPU on a full node; its use runs over what FGM assumed, conformity rises over the thresholds, and the master logs the node's mode switch with the conformity figure that caused it.
. "$(dirname "$0")/rtlib.sh"
keygen
# One-second conformity windows, so that the switch comes within the test's time.
start_master --policy fgm --param window=1
start_agent n1 --cpus 1 --mem 1G --usage-period 200ms
until_ok 60 nodes_up 1 || fail "n1 did not register"

# Light (sleeps) unless $1.heavy exists, then burns CPU; either way until $1.stop exists.
cat >"$TMP/task.sh" <<'X'
if [ -e "$1.heavy" ]; then
  while [ ! -e "$1.stop" ]; do i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); done; done
else
  while [ ! -e "$1.stop" ]; do sleep 0.05; done
fi
X
field() { # JOB EXPR over task 0
  "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d); t = j["tasks"][0]; print(eval(sys.argv[1]))' "$2"
}
sampled() { [ "$(field "$1" 't["rss_peak"]')" -gt 0 ]; }
light=$("$HRM" submit --cpus 1 --mem 64M -- sh "$TMP/task.sh" "$TMP/x") || fail "submit"
until_ok 60 sampled "$light" || fail "no usage sample of the light run"
touch "$TMP/x.stop"
expect_exit 0 "$HRM" wait "$light"
[ "$(field "$light" 't["estimate"] is not None')" = True ] || fail "nothing learned from the light run"
grep -q "FGM: node n1 goes from" "$TMP/master.log" && fail "a mode switch before any task ran over its estimate"

rm "$TMP/x.stop"; touch "$TMP/x.heavy"
heavy=$("$HRM" submit --cpus 1 --mem 64M -- sh "$TMP/task.sh" "$TMP/x") || fail "submit"
switched() { grep -Eq "FGM: node n1 goes from fine-compress to (fine|coarse|stop) \(conformity 0\.[0-9]{4}\)" "$TMP/master.log"; }
until_ok 60 switched || fail "no mode switch logged while the task used more than FGM assumed"
line=$(grep -E "FGM: node n1 goes from fine-compress" "$TMP/master.log" | head -1)
conf=$(echo "$line" | sed 's/.*(conformity \([0-9.]*\)).*/\1/')
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0.001 else 1)' "$conf" ||
  fail "the switch's conformity $conf is not above the fine threshold (0.001): $line"
# The run may have been reclaimed by the switch to "stop", and FGM places it again only where
# the node's foreign load leaves room: on a busy host that may be never, so it is cancelled.
touch "$TMP/x.stop"
"$HRM" cancel "$heavy" >/dev/null 2>&1 || true
until_ok 60 sh -c "'$HRM' job $heavy --json | grep -q '\"state\": \"\(done\|cancelled\)\"'" ||
  fail "the heavy job did not end"
echo ok

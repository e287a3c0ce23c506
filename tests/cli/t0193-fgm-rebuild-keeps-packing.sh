# FGM's packing by estimate survives the scheduler's rebuilds: tasks placed by their (small) estimate on a node their requests would overflow keep running when a new job arrives and the master rebuilds its scheduler (they are put back holding what FGM charged them, not their request, which would not fit and would stop them).
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --policy fgm
start_agent n1 --cpus 2 --mem 2G --usage-period 200ms
until_ok 60 nodes_up 1 || fail "n1 did not register"

cat >"$TMP/light.sh" <<'X'
while [ ! -e "$1" ]; do sleep 0.05; done
X
field() { # JOB EXPR over the job j
  "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d); print(eval(sys.argv[1]))' "$2"
}
sampled() { [ "$(field "$1" 'j["tasks"][0]["rss_peak"]')" -gt 0 ]; }
learn=$("$HRM" submit --cpus 1 --mem 64M -- sh "$TMP/light.sh" "$TMP/stop") || fail "submit"
until_ok 60 sampled "$learn" || fail "no usage sample reached the master"
touch "$TMP/stop"
expect_exit 0 "$HRM" wait "$learn"
[ "$(field "$learn" 'j["tasks"][0]["estimate"] is not None')" = True ] || fail "nothing learned"

# No more usage reports: FGM plans from its estimate alone, not the shared machine's load.
kill -TERM "$AGENT_n1"; wait "$AGENT_n1" 2>/dev/null || true
start_agent n1 --cpus 2 --mem 2G --usage-period 1h
registered_twice() { [ "$(grep -c "registered with the master" "$TMP/n1.log")" -ge 2 ]; }
until_ok 60 registered_twice || fail "n1 did not come back"
rm "$TMP/stop"
packed=$("$HRM" submit --cpus 1 --mem 64M --count 5 -- sh "$TMP/light.sh" "$TMP/stop") || fail "submit"
until_ok 60 started "$packed" 5 || fail "FGM did not pack 5 one-core tasks on 2 cores by estimate: $(field "$packed" 'j["running"]')"

# A new job: the master rebuilds its scheduler.
other=$("$HRM" submit --cpus 1m --mem 1M -- sh "$TMP/light.sh" "$TMP/stop") || fail "submit"
until_ok 60 started "$other" 1 || fail "the new job did not start"
[ "$(field "$packed" 'sorted(t["attempt"] for t in j["tasks"])')" = "[1, 1, 1, 1, 1]" ] ||
  fail "packed tasks were stopped by the rebuild: attempts $(field "$packed" '[t["attempt"] for t in j["tasks"]]')"
[ "$(field "$packed" 'j["running"]')" = 5 ] || fail "running $(field "$packed" 'j["running"]') of 5"
touch "$TMP/stop"
expect_exit 0 "$HRM" wait "$packed"
expect_exit 0 "$HRM" wait "$other"
echo ok

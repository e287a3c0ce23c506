# FGM's packing by estimate survives the scheduler's rebuilds: tasks placed by their (small) estimate on a node their requests would overflow keep running when a new job arrives and the master rebuilds its scheduler (they are put back holding what FGM charged them, not their request, which would not fit and would stop them).
. "$(dirname "$0")/fgm-lib.sh"
keygen
# One stage per profile, so the estimate hrm job shows is the one FGM plans with.
start_master --policy fgm --param max_stages=1
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
# Learn the command's use; N tasks of it are packed by estimate on the node's 2 cores (their
# estimates within 98 % of the node, so none is refused as the node fills) where 2 fit by request.
# How much CPU the learning run shows depends on the machine's load: when 3 would not fit by
# estimate, another command line is learned.
packs_three() { n=$((1960 / FGM_EST)); [ "$n" -le 5 ] || n=5; [ "$n" -ge 3 ]; }
fgm_learn_with "$TMP/light.sh" packs_three sampled
est=$FGM_EST stop=$FGM_STOP

# No more usage reports: FGM plans from its estimate alone, not the shared machine's load.
kill -TERM "$AGENT_n1"; wait "$AGENT_n1" 2>/dev/null || true
start_agent n1 --cpus 2 --mem 2G --usage-period 1h
registered_twice() { [ "$(grep -c "registered with the master" "$TMP/n1.log")" -ge 2 ]; }
until_ok 60 registered_twice || fail "n1 did not come back"
packed=$("$HRM" submit --cpus 1 --mem 64M --count $n -- sh "$TMP/light.sh" "$stop") || fail "submit"
until_ok 60 started "$packed" $n || fail "FGM did not pack $n one-core tasks on 2 cores by estimate ($est milli-cores): $(field "$packed" 'j["running"]')"

# A new job (a command FGM has not learned: placed by its tiny request): the master rebuilds
# its scheduler.
other=$("$HRM" submit --cpus 1m --mem 1M -- sh "$TMP/light.sh" "$TMP/stop-other") || fail "submit"
until_ok 60 started "$other" 1 || fail "the new job did not start"
[ "$(field "$packed" 'sorted(t["attempt"] for t in j["tasks"])')" = "$(python3 -c "print([1] * $n)")" ] ||
  fail "packed tasks were stopped by the rebuild: attempts $(field "$packed" '[t["attempt"] for t in j["tasks"]]')"
[ "$(field "$packed" 'j["running"]')" = $n ] || fail "running $(field "$packed" 'j["running"]') of $n"
touch "$stop" "$TMP/stop-other"
expect_exit 0 "$HRM" wait "$packed"
expect_exit 0 "$HRM" wait "$other"
echo "ok (learned $est milli-cores; $n tasks packed)"

# hrm events --since N and --limit K page the log after N; a restarted master goes on with the sequence (never a number again), its earlier events kept.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 2 --mem 2G
until_ok 60 nodes_up 1 || fail "node did not register"
for i in 1 2 3; do
  id=$("$HRM" submit -- true) || fail "submit"
  expect_exit 0 timeout 120 "$HRM" wait "$id"
done
seqs() { python3 -c 'import json, sys
print(" ".join(str(json.loads(l)["seq"]) for l in sys.stdin))'; }
"$HRM" events --json | seqs >"$TMP/all"
read -ra all <"$TMP/all"
[ "${#all[@]}" -ge 10 ] || fail "expected 10 or more events, got ${#all[@]}"
# --since the third: the events after it, in order; --limit 2: the first two of those.
"$HRM" events --json --since "${all[2]}" | seqs >"$TMP/after"
[ "$(cat "$TMP/after")" = "${all[*]:3}" ] || fail "--since ${all[2]}: $(cat "$TMP/after")"
"$HRM" events --json --since "${all[2]}" --limit 2 | seqs >"$TMP/page"
[ "$(cat "$TMP/page")" = "${all[*]:3:2}" ] || fail "--limit 2: $(cat "$TMP/page")"
last=${all[-1]}
expect_exit 0 "$HRM" events --json --since "$last"
[ ! -s "$TMP/out" ] || fail "events after the last one"

# A restart: the old events stay, the new ones come after them.
kill -TERM "$MASTER"; wait "$MASTER" || true
start_master
until_ok 60 nodes_up 1 || fail "node did not come back"
id=$("$HRM" submit -- true) || fail "submit after restart"
expect_exit 0 timeout 120 "$HRM" wait "$id"
"$HRM" events --json | seqs >"$TMP/all2"
read -ra all2 <"$TMP/all2"
[ "${all2[*]:0:${#all[@]}}" = "${all[*]}" ] || fail "events before the restart lost or renumbered"
"$HRM" events --json --since "$last" >"$TMP/new"
matches "\"job\":$id,\"kind\":\"job_finished\"" "$TMP/new" || fail "the new job's events are not after $last"
python3 - "$TMP/new" "$last" <<'P' || fail "sequence after the restart"
import json, sys
seqs = [json.loads(l)["seq"] for l in open(sys.argv[1])]
assert seqs and seqs[0] > int(sys.argv[2]) and seqs == sorted(set(seqs)), seqs
P

# Retention: a master started with --events-keep 3 keeps only the 3 latest of the earlier events.
"$HRM" events --json | seqs >"$TMP/all3"
read -ra before <"$TMP/all3"
kill -TERM "$MASTER"; wait "$MASTER" || true
start_master --events-keep 3
first_after() { [ "$("$HRM" events --json --limit 1 | seqs)" -gt "$1" ]; }
until_ok 60 first_after "${before[-4]}" || fail "--events-keep 3 kept more"
# The first retention pass runs at the master's first tick; the agent's re-registration may log
# its node_up before it, and that event then counts among the 3 latest. Nothing else happens.
"$HRM" events --json >"$TMP/kept"
python3 - "$TMP/kept" "${before[*]}" <<'P' || fail "--events-keep 3 kept $(cat "$TMP/kept")"
import json, sys
before = [int(x) for x in sys.argv[2].split()]
evs = [json.loads(l) for l in open(sys.argv[1])]
old = [e["seq"] for e in evs if e["seq"] <= before[-1]]
new = [e for e in evs if e["seq"] > before[-1]]
if old == before[-3:]:
    pass
else:
    # the node_up came first: it is the third of the latest 3
    assert old == before[-2:] and new and new[0]["kind"] == "node_up", (old, new)
P
echo ok

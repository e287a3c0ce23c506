# Stream jobs, bad input: a count over what the up nodes can run at once is refused naming tasks[i].count and the capacity; an unknown kind names the field; nothing is half-submitted; distributed scheduling refuses stream jobs with the reason.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 2 --mem 1G
start_agent n2 --cpus 2 --mem 2G
until_ok 60 nodes_up 2 || fail "nodes did not register"
njobs() { "$HRM" jobs --all --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
# Unknown kinds: the client, from flags and from a file, and the master itself.
expect_exit 2 "$HRM" submit --kind service -- true
grep -q "kind: " "$TMP/err" || fail "--kind service: $(cat "$TMP/err")"
echo '{"kind": 1, "tasks": [{"cmd": "true"}]}' >"$TMP/k.json"
expect_exit 2 "$HRM" submit "$TMP/k.json"
grep -q "kind: " "$TMP/err" || fail "kind 1 in a file: $(cat "$TMP/err")"
echo '{"v": 1, "type": "submit", "req": 7, "job": {"kind": "daemon", "tasks": [{"cmd": "true"}]}}' >"$TMP/raw.json"
expect_exit 0 timeout 60 "$HRM" raw "$TMP/raw.json"
grep -q '"code":"bad_spec".*kind: ' "$TMP/out" || fail "the master took an unknown kind: $(cat "$TMP/out")"
# Capacity: 2 + 2 one-CPU tasks at once.
expect_exit 2 "$HRM" submit --kind stream --count 5 -- sleep 600
grep -q "tasks\[0\].count: .*at most 4 " "$TMP/err" || fail "count 5: $(cat "$TMP/err")"
# Memory bounds it: 600M tasks, one on n1 and three on n2, in the second group of a file.
cat >"$TMP/m.json" <<J
{"kind": "stream", "tasks": [{"cmd": "sleep 600"}, {"cmd": "sleep 600", "cpus": "100m", "mem": "600M", "count": 5}]}
J
expect_exit 2 "$HRM" submit "$TMP/m.json"
grep -q "tasks\[1\].count: .*at most 4 " "$TMP/err" || fail "memory-bound count: $(cat "$TMP/err")"
[ "$(njobs)" -eq 0 ] || fail "a refused submission left a job"
# At capacity is fine, and runs all at once; a batch job of the same count waits instead.
s=$("$HRM" submit --kind stream --count 4 -- sleep 600) || fail "a stream job at capacity was refused"
until_ok 60 started "$s" 4 || fail "the 4 stream tasks did not all start"
b=$("$HRM" submit --count 5 -- true) || fail "a batch job over capacity was refused"
"$HRM" cancel "$s" >/dev/null || fail "cancel"
expect_exit 0 timeout 120 "$HRM" wait "$b"
[ "$(njobs)" -eq 2 ] || fail "$(njobs) jobs, expected 2"
# Distributed scheduling has no restarts: a stream job is refused there, with the reason.
kill -TERM "$MASTER"
wait "$MASTER" 2>/dev/null || true
start_master --policy dhrm
expect_exit 2 "$HRM" submit --kind stream -- true
grep -q "stream jobs need the central path" "$TMP/err" || fail "dhrm took a stream job: $(cat "$TMP/err")"

# JSON fields present and typed (hrm job and hrm jobs), --time and "time" checked at submission,
# and expected run times learnt from the same user's finished runs of the same command (kept
# across a master restart).
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 1 --mem 4G
until_ok 60 nodes_up 1 || fail "node did not register"
field() { "$HRM" job "$1" --json | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin).get(sys.argv[1], "absent")))' "$2"; }

# Bad expected run times: refused, naming the flag or the field; nothing submitted.
expect_exit 2 "$HRM" submit --time soon -- true
grep -qx "hrm submit: --time: expected a positive duration like 90s or 2h" "$TMP/err" || { cat "$TMP/err" >&2; fail "--time soon: message"; }
expect_exit 2 "$HRM" submit --time 0 -- true
echo '{"tasks": [{"cmd": "true", "time": 30}]}' >"$TMP/bad.json"
expect_exit 2 "$HRM" submit "$TMP/bad.json"
grep -q "tasks\[0\].time: expected a positive duration" "$TMP/err" || { cat "$TMP/err" >&2; fail "time 30: message"; }
[ "$("$HRM" jobs --all --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')" = 0 ] \
  || fail "a refused job was submitted"

# The command's first run ends at once (its STOP file exists): that is its history.
touch "$TMP/now"
cmd='touch "$GO"; while [ ! -e "$STOP" ]; do sleep 0.05; done'
h=$("$HRM" submit --env STOP="$TMP/now" --env GO="$TMP/go0" -- sh -c "$cmd") || fail "submit h"
expect_exit 0 timeout 60 "$HRM" wait "$h"
# A restarted master learns the history again from its job table.
kill -TERM "$MASTER"
wait "$MASTER" 2>/dev/null || true
start_master
until_ok 60 nodes_up 1 || fail "node did not register with the restarted master"
# The same command again, now holding the node; p waits for it.  p's estimate is known from
# the history (the holder is past its expected run: it is taken to end now).
a=$("$HRM" submit --env STOP="$TMP/stop" --env GO="$TMP/go1" -- sh -c "$cmd") || fail "submit a"
until_ok 60 test -e "$TMP/go1" || fail "a did not start"
p=$("$HRM" submit -- true) || fail "submit p"
"$HRM" job "$p" --json >"$TMP/p.json"
python3 - "$TMP/p.json" <<'P' || fail "p: fields"
import json, sys
j = json.load(open(sys.argv[1]))
assert isinstance(j["pending_reason"], str) and j["pending_reason"], j
assert isinstance(j["estimated_start_s"], int) and j["estimated_start_s"] >= 0, j
P
# A running job: both present and null.
[ "$(field "$a" pending_reason)" = null ] && [ "$(field "$a" estimated_start_s)" = null ] \
  || fail "running job a: reason or estimate not null"
# hrm jobs --json: every job has estimated_start_s, an integer only for the pending one.
"$HRM" jobs --json | python3 -c '
import json, sys
for j in json.load(sys.stdin):
    e = j["estimated_start_s"]
    assert (isinstance(e, int)) == (j["id"] == int(sys.argv[1])), j
' "$p" || fail "hrm jobs --json: estimated_start_s"
touch "$TMP/stop"
expect_exit 0 timeout 60 "$HRM" wait "$p"

# Another command, never run: the job behind it has no estimate.
a2=$("$HRM" submit -- sh -c "touch '$TMP/go2'; while [ ! -e '$TMP/stop2' ]; do sleep 0.05; done") || fail "submit a2"
until_ok 60 test -e "$TMP/go2" || fail "a2 did not start"
p2=$("$HRM" submit -- true) || fail "submit p2"
[ "$(field "$p2" estimated_start_s)" = null ] || fail "p2: an estimate behind a command never run"
touch "$TMP/stop2"
expect_exit 0 timeout 60 "$HRM" wait "$p2"
echo "ok"

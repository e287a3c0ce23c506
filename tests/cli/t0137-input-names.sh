# The master refuses control characters in names and HRM_ env names; listings escape control characters of names already stored.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
start_agent n1 --cpus 2 --no-cgroup
until_ok 60 nodes_up 1 || fail "agent did not register"

# Sent around the client's own checks (hrm raw): the master refuses them too.
printf '{"v":1,"type":"submit","req":5,"job":{"name":"a\\u001b[2Jb","tasks":[{"cmd":"true"}]}}' >"$TMP/name.json"
printf '{"v":1,"type":"submit","req":6,"job":{"name":"e","tasks":[{"cmd":"true","env":{"HRM_TASK_ID":"9"}}]}}' >"$TMP/env.json"
expect_exit 0 "$HRM" raw "$TMP/name.json" "$TMP/env.json"
grep "name.json" "$TMP/out" | matches '"code":"bad_spec".*name: must not contain control characters' || fail "name: $(cat "$TMP/out")"
grep "env.json" "$TMP/out" | matches '"code":"bad_spec".*HRM_TASK_ID' || fail "env: $(cat "$TMP/out")"

# A task sees hrm's own values.
expect_exit 0 "$HRM" submit --wait --name plain -- sh -c 'echo "id=$HRM_JOB_ID task=$HRM_TASK_ID"'
expect_exit 0 "$HRM" logs 1
grep -q "id=1 task=0" "$TMP/out" || fail "task environment: $(cat "$TMP/out")"

# A name stored before names were checked: listings show it escaped, never raw.
kill -TERM "$MASTER"; until_ok 30 sh -c "! kill -0 $MASTER 2>/dev/null" || fail "master did not stop"
python3 - "$S/hrm.db" <<'P'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
name = "e\x1b[1m\x9b"
spec = json.loads(db.execute("SELECT spec FROM jobs WHERE id = 1").fetchone()[0])
spec["name"] = name
db.execute("UPDATE jobs SET name = ?, spec = ? WHERE id = 1", (name, json.dumps(spec)))
db.commit()
P
start_master
until_ok 60 "$HRM" jobs || fail "master did not come back"
for verb in jobs "job 1"; do
  expect_exit 0 "$HRM" $verb
  grep -q 'e\\x1b\[1m\\xc2\\x9b' "$TMP/out" || fail "$verb: name not escaped: $(cat -v "$TMP/out")"
  ! grep -q $'\033' "$TMP/out" || fail "$verb: raw escape printed"
done
expect_exit 0 "$HRM" jobs --json
grep -qi 'e\\u001b\[1m' "$TMP/out" || fail "json: $(cat -v "$TMP/out")"
echo ok

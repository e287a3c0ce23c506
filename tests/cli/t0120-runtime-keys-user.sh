# A job runs as the account its client key maps to in authorized (user=), never as a label the client picks.
. "$(dirname "$0")/rtlib.sh"
keygen
me=$(id -un)
grep -Eq "^client [^ ]+ user=$me admin\$" "$S/keys/authorized" || fail "hrm keygen did not map the client key to $me"
start_master
start_agent n1 --cpus 2
until_ok 60 nodes_up 1 || fail "agent did not register"
job_user() { "$HRM" job "$1" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); print(d.get("job", d)["user"])'; }
njobs() { "$HRM" jobs --all --json | python3 -c 'import json, sys
d = json.load(sys.stdin); print(len(d["jobs"] if isinstance(d, dict) else d))'; }

# No label: the key's account.
id=$("$HRM" submit -- true) || fail "submit"
[ "$(job_user "$id")" = "$me" ] || fail "job $id runs as '$(job_user "$id")', not the key's $me"
# Another account named in the job: refused, saying whose key it is; nothing is made of it.
printf '{"user": "mallory", "tasks": [{"cmd": "true"}]}\n' >"$TMP/other.json"
expect_exit 1 "$HRM" submit "$TMP/other.json"
grep -q "user 'mallory'" "$TMP/err" || fail "the refusal does not name the label"
grep -q "submits as '$me'" "$TMP/err" || fail "the refusal does not name the key's account"
[ "$(njobs)" -eq 1 ] || fail "a refused job was recorded"
# The key's own account, written out: accepted.
printf '{"user": "%s", "tasks": [{"cmd": "true"}]}\n' "$me" >"$TMP/same.json"
expect_exit 0 "$HRM" submit "$TMP/same.json"

# A key for another account, added while the master runs: admitted without a restart, and its
# jobs run as that account.  The user points the CLI at their folder with HRM_KEYS.
"$HRM" keygen --client bob --user daemon "$S/keys" >/dev/null || fail "keygen --client"
grep -Eq "^client [^ ]+ user=daemon\$" "$S/keys/authorized" || fail "no line for the new client key"
mkdir "$TMP/bob"; cp "$S/keys/master.pub" "$TMP/bob/"; cp "$S/keys/client-bob.key" "$TMP/bob/client.key"
id=$(HRM_KEYS="$TMP/bob" "$HRM" submit -- true) || fail "submit with bob's key"
[ "$(job_user "$id")" = "daemon" ] || fail "bob's job runs as '$(job_user "$id")', not daemon"
expect_exit 1 env HRM_KEYS="$TMP/bob" "$HRM" submit "$TMP/same.json"
grep -q "submits as 'daemon'" "$TMP/err" || fail "bob's key took the label $me"
# Bad names are refused up front, and an existing key is not replaced without --force.
expect_exit 1 "$HRM" keygen --client bob --user daemon "$S/keys"
grep -q "client-bob.key exists" "$TMP/err" || fail "an existing client key was not kept"
expect_exit 1 "$HRM" keygen --client 'a b' "$S/keys"
grep -q "\-\-client 'a b'" "$TMP/err" || fail "a bad key name was accepted"

# Revoking: bob's line removed from authorized; the running master refuses his key from then on.
grep -vF -e "$(cat "$S/keys/client-bob.pub")" "$S/keys/authorized" >"$TMP/authorized"
cat "$TMP/authorized" >"$S/keys/authorized"
expect_exit 1 env HRM_KEYS="$TMP/bob" "$HRM" nodes --timeout 10
grep -q "refused this key" "$TMP/err" || fail "a removed key was still admitted"
expect_exit 0 "$HRM" nodes

# A client line without user= (a folder made by an older hrm): the master refuses to start and
# names the line, rather than guess whose jobs they are.
kill -TERM "$MASTER"; wait "$MASTER" 2>/dev/null || true
sed -i 's/^\(client [^ ]*\) user=.*$/\1/' "$S/keys/authorized"
expect_exit 1 timeout 60 "$HRM" master --state "$S"
grep -q "authorized:[0-9]*: a client key needs the account" "$TMP/err" || fail "no message naming the line"

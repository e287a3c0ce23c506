# A client key acts on its own account's jobs only: another account's key may list a job but not cancel it, read its output or see its environment; an admin key (the default client.key, or --client NAME --admin) may do all of it; HTTP requests act as the default client key, so without its admin word they may not either, and with the read-only token never as an admin; a bad word on a client line of authorized is refused with its line.
. "$(dirname "$0")/http-lib.sh"
need python3
keygen
start_master --http 127.0.0.1:0
until_ok 60 test -s "$S/http" || fail "no DIR/http"
start_agent n1 --cpus 4
until_ok 60 nodes_up 1 || fail "agent did not register"

# Key folders of two users and an operator, each with master.pub and its key as client.key.
folder() { # NAME: $TMP/NAME-keys holding client-NAME's key as client.key
  mkdir -m 700 "$TMP/$1-keys"
  cp -p "$S/keys/master.pub" "$TMP/$1-keys/"
  cp -p "$S/keys/client-$1.key" "$TMP/$1-keys/client.key"
  cp -p "$S/keys/client-$1.pub" "$TMP/$1-keys/client.pub"
}
"$HRM" keygen --client bob --user nobody "$S/keys" >/dev/null || fail "keygen --client bob"
"$HRM" keygen --client eve --user daemon "$S/keys" >/dev/null || fail "keygen --client eve"
"$HRM" keygen --client ops --user daemon --admin "$S/keys" >"$TMP/ops.out" || fail "keygen --admin"
grep -q "admin" "$TMP/ops.out" || fail "keygen does not say the key is admin"
grep -Eq "^client [^ ]+ user=daemon admin$" "$S/keys/authorized" || fail "no admin line for ops"
grep -Eq "^client [^ ]+ user=nobody$" "$S/keys/authorized" || fail "bob's line is not plain"
for u in bob eve ops; do folder $u; done
as() { local u=$1; shift; HRM_KEYS="$TMP/$u-keys" "$HRM" "$@"; }

job=$(as bob submit --env TOKEN=s3cr3t-0326 -- sh -c 'echo out-0326; exec sleep 3600') ||
  fail "bob's submit"
until_ok 60 started "$job" 1 || fail "bob's job did not start"
printed() { [ "$(as bob logs "$job" --task 0)" = "out-0326" ]; }
until_ok 60 printed || fail "bob cannot read his own job's output"

# HTTP requests act as the default client key (admin) with the read-write token, and never as an
# admin key with the read-only one (a dashboard's): that one sees no other account's environment
# or output.
[ "$(api GET "/api/v1/jobs/$job")" = 200 ] || fail "HTTP GET of bob's job: $(cat "$TMP/resp")"
grep -q "s3cr3t-0326" "$TMP/resp" || fail "the read-write token does not see bob's environment"
[ "$(api GET "/api/v1/jobs/$job/tasks/0/log")" = 200 ] || fail "the read-write token cannot read bob's output"
[ "$(api GET "/api/v1/jobs/$job" --token ro)" = 200 ] || fail "HTTP GET with the read-only token"
grep -q "s3cr3t-0326" "$TMP/resp" && fail "the read-only token sees bob's environment"
[ "$(field spec tasks 0 env_hidden)" = True ] || fail "env_hidden for the read-only token"
[ "$(api GET "/api/v1/jobs/$job/tasks/0/log" --token ro)" = 403 ] || fail "the read-only token read bob's output"

# Eve lists it, but may not cancel it, read its output or see its environment.
as eve jobs --all --json | grep -q "\"id\": *$job" || fail "eve cannot list bob's job"
expect_exit 1 as eve cancel "$job"
grep -q "it is nobody's, and this client key acts for 'daemon' only" "$TMP/err" ||
  fail "eve's cancel was not refused with the reason: $(cat "$TMP/err")"
grep -q "refused to cancel job $job of nobody for a key of daemon" "$TMP/master.log" ||
  fail "the master did not log the refusal"
"$HRM" job "$job" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
assert j["state"] == "running", j["state"]' || fail "eve's refused cancel changed the job"
expect_exit 1 as eve logs "$job" --task 0
grep -q "read the output of job $job" "$TMP/err" || fail "eve read bob's output: $(cat "$TMP/out")"
as eve job "$job" --json >"$TMP/eve.json" || fail "eve cannot see bob's job"
grep -q "s3cr3t-0326" "$TMP/eve.json" && fail "eve sees bob's environment"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); g = d.get("job", d)["spec"]["tasks"][0]
assert g["env"] == {} and g["env_hidden"] is True, g' "$TMP/eve.json" ||
  fail "bob's environment is not marked hidden for eve"
as bob job "$job" --json | grep -q "s3cr3t-0326" || fail "bob does not see his own environment"

# Eve's own job is hers to cancel.
mine=$(as eve submit -- sleep 3600) || fail "eve's submit"
expect_exit 0 as eve cancel "$mine"

# An admin key reads and cancels anyone's job: ops (--admin), then the default client.key.
[ "$(as ops logs "$job" --task 0)" = "out-0326" ] || fail "the admin key cannot read bob's output"
as ops job "$job" --json | grep -q "s3cr3t-0326" || fail "the admin key does not see the environment"
expect_exit 0 "$HRM" cancel "$job"
"$HRM" job "$job" --json | python3 -c 'import json, sys
d = json.load(sys.stdin); j = d.get("job", d)
assert j["state"] == "cancelled", j["state"]' || fail "the default key's cancel did not take"

# --admin without --client is a usage error; a client line with another word is refused by the
# master's next read of authorized, which keeps the previous list.
expect_exit 2 "$HRM" keygen --admin "$S/keys"
grep -q "\-\-admin marks a client key added with --client" "$TMP/err" || fail "no reason for --admin alone"
sed -i 's/^\(client [^ ]* user=nobody\)$/\1 root/' "$S/keys/authorized"
as bob jobs >/dev/null 2>&1 || true # a handshake: the master re-reads the file
refused() { grep -q "the only word a client key takes after user=ACCOUNT is admin" "$TMP/master.log"; }
until_ok 60 refused || fail "a client line with another word was not refused with its reason"
as bob jobs >/dev/null || fail "the previous list did not stay after a bad version"

# HTTP requests act as the default client key: without 'admin' on its line (a key folder of an
# older hrm), another account's job may be listed but not cancelled or read over HTTP either.
python3 - "$S/keys/authorized" "$(cat "$S/keys/client.pub")" <<'PY' || fail "editing authorized"
import sys
path, default = sys.argv[1], sys.argv[2]
out = []
for line in open(path):
    w = line.split()
    if w[:1] == ["client"] and w[-1] in ("root", "admin") and (w[-1] == "root" or w[1] == default):
        line = " ".join(w[:-1]) + "\n"  # bob's bad word, and the default key's admin, go
    out.append(line)
open(path, "w").write("".join(out))
PY
kill -KILL "$MASTER"
start_master --http 127.0.0.1:0
until_ok 60 test -s "$S/http" || fail "no DIR/http"
job2=$(as bob submit --env TOKEN=s3cr3t-0326 -- sh -c 'echo out2; exec sleep 3600') || fail "submit 2"
until_ok 60 started "$job2" 1 || fail "bob's second job did not start"
[ "$(api POST "/api/v1/jobs/$job2/cancel")" = 403 ] || fail "HTTP cancel of bob's job: $(cat "$TMP/resp")"
grep -q "it is nobody's" "$TMP/resp" || fail "the 403 does not say whose job it is"
[ "$(api GET "/api/v1/jobs/$job2/tasks/0/log")" = 403 ] || fail "HTTP read of bob's output"
[ "$(api GET "/api/v1/jobs/$job2")" = 200 ] || fail "HTTP GET of bob's job"
grep -q "s3cr3t-0326" "$TMP/resp" && fail "HTTP shows bob's environment"
[ "$(field spec tasks 0 env_hidden)" = True ] || fail "env_hidden over HTTP"
expect_exit 0 as bob cancel "$job2"
echo ok

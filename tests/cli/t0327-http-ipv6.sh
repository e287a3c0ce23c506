# hrm master --http takes an IPv6 address in brackets: [::1]:0 serves the API there and writes http://[::1]:PORT to DIR/http, which a restarted master takes back; [::]:PORT takes IPv4 connections too; an address without brackets, an IPv4 one in brackets or a missing bracket is refused by name. (Without an IPv6 loopback on the host: the refusal to listen is clear.)
. "$(dirname "$0")/http-lib.sh"
need python3
keygen
for bad in "[::1" "[::1]8080" "[127.0.0.1]:80" "[]:80" "::1:80"; do
  expect_exit 1 "$HRM" master --state "$S" --http "$bad"
  grep -qF -- "--http '$bad'" "$TMP/err" || fail "bad --http '$bad' not named: $(cat "$TMP/err")"
done
matches -- "an IPv6 one goes in brackets" "$TMP/err" || fail "no hint for an IPv6 address without brackets"

if ! grep -q "^00000000000000000000000000000001 " /proc/net/if_inet6 2>/dev/null; then
  expect_exit 1 "$HRM" master --state "$S" --http "[::1]:0"
  matches "cannot listen there" "$TMP/err" || fail "no clear refusal without IPv6"
  echo ok
  exit 0
fi

start_master --http "[::1]:0"
until_ok 60 test -s "$S/http" || fail "no DIR/http"
matches -x 'http://\[::1\]:[0-9]*' "$S/http" || fail "DIR/http: $(cat "$S/http")"
[ "$(api GET /healthz --token none)" = 200 ] || fail "/healthz over IPv6"
[ "$(api GET /api/v1/jobs)" = 200 ] || fail "GET /api/v1/jobs over IPv6"
matches "HTTP API on http://\[::1\]:" "$TMP/master.log" || fail "the log does not give the IPv6 URL"
url=$(cat "$S/http")
kill -TERM "$MASTER"
rc=0; wait "$MASTER" || rc=$?
[ "$rc" -eq 0 ] || fail "the master stopped with status $rc"
start_master --http "[::1]:0"
until_ok 60 test "$(cat "$S/http")" = "$url" || fail "a restarted master took another port: $(cat "$S/http"), was $url"

# [::]: every address of the host, IPv4 ones too (dual stack).
kill -TERM "$MASTER"; wait "$MASTER" || true
port=$(sed 's/.*://' "$S/http")
start_master --http "[::]:$port"
until_ok 60 grep -q "HTTP API on http://\[::\]:$port" "$TMP/master.log" || fail "no dual-stack server on $port"
echo "http://127.0.0.1:$port" >"$S/http" # the IPv4 loopback, to the same server
[ "$(api GET /healthz --token none)" = 200 ] || fail "[::] does not take IPv4 connections"
echo ok

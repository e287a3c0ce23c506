# Helpers of the HTTP API tests (t0210-t0216): a cluster serving the API, requests through tests/cli/httpapi.py.
. "$(dirname "$0")/rtlib.sh"
H="$HRM_ROOT/tests/cli/httpapi.py"
# http_cluster MASTER-FLAGS...: keys, a master serving the API on a free port with the flags, one
# agent n1 (2 CPUs, 2G); waits until n1 is up and DIR/http is written
http_cluster() {
  keygen
  start_master --http 127.0.0.1:0 "$@"
  start_agent n1 --cpus 2 --mem 2G
  until_ok 60 nodes_up 1 || fail "node did not register"
  until_ok 60 test -s "$S/http" || fail "no DIR/http"
}
# api METHOD PATH [BODY] [--token rw|ro|none|VALUE] [--header 'K: V']: prints the HTTP status;
# the body in $TMP/resp, the headers in $TMP/hdrs
api() { python3 "$H" "$S" "$@" >"$TMP/raw" 2>"$TMP/hdrs"; tail -n +2 "$TMP/raw" >"$TMP/resp"; head -1 "$TMP/raw"; }
# field KEY...: a value of the JSON in $TMP/resp (list indices as numbers), JSON for containers
field() { python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v) if isinstance(v, (dict, list)) or v is None else v)' "$TMP/resp" "$@"; }

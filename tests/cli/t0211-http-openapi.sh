# docs/api.yaml against the server: every documented path and method answers with a documented status and the required fields of its schema, 401 without a token, 404 for a job that does not exist, 405 with an Allow header that lists exactly the documented methods.
. "$(dirname "$0")/http-lib.sh"
python3 -c 'import yaml' 2>/dev/null || fail "needs python3-yaml (scripts/install-deps installs it)"
http_cluster
id=$("$HRM" submit -- sh -c 'echo out; echo err >&2') || fail "submit"
expect_exit 0 timeout 120 "$HRM" wait "$id"
python3 "$HRM_ROOT/tests/cli/http_openapi.py" "$HRM_ROOT/docs/api.yaml" "$S" "$id" >"$TMP/check" 2>&1 ||
  { cat "$TMP/check" >&2; fail "the server does not match docs/api.yaml"; }
matches "api.yaml: 9 paths checked" "$TMP/check" || fail "not every path was checked: $(tail -3 "$TMP/check")"

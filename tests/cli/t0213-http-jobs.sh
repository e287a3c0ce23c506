# The HTTP API's jobs: POST /api/v1/jobs answers 201 with the id once the job is durable (hrm job sees it; an Idempotency-Key sent twice makes one job), GET jobs filters by state, user and queue and pages with a cursor, GET jobs/{id} pages its tasks and says why a pending job waits, POST jobs/{id}/cancel takes effect, and the error text of a bad job is hrm submit's.
. "$(dirname "$0")/http-lib.sh"
http_cluster

# Submit: 201, Location, and the job is in the store (hrm sees it through ZeroMQ).
[ "$(api POST /api/v1/jobs '{"name": "web-a", "queue": "qa", "tasks": [{"cmd": ["true"], "count": 3, "cpus": 1}]}')" = 201 ] ||
  fail "POST jobs: $(cat "$TMP/resp")"
a=$(field id)
matches -i "^Location: /api/v1/jobs/$a" "$TMP/hdrs" || fail "no Location"
expect_exit 0 timeout 120 "$HRM" wait "$a"
expect_exit 0 "$HRM" job "$a" --json
matches '"name": "web-a"' "$TMP/out" || fail "hrm job does not see the job submitted over HTTP"
# Idempotency-Key: the same key twice is one job.
[ "$(api POST /api/v1/jobs '{"name": "keyed", "tasks": [{"cmd": ["true"]}]}' --header 'Idempotency-Key: k-0213')" = 201 ] || fail "keyed 1"
k1=$(field id)
[ "$(api POST /api/v1/jobs '{"name": "keyed", "tasks": [{"cmd": ["true"]}]}' --header 'Idempotency-Key: k-0213')" = 201 ] || fail "keyed 2"
[ "$(field id)" = "$k1" ] || fail "an Idempotency-Key sent twice made two jobs"
# The same error text as hrm submit FILE.
printf '{"tasks": [{"cmd": ["true"], "mem": "lots"}]}' >"$TMP/bad.json"
expect_exit 2 "$HRM" submit "$TMP/bad.json"
cli_err=$(sed "s|^hrm submit: $TMP/bad.json: ||" "$TMP/err")
[ "$(api POST /api/v1/jobs "$(cat "$TMP/bad.json")")" = 400 ] || fail "bad job accepted"
[ "$(field error message)" = "$cli_err" ] || fail "error text differs: '$(field error message)' vs hrm submit's '$cli_err'"

# A job that cannot start while another holds the node: pending, with a reason.
# (It holds the node until cancelled, however slowly the machine runs the test.)
hold="while [ ! -e $TMP/never-0213 ]; do sleep 0.1; done"
[ "$(api POST /api/v1/jobs "{\"name\": \"hog\", \"queue\": \"qb\", \"tasks\": [{\"cmd\": [\"sh\", \"-c\", \"$hold\"], \"cpus\": 2}]}")" = 201 ] || fail "hog: $(cat "$TMP/resp")"
hog=$(field id)
until_ok 60 started "$hog" 1 || fail "hog never started"
[ "$(api POST /api/v1/jobs '{"name": "waits", "queue": "qb", "tasks": [{"cmd": ["true"], "count": 5, "cpus": 1}]}')" = 201 ] || fail "waits"
w=$(field id)
[ "$(api GET "/api/v1/jobs/$w?limit=2")" = 200 ] || fail "GET job"
[ "$(field state)" = pending ] || fail "waits is not pending"
[ "$(field pending_reason)" != null ] || fail "no pending_reason: $(cat "$TMP/resp")"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))["estimated_start_s"]' "$TMP/resp" || fail "no estimated_start_s"
[ "$(field tasks_next)" = 2 ] && [ "$(field tasks 1 task)" = 1 ] || fail "first page of tasks: $(field tasks)"
[ "$(api GET "/api/v1/jobs/$w?from=2&limit=2")" = 200 ] && [ "$(field tasks 0 task)" = 2 ] || fail "second page of tasks"
[ "$(api GET "/api/v1/jobs/$w?limit=0")" = 400 ] || fail "limit=0 accepted"

# Filters and cursor paging (newest first).
listed() { api GET "/api/v1/jobs?$1" >/dev/null; python3 -c 'import json, sys
print(" ".join(str(j["id"]) for j in json.load(open(sys.argv[1]))["jobs"]))' "$TMP/resp"; }
running_is_hog() { [ "$(listed "state=running")" = "$hog" ]; }
until_ok 30 running_is_hog || fail "state=running: $(listed state=running)"
[ "$(listed "queue=qb")" = "$w $hog" ] || fail "queue=qb: $(listed queue=qb)"
[ "$(listed "queue=qa&state=done")" = "$a" ] || fail "queue=qa&state=done: $(listed 'queue=qa&state=done')"
[ -z "$(listed "user=nobody-0213")" ] || fail "user filter"
api GET "/api/v1/jobs?limit=1" >/dev/null; me=$(field jobs 0 user)
[ "$(listed "user=$me" | wc -w)" -ge 4 ] || fail "user=$me lists too few"
[ "$(api GET "/api/v1/jobs?state=bogus")" = 400 ] || fail "state=bogus accepted"
all=$(listed "limit=1000")
paged="" cursor=""
for _ in $(seq 20); do
  api GET "/api/v1/jobs?limit=2${cursor:+&cursor=$cursor}" >/dev/null
  paged="$paged $(python3 -c 'import json, sys
print(" ".join(str(j["id"]) for j in json.load(open(sys.argv[1]))["jobs"]))' "$TMP/resp")"
  cursor=$(field next)
  [ "$cursor" != null ] || break
done
[ "$(echo $paged)" = "$all" ] || fail "pages '$paged' differ from the list '$all'"

# Cancel: takes effect; a job that does not exist is 404.
[ "$(api POST "/api/v1/jobs/$hog/cancel")" = 200 ] && [ "$(field state)" = cancelled ] || fail "cancel: $(cat "$TMP/resp")"
expect_exit 0 "$HRM" job "$hog" --json
matches '"state": "cancelled"' "$TMP/out" || fail "hrm job: the job is not cancelled"
expect_exit 0 timeout 120 "$HRM" wait "$w"
[ "$(api POST /api/v1/jobs/99999/cancel)" = 404 ] || fail "cancel of a job that does not exist"

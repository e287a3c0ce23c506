# The HTTP API's task output and event log: a 3 MB stdout (several 256 KiB chunks from the node) comes back byte for byte; Range (A-B, A-, -N) gives 206 with Content-Range, a range past the end 416; offset/length; stderr; a task that has not started is 404 not_started; GET events pages with since; an SSE stream started before a job sees its events live, in order, and resumes after Last-Event-ID.
. "$(dirname "$0")/http-lib.sh"
http_cluster

# The SSE stream, from the end of the log, before anything happens.
python3 - "$HRM_ROOT/tests/cli" "$S" "$TMP/sse" <<'P' >"$TMP/sse.out" 2>&1 &
import sys
sys.path.insert(0, sys.argv[1])
import httpapi
host, port = httpapi.address(sys.argv[2])
c = httpapi.http.client.HTTPConnection(host, port, timeout=120)
c.request("GET", "/api/v1/events", headers={"Authorization": "Bearer " + httpapi.token(sys.argv[2], "rw"),
                                            "Accept": "text/event-stream"})
r = c.getresponse()
assert r.status == 200 and r.getheader("Content-Type") == "text/event-stream", r.status
out = open(sys.argv[3], "w")
for line in r:
    out.write(line.decode())
    out.flush()
    if line.startswith(b"event: job_finished"):
        break
P
SSE=$!; PIDS+=("$SSE")
# The reader makes its file once the server has answered 200: the stream starts at the log's end.
until_ok 60 test -e "$TMP/sse" || fail "the event stream did not open"

id=$("$HRM" submit -- sh -c 'python3 -c "import sys; sys.stdout.write(\"\".join(\"line %07d\\n\" % i for i in range(250000)))"; echo oops >&2') ||
  fail "submit"
expect_exit 0 timeout 120 "$HRM" wait "$id"
python3 - "$HRM_ROOT/tests/cli" "$S" "$id" <<'P' >"$TMP/logs.out" 2>&1 || { cat "$TMP/logs.out" >&2; fail "log reads"; }
import json, sys
sys.path.insert(0, sys.argv[1])
import httpapi
state, job = sys.argv[2], int(sys.argv[3])
want = "".join("line %07d\n" % i for i in range(250000)).encode()
path = "/api/v1/jobs/%d/tasks/0/log" % job
s, h, b = httpapi.request(state, "GET", path)
assert s == 200 and b == want, "whole output: %d, %d bytes of %d" % (s, len(b), len(want))
assert h.get("X-Output-Size") == str(len(want)), h
for rng, lo, hi in [("bytes=10-29", 10, 30), ("bytes=2999990-", 2999990, len(want)),
                    ("bytes=-13", len(want) - 13, len(want)), ("bytes=262140-524300", 262140, 524301)]:
    s, h, b = httpapi.request(state, "GET", path, headers={"Range": rng})
    assert s == 206 and b == want[lo:hi], "%s: %d %r" % (rng, s, b[:40])
    assert h.get("Content-Range") == "bytes %d-%d/%d" % (lo, hi - 1, len(want)), (rng, h)
s, h, b = httpapi.request(state, "GET", path, headers={"Range": "bytes=9999999-"})
assert s == 416 and h.get("Content-Range") == "bytes */%d" % len(want), (s, h)
s, h, b = httpapi.request(state, "GET", path, headers={"Range": "lines=1-2"})
assert s == 416 and json.loads(b)["error"]["code"] == "bad_range", (s, b)
s, h, b = httpapi.request(state, "GET", path + "?offset=300000&length=300000")
assert s == 200 and b == want[300000:600000], (s, len(b))
s, h, b = httpapi.request(state, "GET", path + "?stream=stderr")
assert s == 200 and b == b"oops\n", (s, b)
s, h, b = httpapi.request(state, "GET", path + "?offset=-1")
assert s == 400, s
print("logs ok")
P
# A task that has not started: 404 not_started.
hold=$("$HRM" submit --cpus 2 -- sleep 60.0214) || fail "submit hold"
until_ok 60 started "$hold" 1 || fail "hold did not start"
wait_job=$("$HRM" submit --cpus 2 -- true) || fail "submit waiting"
python3 "$HRM_ROOT/tests/cli/httpapi.py" "$S" GET "/api/v1/jobs/$wait_job/tasks/0/log" >"$TMP/ns" 2>/dev/null
[ "$(head -1 "$TMP/ns")" = 404 ] && matches '"code":"not_started"' "$TMP/ns" || fail "not started: $(cat "$TMP/ns")"
expect_exit 0 "$HRM" cancel "$hold"

# The stream saw the first job's life in order.
until_ok 60 matches "event: job_finished" "$TMP/sse" || { cat "$TMP/sse.out" >&2; fail "the stream saw no job_finished"; }
grep '^event: ' "$TMP/sse" | head -6 | cut -d' ' -f2 >"$TMP/kinds"
printf 'job_submitted\njob_started\ntask_started\ntask_ended\njob_finished\n' >"$TMP/kinds.want"
diff "$TMP/kinds.want" <(head -5 "$TMP/kinds") >&2 || fail "the stream's events"
python3 - "$TMP/sse" "$id" <<'P' || fail "the stream's messages"
import json, sys
ids, last = [], 0
for block in open(sys.argv[1]).read().split("\n\n"):
    f = dict(l.split(": ", 1) for l in block.splitlines() if ": " in l and not l.startswith(":"))
    if "data" not in f:
        continue  # the reader stopped at the last one's event line
    d = json.loads(f["data"])
    assert int(f["id"]) == d["seq"] > last and f["event"] == d["kind"], f
    last = d["seq"]
    assert d["job"] == int(sys.argv[2]), d
P
# JSON pages with since; and a stream that resumes after Last-Event-ID replays what followed.
first=$(sed -n 's/^id: //p' "$TMP/sse" | head -1)
python3 - "$HRM_ROOT/tests/cli" "$S" "$first" <<'P' || fail "events pages"
import json, sys
sys.path.insert(0, sys.argv[1])
import httpapi
state, first = sys.argv[2], int(sys.argv[3])
s, h, b = httpapi.request(state, "GET", "/api/v1/events?since=%d&limit=2" % (first - 1))
d = json.loads(b)
assert s == 200 and [e["seq"] for e in d["events"]] == [first, first + 1] and d["more"] and d["next"] == first + 1, d
s, h, b = httpapi.request(state, "GET", "/api/v1/events?since=-3")
assert s == 400, s
host, port = httpapi.address(state)
c = httpapi.http.client.HTTPConnection(host, port, timeout=60)
c.request("GET", "/api/v1/events", headers={"Authorization": "Bearer " + httpapi.token(state, "ro"),
                                            "Accept": "text/event-stream", "Last-Event-ID": str(first)})
r = c.getresponse()
assert r.status == 200
for line in r:
    if line.startswith(b"id: "):
        assert int(line[4:]) == first + 1, line
        break
print("events ok")
P

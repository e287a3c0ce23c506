# Bad input to the HTTP API, each answered correctly while the master keeps scheduling: malformed JSON (400), bodies over the cap with and without Content-Length (413), a wrong Content-Type (415), a slowloris client (closed after the idle timeout), path traversal in the log route (404/400, no file read), unknown routes (404), wrong methods (405), missing or wrong tokens (401), the read-only token writing (403, nothing applied), a flood of connections past the limit (refused, the server recovers); jobs sent through ZeroMQ during and after all that complete.
. "$(dirname "$0")/http-lib.sh"
http_cluster --http-max-body 64K --http-timeout 2s --http-max-conns 8
id=$("$HRM" submit -- sh -c 'echo hello') || fail "submit"
expect_exit 0 timeout 120 "$HRM" wait "$id"

python3 - "$HRM_ROOT/tests/cli" "$S" "$id" >"$TMP/bad.out" 2>&1 <<'P' || { cat "$TMP/bad.out" >&2; fail "bad input not answered as expected"; }
import json, socket, sys, time
sys.path.insert(0, sys.argv[1])
import httpapi
state, job = sys.argv[2], int(sys.argv[3])
host, port = httpapi.address(state)

def req(method, path, body=None, tok="rw", headers=None):
    return httpapi.request(state, method, path, body, tok, headers)

def want(what, got, status, code=None):
    s, h, b = got
    assert s == status, "%s: status %d, expected %d: %s" % (what, s, status, b[:200])
    if code:
        e = json.loads(b)["error"]
        assert e["code"] == code, "%s: code %s, expected %s" % (what, e["code"], code)
        assert e["message"] and "path" in e, "%s: error shape %s" % (what, e)
    print("ok", what, s)
    return h, b

def jobs_count():
    s, h, b = req("GET", "/api/v1/jobs?limit=1000")
    return len(json.loads(b)["jobs"])

n0 = jobs_count()
# Malformed JSON, not an object, a job document with a bad field (hrm submit's own words).
want("malformed JSON", req("POST", "/api/v1/jobs", b'{"tasks": [}'), 400, "bad_json")
want("JSON not an object", req("POST", "/api/v1/jobs", b'[1, 2]'), 400, "bad_spec")
h, b = want("bad field", req("POST", "/api/v1/jobs", b'{"tasks": [{"cmd": ["true"], "cpus": "lots"}]}'), 400, "bad_spec")
assert "tasks[0].cpus" in json.loads(b)["error"]["message"], b
want("empty body", req("POST", "/api/v1/jobs", b''), 400, "bad_json")
# Bodies over the cap: announced, and chunked (no Content-Length).
big = b'{"name": "' + b'x' * (200 << 10) + b'", "tasks": []}'
want("huge body", req("POST", "/api/v1/jobs", big), 413, "too_big")
c = httpapi.http.client.HTTPConnection(host, port, timeout=60)
c.putrequest("POST", "/api/v1/jobs")
c.putheader("Authorization", "Bearer " + httpapi.token(state, "rw"))
c.putheader("Content-Type", "application/json")
c.putheader("Transfer-Encoding", "chunked")
c.endheaders()
try:
    for _ in range(8):
        piece = b'x' * (16 << 10)
        c.send(b"%x\r\n%s\r\n" % (len(piece), piece))
    c.send(b"0\r\n\r\n")
    r = c.getresponse()
    status = r.status
    r.read()
except (BrokenPipeError, ConnectionResetError):
    status = 413  # the server may close as soon as it answered
assert status == 413, "chunked huge body: %d" % status
print("ok chunked huge body 413")
want("wrong content type", req("POST", "/api/v1/jobs", b'{}', headers={"Content-Type": "text/plain"}), 415, "unsupported_media_type")
assert jobs_count() == n0, "a refused submission made a job"
# Path traversal in the log route: never an id, never a stream name.
for p in ["/api/v1/jobs/%d/tasks/../../../../etc/passwd/log" % job,
          "/api/v1/jobs/%d/tasks/..%%2F..%%2Fetc%%2Fpasswd/log" % job,
          "/api/v1/jobs/..%%2F..%%2F/tasks/0/log",
          "/api/v1/jobs/%d/tasks/0/../../../log" % job]:
    s, h, b = req("GET", p)
    assert s == 404 and b"root:" not in b, "%s: %d %s" % (p, s, b[:200])
    print("ok traversal", p, s)
for q in ["../../etc/passwd", "..%2F..%2Fetc%2Fpasswd", "/etc/passwd", "out"]:
    s, h, b = req("GET", "/api/v1/jobs/%d/tasks/0/log?stream=%s" % (job, q))
    assert s == 400 and b"root:" not in b, "stream=%s: %d %s" % (q, s, b[:200])
    print("ok traversal stream", q, s)
want("log of a task that does not exist", req("GET", "/api/v1/jobs/%d/tasks/7/log" % job), 404, "not_found")
# Unknown routes, wrong methods.
for p in ["/api/v2/jobs", "/api/v1/job", "/api/v1/jobs/%d/tasks" % job, "/api/v1/jobs/%d/oops" % job, "/etc/passwd", "//", "/api/v1/jobs/-1"]:
    want("unknown route " + p, req("GET", p), 404, "not_found")
h, b = want("wrong method", req("DELETE", "/api/v1/jobs/%d" % job), 405, "method_not_allowed")
assert h.get("Allow") == "GET, HEAD", h
want("wrong method on cancel", req("GET", "/api/v1/jobs/%d/cancel" % job), 405, "method_not_allowed")
# Tokens.
want("no token", req("GET", "/api/v1/jobs", tok="none"), 401, "unauthorized")
want("wrong token", req("GET", "/api/v1/jobs", tok="0" * 64), 401, "unauthorized")
want("token prefix", req("GET", "/api/v1/jobs", tok=httpapi.token(state, "rw")[:-1]), 401, "unauthorized")
want("read-only submit", req("POST", "/api/v1/jobs", b'{"tasks": [{"cmd": ["true"]}]}', tok="ro"), 403, "forbidden")
want("read-only cancel", req("POST", "/api/v1/jobs/%d/cancel" % job, tok="ro"), 403, "forbidden")
want("read-only read", req("GET", "/api/v1/jobs/%d" % job, tok="ro"), 200)
assert jobs_count() == n0, "a read-only write made a job"
# Slowloris: half a request, then silence: closed by the server after its idle timeout.
s = socket.create_connection((host, port), timeout=60)
s.sendall(b"GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthor")
t0 = time.monotonic()
data = b""
try:
    while True:
        d = s.recv(4096)
        if not d:
            break
        data += d
except socket.timeout:
    raise AssertionError("slowloris: still open after 60 s")
s.close()
assert b"200 OK" not in data, data
print("ok slowloris closed by the server")
P
cat "$TMP/bad.out" | matches "ok slowloris" || fail "slowloris not checked"

# A flood of connections past --http-max-conns, held open while a job goes through ZeroMQ.
base_threads=$(ls "/proc/$MASTER/task" | wc -l)
python3 - "$HRM_ROOT/tests/cli" "$S" "$TMP/flood-ready" "$TMP/flood-stop" >"$TMP/flood.out" 2>&1 <<'P' &
import os, socket, sys, time
sys.path.insert(0, sys.argv[1])
import httpapi
host, port = httpapi.address(sys.argv[2])
socks = []
for _ in range(64):
    try:
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finished
        socks.append(s)
    except OSError:
        pass
open(sys.argv[3], "w").write("%d\n" % len(socks))
for _ in range(1200):
    if os.path.exists(sys.argv[4]):
        break
    time.sleep(0.1)
for s in socks:
    s.close()
P
FLOOD=$!; PIDS+=("$FLOOD")
until_ok 60 test -s "$TMP/flood-ready" || fail "the flood did not start"
# A thread per connection, at most --http-max-conns of them: the rest wait in the backlog.
threads=$(ls "/proc/$MASTER/task" | wc -l)
[ "$threads" -le $((base_threads + 8 + 1)) ] ||
  fail "$threads threads during a flood of 64 connections (before: $base_threads; limit 8)"
during=$("$HRM" submit -- sh -c 'echo during') || fail "submit during the flood"
expect_exit 0 timeout 120 "$HRM" wait "$during"
touch "$TMP/flood-stop"
wait "$FLOOD" || true
healthy() { [ "$(api GET /healthz --token none)" = 200 ]; }
until_ok 60 healthy || fail "the server did not recover from the flood"
after=$("$HRM" submit -- true) || fail "submit after"
expect_exit 0 timeout 120 "$HRM" wait "$after"
[ "$("$HRM" logs "$during")" = during ] || fail "the job run during the flood lost its output"

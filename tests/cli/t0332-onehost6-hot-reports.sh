# An agent's task_started and task_end, read by the master without a tree when in our agents' form: well-formed ones, alone or batched, are acknowledged; every malformed one (wrong type, missing field, out of range, huge number, escapes, invalid UTF-8, duplicate key, wrong version) still gets the generic decoder's clear error, and the master goes on.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master

mkdir "$TMP/agentkeys"; cp "$S/keys/master.pub" "$TMP/agentkeys/"; cp "$S/keys/agent.key" "$TMP/agentkeys/client.key"
# One frame per line, all on one connection (the node is the connection that registered).
E='"v":1,"type":"task_end"'
cat >"$TMP/frames" <<F
{"v":1,"type":"register","name":"hot0332","rack":"r0","cpu":4000,"mem":8589934592,"gpus":0,"running":[],"finished":[]}
{$E,"job":90001,"task":1,"attempt":1,"status":0,"exit":0,"signal":0,"oom":false,"start_us":1764151234567890,"end_us":1764151234569001,"cpu_us":512,"rss":1163264}
{"v":1,"type":"batch","msgs":[{$E,"job":90002,"task":2,"attempt":1,"status":0,"exit":3}]}
{"v":1,"type":"task_started","job":90003,"task":0,"attempt":1,"pid":4242,"start_us":1764151234568000,"zz":1}
{$E,"job":90004,"task":1,"attempt":1,"status":0,"colour":"caf\u00e9"}
{$E,"j\u006fb":90005,"task":1,"attempt":1,"status":0}
{$E,"job":90006,"task":1,"attempt":1,"status":0,"error":"exec: \"x\" not found"}
{$E,"job":-1,"task":1,"attempt":1,"status":0}
{"v":1,"type":"batch","msgs":[{$E,"job":7,"task":2147483648,"attempt":1,"status":0}]}
{$E,"job":99999999999999999999,"task":1,"attempt":1,"status":0}
{$E,"job":7,"task":1,"attempt":1,"status":0,"oom":1}
{$E,"job":7,"task":1,"attempt":1}
{$E,"job":7,"task":1.5,"attempt":1,"status":0}
{$E,"job":"7","task":1,"attempt":1,"status":0}
{$E,"job":7,"job":8,"task":1,"attempt":1,"status":0}
{"v":2,"type":"task_end","job":7,"task":1,"attempt":1,"status":0}
{$E,"job":7,"task":1,"attempt":1,"status":0,"error":"\\u00"}
F
printf '{%s,"job":7,"task":1,"attempt":1,"status":0,"error":"\xff\xfe"}\n' "$E" >>"$TMP/frames"
# hrm raw waits for one reply per line; the master answers an agent's connection in batches, so
# fewer come and it gives up after --timeout: its exit status says nothing here, the replies do.
timeout 60 "$HRM" raw --timeout 3 --keys "$TMP/agentkeys" "@lines:$TMP/frames" >"$TMP/out" 2>&1 || true
python3 - "$TMP/out" <<'P' || fail "replies: $(cat "$TMP/out")"
import json, re, sys
msgs = []
for line in open(sys.argv[1]):
    at = line.find("{")
    if at < 0:
        continue
    m = json.loads(line[at:])
    msgs += m["msgs"] if m.get("type") == "batch" else [m]
def fail(why):
    sys.exit("FAIL: " + why)
if not any(m["type"] == "welcome" for m in msgs):
    fail("no welcome")
acked = sorted(m["job"] for m in msgs if m["type"] == "task_end_ack")
if acked != [90001, 90002, 90004, 90005, 90006]:
    fail("acknowledged: %s" % acked)
errors = [(m["code"], m["message"]) for m in msgs if m["type"] == "error"]
want = [("bad_field", r"task_end: field 'job' must not be negative"),
        ("bad_field", r"task_end: field 'task' is out of range"),
        ("bad_json", r"invalid JSON at byte \d+: too big integer"),
        ("bad_field", r"task_end: field 'oom' must be a boolean"),
        ("bad_field", r"task_end: missing field 'status'"),
        ("bad_field", r"task_end: field 'task' must be an integer"),
        ("bad_field", r"task_end: field 'job' must be an integer"),
        ("bad_json", r"invalid JSON at byte \d+: duplicate object key"),
        ("bad_version", r'field "v" must be 1'),
        ("bad_json", r"invalid JSON at byte \d+: invalid escape"),
        ("bad_json", r"invalid JSON at byte \d+: unable to decode byte 0xff")]
for code, pattern in want:
    if not any(c == code and re.match(pattern, t) for c, t in errors):
        fail("no %s '%s' among %s" % (code, pattern, errors))
if len(errors) != len(want):
    fail("%d errors for %d bad frames: %s" % (len(errors), len(want), errors))
P
kill -0 "$MASTER" || fail "the master died"
"$HRM" nodes >/dev/null || fail "the master does not answer"
echo ok

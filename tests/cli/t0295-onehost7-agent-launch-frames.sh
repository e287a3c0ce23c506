# The master's launches as an agent reads them (most without a tree): well-formed ones run, alone, batched with an acknowledgement, with an env, and one with an escape (read by jansson); each malformed one gets the generic decoder's exact error in the agent's log while the rest of its batch runs; launches the node refuses (an empty command, a reserved GPU variable) end with their reason; the agent stays up.
. "$(dirname "$0")/rtlib.sh"
keygen
# raw-serve's own bad input: a usage error naming the option
expect_exit 2 "$HRM" raw-serve --keys "$S/keys" --timeout 5x "$TMP/none"
grep -q -- "--timeout: expected seconds" "$TMP/err" || fail "raw-serve --timeout 5x: $(cat "$TMP/err")"
many=(); for i in $(seq 65); do many+=(--until "t$i"); done
expect_exit 2 "$HRM" raw-serve --keys "$S/keys" "${many[@]}" "$TMP/none"
grep -q "at most 64 --until" "$TMP/err" || fail "raw-serve with 65 --until: $(cat "$TMP/err")"
rm -f "$TMP/out" "$TMP/err"
mkdir -p "$TMP/out"
L='"v":1,"type":"task_launch"'
# run JOB: a launch of job JOB (task 0) that writes "JOB-$X" to $TMP/out/JOB; extra fields after
run() { printf '{%s,"job":%s,"task":0,"attempt":1,"gpu_mask":0,"cmd":["/bin/sh","-c","echo %s-$X > %s/out/%s"],"cwd":"%s","env":{"X":"x%s"},"cpu":1000,"mem":0,"gpus":0,"gpu_share":1000,"gpu_mem":0,"output":false%s}\n' \
  "$L" "$1" "$1" "$TMP" "$1" "$TMP" "$1" "${2:-}"; }
{
  echo '{"v":1,"type":"welcome","node":0,"boot":1}'
  run 1                                                                   # alone
  echo "{\"v\":1,\"type\":\"batch\",\"msgs\":[$(run 2),{\"v\":1,\"type\":\"task_end_ack\",\"job\":1,\"task\":0,\"attempt\":1},$(run 3)]}"
  run 4 | sed 's/"cwd"/"c\\u0077d"/'                                      # an escape: jansson reads it
  echo "{$L,\"job\":5,\"task\":2147483648,\"attempt\":1,\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":0}"
  echo "{$L,\"job\":5,\"task\":0,\"attempt\":1,\"cmd\":[\"true\"],\"cpu\":1,\"mem\":0}"
  echo "{$L,\"job\":5,\"task\":0,\"attempt\":1,\"cmd\":[\"true\",7],\"cwd\":\"/\",\"cpu\":1,\"mem\":0}"
  echo "{$L,\"job\":5,\"task\":0,\"attempt\":1,\"cmd\":[\"true\"],\"cwd\":\"/\",\"env\":{\"A\":\"1\",\"A\":\"2\"},\"cpu\":1,\"mem\":0}"
  echo "{\"v\":2,\"type\":\"task_launch\",\"job\":5,\"task\":0,\"attempt\":1,\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":1,\"mem\":0}"
  echo "{\"v\":1,\"type\":\"batch\",\"msgs\":[{$L,\"job\":6,\"task\":0,\"attempt\":1,\"cmd\":[\"true\"],\"cwd\":\"/\",\"cpu\":-1,\"mem\":0},$(run 7)]}"
  echo "{$L,\"job\":8,\"task\":0,\"attempt\":1,\"cmd\":[],\"cwd\":\"/\",\"cpu\":1,\"mem\":0}"
  run 9 ',"user":"root"' | sed 's/"env":{/"env":{"HRM_GPU_SHARE":"1",/'
  run 10
} >"$TMP/frames"
# every reported end before it stops: the tasks run side by side and end in any order
until=()
for j in 1 2 3 4 7 8 9 10; do until+=(--until "\"type\":\"task_end\",\"job\":$j,"); done
"$HRM" raw-serve --keys "$S/keys" "${until[@]}" --timeout 60 "$TMP/frames" \
  >"$TMP/serve.out" 2>"$TMP/serve.err" &
SERVE=$!; PIDS+=("$SERVE")
until_ok 30 grep -q '^listening ' "$TMP/serve.out" || fail "raw-serve did not listen: $(cat "$TMP/serve.err")"
ep=$(sed -n 's/^listening //p' "$TMP/serve.out")
"$HRM" keygen --node n1 "$S/keys" >/dev/null || fail "keygen --node n1"
start_agent n1 --master "$ep" --cpus 4 --no-cgroup
wait "$SERVE" || fail "not every job ended: $(tail -5 "$TMP/serve.out") $(cat "$TMP/serve.err")"
kill -0 "$AGENT_n1" 2>/dev/null || fail "the agent stopped"

for j in 1 2 3 4 7 10; do
  [ "$(cat "$TMP/out/$j" 2>/dev/null)" = "$j-x$j" ] || fail "job $j wrote '$(cat "$TMP/out/$j" 2>/dev/null)'"
done
python3 - "$TMP/serve.out" <<'P' || fail "the agent's reports"
import json, sys
ends = {}
for line in open(sys.argv[1]):
    if not line.startswith("recv: "):
        continue
    m = json.loads(line[6:])
    for it in m["msgs"] if m["type"] == "batch" else [m]:
        if it["type"] in ("task_end", "task_started"):
            ends.setdefault(it["job"], []).append(it)
def end(j):
    e = [it for it in ends.get(j, []) if it["type"] == "task_end"]
    if len(e) != 1:
        sys.exit("FAIL: job %d: %d ends" % (j, len(e)))
    return e[0]
for j in (1, 2, 3, 4, 7, 10):
    e = end(j)
    if e["status"] != 0 or e["exit"] != 0 or "error" in e:
        sys.exit("FAIL: job %d: %s" % (j, e))
if sorted(ends) != [1, 2, 3, 4, 7, 8, 9, 10]:
    sys.exit("FAIL: reports for jobs %s" % sorted(ends))
e = end(8)
if e["exit"] != 127 or "command not found" not in e.get("error", ""):
    sys.exit("FAIL: the empty command: %s" % e)
e = end(9)
if e["exit"] != 127 or e.get("error") != "env HRM_GPU_SHARE is set by hrm from the task's GPU share; remove it":
    sys.exit("FAIL: the reserved variable: %s" % e)
P
# The generic decoder's words, each once, in the order the frames came.
grep -o 'bad message from the master: .*' "$TMP/n1.log" >"$TMP/got"
cat >"$TMP/want" <<'W'
bad message from the master: task_launch: field 'task' is out of range
bad message from the master: task_launch: missing field 'cwd'
bad message from the master: task_launch: field 'cmd' must hold strings only
bad message from the master: invalid JSON at byte N: duplicate object key near '"A"'
bad message from the master: field "v" must be 1
bad message from the master: task_launch: field 'cpu' must not be negative
W
sed -E 's/at byte [0-9]+/at byte N/' "$TMP/got" | cmp -s - "$TMP/want" || fail "the agent's errors: $(cat "$TMP/got")"
echo ok

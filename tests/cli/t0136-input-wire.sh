# Wire limits: a frame over 1 MiB gets too_big with its req, unknown fields obey the string and array limits, and an agent's register over 1 MiB (5,000 running and 5,000 finished tasks) is accepted.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master

# A submission over 1 MiB sent as is (hrm raw): too_big, with the req it ends with.
python3 - "$TMP/big.json" <<'P'
import json, sys
job = {"name": "big", "tasks": [{"cmd": ["x" * 300] * 4000}]}
open(sys.argv[1], "w").write('{"v":1,"type":"submit","job":%s,"req":4242}' % json.dumps(job, separators=(",", ":")))
P
expect_exit 0 timeout 60 "$HRM" raw "$TMP/big.json"
grep -q '"code":"too_big"' "$TMP/out" || fail "no too_big: $(cat "$TMP/out")"
grep -q '"req":4242' "$TMP/out" || fail "too_big without the req: $(cat "$TMP/out")"

# Fields the schema does not know are held to the same limits as known ones.
python3 -c 'print("{\"v\":1,\"type\":\"jobs\",\"req\":7,\"junk\":\"%s\"}" % ("x" * 70000))' >"$TMP/str.json"
python3 -c 'print("{\"v\":1,\"type\":\"jobs\",\"req\":8,\"junk\":{\"deep\":[%s]}}" % ",".join(["0"] * 65537))' >"$TMP/arr.json"
python3 -c 'print("{\"v\":1,\"type\":\"jobs\",\"req\":9,\"junk\":[\"%s\"]}" % ("x" * 1000))' >"$TMP/ok.json"
expect_exit 0 timeout 60 "$HRM" raw "$TMP/str.json" "$TMP/arr.json" "$TMP/ok.json"
grep "str.json" "$TMP/out" | matches '"code":"bad_field".*longer than 65536 bytes' || fail "long unknown string: $(cat "$TMP/out")"
grep "arr.json" "$TMP/out" | matches '"code":"bad_field".*more than 65536 items' || fail "long unknown array: $(cat "$TMP/out")"
grep "ok.json" "$TMP/out" | matches '"type":"jobs_list"' || fail "a small unknown field was refused: $(cat "$TMP/out")"

# An agent's register listing 5,000 running and 5,000 finished tasks is over 1 MiB.
mkdir "$TMP/agentkeys"; cp "$S/keys/master.pub" "$TMP/agentkeys/"; cp "$S/keys/agent.key" "$TMP/agentkeys/client.key"
python3 - "$TMP/reg.json" "$TMP/agentbig.json" <<'P'
import json, sys
running = [{"job": 900000 + i, "task": i, "attempt": 1, "pid": 100000 + i, "start_us": 1764100000000000 + i} for i in range(5000)]
finished = [{"job": 800000 + i, "task": i, "attempt": 1, "status": 0, "exit": 0, "signal": 0, "oom": False,
             "start_us": 1764100000000000 + i, "end_us": 1764100001000000 + i, "cpu_us": 123456, "rss": 4096000}
            for i in range(5000)]
reg = {"v": 1, "type": "register", "name": "bignode", "rack": "r0", "cpu": 4000, "mem": 1 << 33, "gpus": 0,
       "running": running, "finished": finished}
text = json.dumps(reg, separators=(",", ":"))
assert len(text) > (1 << 20), len(text)
open(sys.argv[1], "w").write(text)
# Anything else over 1 MiB from an agent is still too big.
open(sys.argv[2], "w").write('{"v":1,"type":"heartbeat","pad":"%s"}' % ("x" * (1 << 20)))
P
expect_exit 0 timeout 60 "$HRM" raw --keys "$TMP/agentkeys" "$TMP/reg.json"
! grep -q '"code":"too_big"' "$TMP/out" || fail "a large register was refused: $(head -c 300 "$TMP/out")"
# The reply is the reconciliation (task_kill of the runs the master does not know).
grep -q '"type":"task_kill"' "$TMP/out" || fail "no reconciliation: $(head -c 300 "$TMP/out")"
until_ok 30 grep -q "node bignode .* registered" "$TMP/master.log" || fail "the node did not register"
expect_exit 0 timeout 60 "$HRM" raw --keys "$TMP/agentkeys" "$TMP/agentbig.json"
grep -q '"code":"too_big"' "$TMP/out" || fail "an agent's large heartbeat: $(head -c 300 "$TMP/out")"
kill -0 "$MASTER" || fail "master died"
echo ok

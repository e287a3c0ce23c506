# A scheduler process that floods the master with bad messages gets an error reply for each, the log gets a bounded number of lines (then a count), and the master keeps answering clients.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --policy dhrm-nego
mkdir "$TMP/sk"; cp "$S/keys/master.pub" "$TMP/sk/"; cp "$S/keys/scheduler.key" "$TMP/sk/client.key"
echo '{"v":1,"type":"sched_register","name":"flood","instances":1}' >"$TMP/reg.json"
python3 - "$TMP" <<'P'
import json, sys
d = sys.argv[1]
for k in range(3):  # three frames of 300 probes to a node that does not exist
    items = [{"v": 1, "type": "hold", "from": -26, "job": 1, "task": 0, "node": 0, "attempt": i,
              "gpu_mask": 0, "value": 0, "status": 0, "to": 99999} for i in range(300)]
    open("%s/flood%d.json" % (d, k), "w").write(json.dumps({"v": 1, "type": "batch", "msgs": items}))
P
timeout 120 "$HRM" raw --keys "$TMP/sk" --timeout 5 "$TMP/reg.json" "$TMP/flood0.json" "$TMP/flood1.json" "$TMP/flood2.json" >"$TMP/raw.out" 2>&1 || true
grep -q '"sched_welcome"' "$TMP/raw.out" || fail "the flooding process was not welcomed first"
n=$(grep -o "hold: 'to' is no node" "$TMP/raw.out" | wc -l)
[ "$n" -ge 300 ] || fail "$n error replies for the flood, expected one per message"
until_ok 60 grep -q "more this minute are refused without a line" "$TMP/master.log" || fail "no line saying the rest go unlogged"
lines=$(grep -c "scheduler process: refused hold" "$TMP/master.log" || true)
[ "$lines" -le 10 ] || fail "$lines log lines for 900 bad messages: not bounded"
grep -q "scheduler process: refused hold: 'to' is no node" "$TMP/master.log" || fail "the lines do not say what was refused and why"
kill -0 "$MASTER" || fail "master died"
expect_exit 0 "$HRM" jobs
echo ok

# hrm up --node-speed and --node-disk-bps give each agent its value, repeated cyclically: node2 of three at 1,0.25 is slowed, node1 and node3 are not; every agent benches itself at start, and the disk throttle is applied or its absence said.
. "$(dirname "$0")/lib.sh"
need python3
S="$TMP/up"
timeout 240 "$HRM" up --nodes 3 --cpus 2 --mem 2G --state "$S" --policy nparsa \
  --node-speed 1,0.25 --node-disk-bps 400MB/s -- \
  sh -c '"$0" nodes --json >"$1"' "$HRM" "$TMP/nodes.json" >"$TMP/up.out" 2>&1 ||
  { cat "$TMP/up.out" "$S"/logs/*.log >&2; fail "hrm up"; }
for n in 1 2 3; do
  grep -q "bench (new, measured)" "$S/logs/node$n.log" || fail "node$n did not bench at start"
  grep -Eq "disk writes of the node's tasks and bench throttled to 400000000 bytes/s|--disk-bps 400000000 cannot be applied: " "$S/logs/node$n.log" ||
    fail "node$n: no word of its disk throttle"
done
grep -q "speed 0.25: " "$S/logs/node2.log" || fail "node2 was not slowed"
for n in 1 3; do
  grep -q "speed 0.25" "$S/logs/node$n.log" && fail "node$n was slowed"
done
python3 - "$TMP/nodes.json" <<'PY' || fail "hrm nodes: $(cat "$TMP/nodes.json")"
import json, sys
ns = json.load(open(sys.argv[1])); ns = ns if isinstance(ns, list) else ns["nodes"]
cpu = {n["name"]: n["bench"]["cpu"] for n in ns}
assert all(v for v in cpu.values()), cpu
# Each measured alone (the agents of one state folder take turns): node2 far below the others.
assert cpu["node2"] < 0.6 * min(cpu["node1"], cpu["node3"]), cpu
# Every node is in the scheduler's cluster with the speed NPARSA reads.
speed = {n["name"]: n["cpu_speed"] for n in ns}
assert None not in speed.values() and max(speed.values()) == 1 and speed["node2"] < 0.6, speed
PY
for n in 1 2 3; do
  [ -s "$S/bench-node$n.json" ] || fail "node$n's bench was not saved"
done
echo ok

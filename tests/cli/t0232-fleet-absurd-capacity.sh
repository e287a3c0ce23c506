# Registrations and heartbeats with absurd capacities (memory beyond 1 PiB or under 1 MiB, a negative or huge load, free memory far beyond the node's) get a bad_field error and a warning naming the node; the table keeps its previous values and the master goes on.
. "$(dirname "$0")/rtlib.sh"
keygen
"$HRM" keygen --node rawA "$S/keys" >/dev/null || fail "keygen --node rawA"
mkdir "$TMP/keysA"; cp "$S/keys/master.pub" "$TMP/keysA/"; cp "$S/keys/agent-rawA.key" "$TMP/keysA/client.key"
start_master
reg() { printf '{"v":1,"type":"register","name":"rawA","rack":"r0","cpu":4000,"mem":%s,"gpus":0,"running":[],"finished":[]}' "$1"; }
reg 1152921504606846976 >"$TMP/reg-huge.json"   # 1 EiB
reg 1000 >"$TMP/reg-tiny.json"
reg 8589934592 >"$TMP/reg-ok.json"
hb() { printf '{"v":1,"type":"heartbeat","load":%s,"mem_avail":%s,"ntasks":0}' "$1" "$2"; }
hb 0.5 4294967296 >"$TMP/hb-ok.json"
hb -3 4294967296 >"$TMP/hb-neg.json"
hb 1e300 4294967296 >"$TMP/hb-huge.json"
hb 0.5 1152921504606846976 >"$TMP/hb-mem.json"

raw() { timeout 60 "$HRM" raw --keys "$TMP/keysA" --timeout 2 "$@" 2>&1 || true; }
out=$(raw "$TMP/reg-huge.json")
echo "$out" | matches '"code": *"bad_field"' || fail "a registration of 1 EiB was not refused: $out"
echo "$out" | matches "mem must be 1 MiB..1 PiB" || fail "the refusal does not say why: $out"
out=$(raw "$TMP/reg-tiny.json")
echo "$out" | matches '"code": *"bad_field"' || fail "a registration of 1000 bytes was not refused: $out"
grep -q "refused a registration as 'rawA': mem 1152921504606846976" "$TMP/master.log" || fail "no warning for the huge registration"
"$HRM" nodes --json | matches '"rawA"' && fail "a refused registration made a node"

# Registered for real, then bad heartbeats: each refused, the good values stay.
out=$(raw "$TMP/reg-ok.json" "$TMP/hb-ok.json" "$TMP/hb-neg.json" "$TMP/hb-huge.json" "$TMP/hb-mem.json")
n=$(echo "$out" | grep -c '"bad_field"' || true)
[ "$n" -eq 3 ] || fail "$n of 3 bad heartbeats refused: $out"
for why in "load -3," "load 1e+300," "load 0.5, mem_avail 1152921504606846976"; do
  grep -q "bad heartbeat from node rawA: $why" "$TMP/master.log" || fail "no warning for: $why"
done
"$HRM" nodes --json | python3 -c '
import json, sys
n = [x for x in json.load(sys.stdin) if x["name"] == "rawA"][0]
assert n["load"] == 0.5, n["load"]
' || fail "a bad heartbeat changed the node's load"
kill -0 "$MASTER" || fail "master died"
expect_exit 0 "$HRM" jobs
echo ok

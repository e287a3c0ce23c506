# hrm agent --bench measures and saves the node's figures; the agent benches once at first start, then starts from the saved figures (while its limits are the same), measures again with --rebench or a new --speed; a bench that cannot write its disk file says why and the agent starts with the disk speed unknown.
. "$(dirname "$0")/rtlib.sh"
keygen
"$HRM" agent --state "$S" --name b1 --bench >"$TMP/bench.txt" 2>"$TMP/bench.err" || fail "agent --bench: $(cat "$TMP/bench.err")"
grep -Eq "^cpu +[0-9.]+ M iterations/s per core" "$TMP/bench.txt" || fail "no CPU figure: $(cat "$TMP/bench.txt")"
grep -Eq "^disk +[0-9.]+ MB/s" "$TMP/bench.txt" || fail "no disk figure"
python3 - "$S/bench-b1.json" <<'PY' || fail "bad bench file: $(cat "$S/bench-b1.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and d["speed"] == 1 and d["disk_bps"] == 0, d
assert d["cpu"] > 0 and d["mem_bw"] > 0 and d["disk_bw"] > 0 and d["at"] > 0, d
PY
[ ! -e "$S/bench-b1.disk" ] || fail "the disk file was left behind"
"$HRM" agent --state "$S" --name b1 --bench --json >"$TMP/bench.json" || fail "agent --bench --json"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["name"] == "b1" and d["cpu"] > 0' "$TMP/bench.json" ||
  fail "agent --bench --json: $(cat "$TMP/bench.json")"

start_master --policy nparsa
# b1 has a bench saved: it starts from it, measuring nothing.
start_agent b1 --cpus 1 --mem 1G
until_ok 60 nodes_up 1 || fail "b1 did not register"
grep -q "bench ($S/bench-b1.json, measured)" "$TMP/b1.log" || fail "b1 did not start from its saved bench"
grep -q "bench (new" "$TMP/b1.log" && fail "b1 measured again with a bench saved"
kill -TERM "$AGENT_b1"; wait "$AGENT_b1" 2>/dev/null || true
# --rebench measures again.
start_agent b1 --cpus 1 --mem 1G --rebench
until_ok 60 grep -q "bench (new" "$TMP/b1.log" || fail "--rebench did not measure again"
kill -TERM "$AGENT_b1"; wait "$AGENT_b1" 2>/dev/null || true
: >"$TMP/b1.log"
# Saved under another speed: stale, measured again (and saved with the new speed).
start_agent b1 --cpus 1 --mem 1G --speed 0.5
until_ok 60 grep -q "bench (new" "$TMP/b1.log" || fail "a bench saved at speed 1 was used at speed 0.5"
until_ok 60 python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["speed"] != 0.5)' "$S/bench-b1.json" ||
  fail "the new bench was not saved with its speed"
kill -TERM "$AGENT_b1"; wait "$AGENT_b1" 2>/dev/null || true

# b2 cannot write its disk file (a folder is in the way): it says so and starts; its disk
# speed is unknown and nothing incomplete is saved.
mkdir -p "$S/bench-b2.disk/x"
start_agent b2 --cpus 1 --mem 1G
until_ok 60 grep -q "registered with the master" "$TMP/b2.log" || fail "b2 did not start without its disk figure"
grep -q "cannot write its disk file $S/bench-b2.disk" "$TMP/b2.log" || fail "b2 does not say why its disk speed is unknown"
disk=$("$HRM" nodes --json | python3 -c 'import json, sys
ns = json.load(sys.stdin); ns = ns if isinstance(ns, list) else ns["nodes"]
b = [n for n in ns if n["name"] == "b2"][0]["bench"]; print(b["disk_bw"], b["cpu"] is not None)')
[ "$disk" = "None True" ] || fail "b2's bench in hrm nodes: $disk (expected an unknown disk, a known CPU)"
[ ! -e "$S/bench-b2.json" ] || fail "an incomplete bench was saved"
[ -d "$S/bench-b2.disk/x" ] || fail "the folder in the way was removed"
echo ok

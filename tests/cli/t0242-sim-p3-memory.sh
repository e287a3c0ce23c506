# The P3 memory model through hrm sim: a hand-worked spill, no effect without one, bad input named.
. "$(dirname "$0")/lib.sh"
need python3
# spec MEMORY-JSON [NODES]: one job of two 1-core tasks of 1 s asking 1 GiB, on NODES (default 1)
# nodes of 2 cores, 4 GiB and a 100 MB/s disk; MEMORY-JSON is the tasks' "memory" value or "".
spec() {
  python3 - "$1" "${2:-1}" <<'PY'
import json, sys
mem, n = sys.argv[1], int(sys.argv[2])
task = {"cpu": 1, "mem": "1G", "duration": "1s"}
if mem:
    task["memory"] = json.loads(mem)
print(json.dumps({
    "cluster": {"network": {"latency": "0us"},
                "nodes": [{"name": "n", "count": n, "cores": 2, "mem": "4G", "disk_bw": "100MB/s"}]},
    "workload": {"jobs": [{"name": "j", "tasks": 2, "task": task}]},
    "sim": {"policies": ["fifo"]}}))
PY
}
spec '{"working_set": "2560M", "spill_passes": 2}' >"$TMP/spill.json"
"$HRM" sim "$TMP/spill.json" -q --json >"$TMP/a"
"$HRM" sim "$TMP/spill.json" -q --json >"$TMP/b"
cmp "$TMP/a" "$TMP/b" || fail "two runs of the same spec differ"
# Heaps 2 GiB, page cache 2 GiB: the first task caches its 1.5 GiB, the second caches 0.5 GiB
# and writes and reads back 1 GiB at 100 MB/s: 2 x 1073741824 / 1e8 s = 21.474836 s.
python3 - "$TMP/a" <<'PY' || fail "the spill is not charged as worked out"
import json, sys
r = json.load(open(sys.argv[1]))[0]
assert abs(r["makespan_s"] - 22.474836) < 1e-6, r["makespan_s"]
assert r["bytes_spill_disk"] == 1 << 30, r["bytes_spill_disk"]
assert r["bytes_spill_cache"] == 2 << 30, r["bytes_spill_cache"]
PY
# Without a model, and with working sets within the request: the same output, no spill keys.
spec "" >"$TMP/none.json"
spec '{"working_set": "1G"}' >"$TMP/fits.json"
for fmt in "" --json; do
  "$HRM" sim "$TMP/none.json" -q $fmt >"$TMP/none.out"
  "$HRM" sim "$TMP/fits.json" -q $fmt >"$TMP/fits.out"
  cmp "$TMP/none.out" "$TMP/fits.out" || fail "a working set within the request changed the run ($fmt)"
done
! grep -q spill "$TMP/none.out" || fail "a run without the model reports spills"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; assert r["makespan_s"] == 1.0, r' \
  "$TMP/none.out" || fail "the run without spill is not 1 s"
# Two nodes: fifo's first fit packs both tasks on n0 as above; spread puts one on each: no spill.
spec '{"working_set": "2560M"}' 2 >"$TMP/two.json"
"$HRM" sim "$TMP/two.json" -q --json --policy spread >"$TMP/two.out"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; assert r["makespan_s"] == 1.0 and r.get("bytes_spill_disk", 0) == 0, r' \
  "$TMP/two.out" || fail "spread's tasks spilled to the disk"
# Bad input: each names the key and why, exit 2.
check_bad() {
  spec "$1" >"$TMP/bad.json"
  expect_exit 2 "$HRM" sim "$TMP/bad.json" -q
  matches -F "$2" "$TMP/err" || { cat "$TMP/err" >&2; fail "error for $1 does not name $2"; }
}
check_bad '{"working_set": "0"}' 'memory.working_set'
check_bad '{"spill_passes": 2}' 'working_set'
check_bad '{"working_set": "1G", "spill_passes": 1001}' 'memory.spill_passes'
check_bad '{"working_set": "1G", "passes": 2}' 'passes'
check_bad '"2G"' 'asks for is "mem"'

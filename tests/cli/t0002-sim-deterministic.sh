# Same spec and seed give byte-identical output, in the table, the JSON and the CSV files.
. "$(dirname "$0")/lib.sh"
spec="$HRM_ROOT/examples/p1-testbed.json"
"$HRM" sim "$spec" --policy fifo,drf,random --seed 3 --json --csv "$TMP/a" >"$TMP/a.json"
"$HRM" sim "$spec" --policy fifo,drf,random --seed 3 --json --csv "$TMP/b" >"$TMP/b.json"
cmp "$TMP/a.json" "$TMP/b.json" || fail "JSON differs between identical runs"
diff -r "$TMP/a" "$TMP/b" >/dev/null || fail "CSV files differ between identical runs"
"$HRM" sim "$spec" --policy fifo,drf,random --seed 3 >"$TMP/t1"
"$HRM" sim "$spec" --policy fifo,drf,random --seed 3 >"$TMP/t2"
cmp "$TMP/t1" "$TMP/t2" || fail "table differs between identical runs"
# The JSON carries the documented keys, one object per policy.
python3 - "$TMP/a.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
assert [r["policy"] for r in runs] == ["fifo", "drf", "random"], runs
for r in runs:
    for k in ("policy", "jobs", "makespan_s", "response_mean_s", "response_p95_s", "jain",
              "fairness_sigma", "cpu_util", "gpu_util", "bytes_local", "bytes_rack", "bytes_cross"):
        assert k in r, k
    assert r["jobs_done"] == 36, r
    assert r["makespan_s"] > 0 and 0 < r["gpu_util"] <= 1
    total = r["bytes_local"] + r["bytes_rack"] + r["bytes_cross"]
    assert total > 0
PY

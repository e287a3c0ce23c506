# P0 units and queue stacking through hrm sim: the policies are listed, runs are deterministic, stacking beats one task per GPU.
. "$(dirname "$0")/lib.sh"
"$HRM" sim --list-policies >"$TMP/list"
for p in hrm gpu-exclusive hrm-static hrm-unaware; do
  grep -q "^$p " "$TMP/list" || fail "--list-policies lacks $p"
done
spec="$HRM_ROOT/examples/p0-gpu-stacking.json"
"$HRM" sim "$spec" -q --json >"$TMP/a"
"$HRM" sim "$spec" -q --json >"$TMP/b"
cmp "$TMP/a" "$TMP/b" || fail "two runs of the same spec differ"
python3 - "$TMP/a" <<'PY' || fail "stacking does not beat one task per GPU"
import json, sys
r = {x["policy"]: x for x in json.load(open(sys.argv[1]))}
h, e = r["hrm"], r["gpu-exclusive"]
assert h["jobs_done"] == e["jobs_done"] == h["jobs"], "not every job finished"
assert h["gpu_util"] > e["gpu_util"], "GPU utilisation"
assert h["makespan_s"] < e["makespan_s"], "makespan"
assert h["response_mean_s"] < e["response_mean_s"], "job completion"
PY
expect_exit 2 "$HRM" sim "$HRM_ROOT/tests/data/bad/gpu-phases-two-gpus.json" -q
expect_exit 2 "$HRM" sim "$spec" -q --param hrm.stack=-1

# The distributed policies run through hrm sim beside the central ones; --sweep-load is deterministic and checks its input.
. "$(dirname "$0")/lib.sh"
"$HRM" sim --list-policies >"$TMP/list"
for p in d-random sparrow sparrow-batch dhrm dhrm-batch dhrm-nego central-queued ideal; do
  grep -q "^$p " "$TMP/list" || fail "--list-policies lacks $p"
done
# a small experiment 1: 100 nodes x 4 cores, 200 jobs of 100 tasks
sed 's/"count": 10000/"count": 100/; s/"count": 6400, "arrival": {"process": "poisson", "rate": 3200}/"count": 200, "arrival": {"process": "poisson", "rate": 32}/' \
  "$HRM_ROOT/examples/p4-exp1.json" >"$TMP/small.json"
"$HRM" sim "$TMP/small.json" -q --policy dhrm-nego,fifo,ideal --json >"$TMP/a.json"
python3 - "$TMP/a.json" <<'PY'
import json, sys
runs = {r["policy"]: r for r in json.load(open(sys.argv[1]))}
assert set(runs) == {"dhrm-nego", "fifo", "ideal"}, runs
for r in runs.values():
    assert r["jobs_done"] == 200, r
assert abs(runs["ideal"]["slowdown_p50"] - 1) < 1e-9
assert runs["dhrm-nego"]["slowdown_p50"] >= 1
PY
"$HRM" sim "$TMP/small.json" -q --policy sparrow,dhrm-batch --sweep-load 40:80:40 >"$TMP/s1"
"$HRM" sim "$TMP/small.json" -q --policy sparrow,dhrm-batch --sweep-load 40:80:40 >"$TMP/s2"
cmp "$TMP/s1" "$TMP/s2" || fail "sweep differs between identical runs"
[ "$(grep -c '%' "$TMP/s1")" -ge 4 ] || fail "sweep table has too few rows"
expect_exit 2 "$HRM" sim "$TMP/small.json" -q --sweep-load 90:10:10
grep -q "FROM:TO:STEP" "$TMP/err" || fail "no hint for a bad range"
expect_exit 2 "$HRM" sim "$TMP/small.json" -q --policy dhrm --param dhrm.bogus=1
grep -q "unknown parameter 'bogus'" "$TMP/err" || fail "unknown parameter not named"

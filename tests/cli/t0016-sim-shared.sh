# The shared-state policies (P0) run through hrm sim: deterministic, and the report counts conflicts and retries.
. "$(dirname "$0")/lib.sh"
"$HRM" sim --list-policies >"$TMP/list"
for p in hrm-shared hrm-central; do
  grep -q "^$p " "$TMP/list" || fail "--list-policies lacks $p"
done
# the contended example, scaled down: 25 nodes x 16 slots, 40 jobs
python3 - "$HRM_ROOT/examples/p0-shared-hot.json" "$TMP/small.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["cluster"]["nodes"][0]["count"] = 25
for g, n in zip(s["workload"]["generators"], (34, 6)):
    g["count"] = n
    g["arrival"]["rate"] = n / 60.0
json.dump(s, open(sys.argv[2], "w"))
PY
"$HRM" sim "$TMP/small.json" -q --seed 5 --param hrm-shared.instances=8 >"$TMP/a"
"$HRM" sim "$TMP/small.json" -q --seed 5 --param hrm-shared.instances=8 >"$TMP/b"
cmp "$TMP/a" "$TMP/b" || fail "two runs with the same seed differ"
grep -q "^shared-state commits" "$TMP/a" || fail "no shared-state block in the report"
row() { awk -v l="$1" 'index($0, l) == 1 { print $NF }' "$TMP/a"; }
conflicts=$(row "  conflicts ")
retries=$(row "  retries")
[ -n "$conflicts" ] && [ -n "$retries" ] || fail "no conflict/retry counts"
[ "$conflicts" -gt 0 ] || fail "a contended run without a single conflict"
[ "$retries" -eq "$conflicts" ] || fail "every conflicting task is retried ($retries != $conflicts)"
[ "$(row "  under the lock")" -eq 0 ] || fail "a stream claim under the lock was bounced"
[ "$(row "  of stream jobs")" -eq 0 ] || fail "a stream job's claim conflicted despite the lock"
grep -q "jobs done/failed *40/0 *40/0" "$TMP/a" || fail "not every job finished"
# strict per-node version validation is an option of its own
"$HRM" sim "$TMP/small.json" -q --seed 5 --policy hrm-shared --param hrm-shared.strict=1 >"$TMP/c"
grep -q "conflicts, stale version" "$TMP/c" || fail "no stale-version count"
expect_exit 2 "$HRM" sim "$TMP/small.json" -q --policy hrm-shared --param hrm-shared.bogus=1
grep -q "unknown parameter 'bogus'" "$TMP/err" || fail "unknown parameter not named"
expect_exit 2 "$HRM" sim "$TMP/small.json" -q --policy hrm-central --param hrm-central.instances=3

# P1 ablation switches: execution.preempt, the flow policies' clamp / nj_unfinished / paper keys, their bad input, and scripts/repro-p1-ablation's tables.
. "$(dirname "$0")/lib.sh"
need python3
spec="$HRM_ROOT/examples/p1-testbed.json"
# execution.preempt: restart is the default, resume changes GSP's run, a wrong value is refused.
python3 - "$spec" "$TMP" <<'PY'
import json, os, sys
spec, tmp = sys.argv[1:]
d = os.path.dirname(spec)
s = json.load(open(spec))
s["cluster"] = os.path.join(d, s["cluster"])
s["workload"] = os.path.join(d, s["workload"])
for mode in ("restart", "resume", "bogus"):
    s["execution"] = {"preempt": mode}
    json.dump(s, open(os.path.join(tmp, mode + ".json"), "w"))
PY
"$HRM" sim "$TMP/restart.json" -q --json --policy gsp >"$TMP/r.json" || fail "restart run failed"
"$HRM" sim "$TMP/resume.json" -q --json --policy gsp >"$TMP/m.json" || fail "resume run failed"
"$HRM" sim "$spec" -q --json --policy gsp >"$TMP/d.json" || fail "default run failed"
cmp "$TMP/r.json" "$TMP/d.json" || fail "preempt=restart is not the default"
cmp -s "$TMP/r.json" "$TMP/m.json" && fail "preempt=resume changes nothing"
expect_exit 2 "$HRM" sim "$TMP/bogus.json" -q
grep -q "preempt" "$TMP/err" || fail "bad preempt: message does not name the key"
# The policy keys: accepted where they mean something, refused with the key named otherwise.
"$HRM" sim "$spec" -q --json --policy gs,fs,fsu --param gs.paper=1 --param fs.paper=1 \
  --param fsu.clamp=0 --param gs.nj_unfinished=1 >"$TMP/p.json" || fail "paper set refused"
"$HRM" sim "$spec" -q --json --policy gs,fs,fsu >"$TMP/q.json"
cmp -s "$TMP/p.json" "$TMP/q.json" && fail "paper=1 changes nothing"
expect_exit 2 "$HRM" sim "$spec" -q --policy gs --param gs.clamp=2
grep -q "clamp must be 0 or 1" "$TMP/err" || fail "bad clamp: no clear message"
expect_exit 2 "$HRM" sim "$spec" -q --policy fsu --param fsu.nj_unfinished=1
grep -q "nj_unfinished" "$TMP/err" || fail "fsu takes no N_j: message does not name the key"
# The ablation script on one seed: every row.
SEEDS=1 "$HRM_ROOT/scripts/repro-p1-ablation" "$HRM" "$TMP/a" >"$TMP/one" || fail "ablation script failed"
for row in "default (1 Gb core)" "preempt resume" "nj_unfinished=1" "disk 640 MB/s" "durations x 4" \
           "paper=1 (delay 0" "no clamp (clamp=0)"; do
  grep -qF "$row" "$TMP/one" || fail "no row '$row'"
done
grep -q "FS vs capacity" "$TMP/one" || fail "no YARN comparison"

# P1 "jobs alone" spec (docs/reproduction-p1.md): same workload as the 6-parallel testbed, one job at a time, no preemption.
. "$(dirname "$0")/lib.sh"
ex="$HRM_ROOT/examples"
bash -n "$HRM_ROOT/scripts/repro-p1" || fail "scripts/repro-p1 does not parse"
# The alone workload is p1-workload.json with max_parallel 1 and nothing else changed.
python3 - "$ex/p1-workload.json" "$ex/p1-alone-workload.json" <<'PY' || fail "p1-alone-workload.json drifted from p1-workload.json"
import json, sys
par, alone = (json.load(open(f)) for f in sys.argv[1:])
assert par["max_parallel"] == 6 and alone["max_parallel"] == 1, (par["max_parallel"], alone["max_parallel"])
for w in (par, alone):
    del w["max_parallel"], w["comment"]
assert par == alone, "the workloads differ beyond max_parallel and comment"
PY
pols=gs,gsp,fs,fsp
"$HRM" sim "$ex/p1-testbed-alone.json" --policy "$pols" -q --json --csv "$TMP/alone" >"$TMP/alone.json"
"$HRM" sim "$ex/p1-testbed.json" --policy gs,fs -q --csv "$TMP/par" >/dev/null
python3 - "$TMP" "$pols" <<'PY'
import csv, json, sys
tmp, pols = sys.argv[1], sys.argv[2].split(",")
def jobs(d, p):
    rows = list(csv.DictReader(open(f"{tmp}/{d}/{p}-jobs.csv")))
    assert len(rows) == 36 and all(r["end_s"] for r in rows), f"{d}/{p}: not every job ended"
    return [(float(r["start_s"]), float(r["end_s"]), int(r["job"])) for r in rows]
def most_at_once(js):  # largest number of jobs running at one instant (a job ending at t does not overlap one starting at t)
    ev = sorted([(s, 1) for s, _, _ in js] + [(e, -1) for _, e, _ in js])
    n = best = 0
    for _, d in ev:
        n += d; best = max(best, n)
    return best
for p in pols:
    js = jobs("alone", p)
    assert most_at_once(js) == 1, f"alone/{p}: jobs overlap"
    assert [j for _, _, j in sorted(js)] == list(range(36)), f"alone/{p}: jobs not run in list order"
for p in ("gs", "fs"):
    assert most_at_once(jobs("par", p)) == 6, f"p1-testbed/{p}: not 6 jobs at once"
r = {x["policy"]: x for x in json.load(open(f"{tmp}/alone.json"))}
assert all(x["preemptions"] == 0 for x in r.values()), "a job alone was preempted"
strip = lambda x: {k: v for k, v in x.items() if k != "policy"}
assert strip(r["gsp"]) == strip(r["gs"]), "alone: gsp differs from gs"
assert strip(r["fsp"]) == strip(r["fs"]), "alone: fsp differs from fs"
PY

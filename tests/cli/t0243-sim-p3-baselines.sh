# P3's baselines SDASA and Difference as policies: listed, documented, a hand-worked placement, bad parameters.
. "$(dirname "$0")/lib.sh"
need python3
"$HRM" sim --list-policies >"$TMP/list"
for p in sdasa difference nparsa; do
  grep -q "^$p " "$TMP/list" || fail "--list-policies lacks $p"
done
"$HRM" sim --help >"$TMP/help"
matches -F "sdasa.weights" "$TMP/help" || fail "--help does not document sdasa.weights"
matches -F "difference.threshold" "$TMP/help" || fail "--help does not document difference.threshold"
# Two nodes of 2 cores, 4 GiB, 100 MB/s disks; a CPU-intensive job (J = 1) of two 1 s tasks
# touching 2.5 GiB each.  Difference packs the job (a loaded node is nearer its ideal load:
# low cpu, high memory use), the second task spills 1 GiB to the disk: 1 s + 21.474836 s.
# NPARSA and SDASA spread it (free cpu weighs most): 1 s.
cat >"$TMP/spec.json" <<'JSON'
{"cluster": {"network": {"latency": "0us"},
             "nodes": [{"name": "n", "count": 2, "cores": 2, "mem": "4G", "disk_bw": "100MB/s"}]},
 "workload": {"jobs": [{"name": "j", "tasks": 2,
                        "task": {"cpu": 1, "mem": "1G", "duration": "1s",
                                 "memory": {"working_set": "2560M"}}}]},
 "sim": {"policies": ["difference", "sdasa", "nparsa"]}}
JSON
"$HRM" sim "$TMP/spec.json" -q --json >"$TMP/out.json"
python3 - "$TMP/out.json" <<'PY' || fail "placements differ from the worked example"
import json, sys
r = {x["policy"]: x for x in json.load(open(sys.argv[1]))}
assert abs(r["difference"]["makespan_s"] - 22.474836) < 1e-6, r["difference"]["makespan_s"]
assert r["sdasa"]["makespan_s"] == 1.0, r["sdasa"]
assert r["nparsa"]["makespan_s"] == 1.0, r["nparsa"]
PY
# Every SDASA weight set runs; bad parameters are named.
for w in mean cpu memory equal; do
  "$HRM" sim "$TMP/spec.json" -q --policy sdasa --param sdasa.weights=$w >/dev/null ||
    fail "sdasa.weights=$w did not run"
done
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy sdasa --param sdasa.weights=heavy
matches -F "'weights' must be mean, cpu, memory or equal" "$TMP/err" || fail "bad weights: $(cat "$TMP/err")"
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy difference --param difference.threshold=0
matches -F "policy 'difference': parameter 'threshold'" "$TMP/err" || fail "bad threshold: $(cat "$TMP/err")"
expect_exit 2 "$HRM" sim "$TMP/spec.json" -q --policy difference --param difference.alpha=1
matches -F "unknown parameter 'alpha'" "$TMP/err" || fail "unknown key: $(cat "$TMP/err")"

# hrm trace: import a hand-written trace, run hrm sim on it, report bad rows with file:line, pack it (frag).
. "$(dirname "$0")/lib.sh"
need python3
data="$HRM_ROOT/tests/data/trace"
expect_exit 0 "$HRM" trace --help;         grep -q "usage: hrm trace" "$TMP/out" || fail "trace --help"
expect_exit 0 "$HRM" trace import --help;  grep -q "usage: hrm trace import" "$TMP/out" || fail "import --help"
expect_exit 0 "$HRM" trace frag --help;    grep -q "usage: hrm trace frag" "$TMP/out" || fail "frag --help"
expect_exit 2 "$HRM" trace;                grep -q "usage" "$TMP/err" || fail "no trace command"
expect_exit 2 "$HRM" trace nosuch;         grep -q "unknown command 'nosuch'" "$TMP/err" || fail "unknown"
expect_exit 2 "$HRM" trace import google-2019 --nodes "$data/nodes.csv" --pods "$data/pods.csv"
grep -q "alibaba-gpu-v2023" "$TMP/err" || fail "unknown format not explained"
expect_exit 2 "$HRM" trace import alibaba-gpu-v2023 --nodes "$data/nodes.csv"
grep -q -- "--pods" "$TMP/err" || fail "missing --pods not named"
expect_exit 2 "$HRM" trace import alibaba-gpu-v2023 --nodes "$TMP/missing.csv" --pods "$data/pods.csv"
grep -q "missing.csv: cannot open" "$TMP/err" || fail "missing file not named"
# hrm does not ship the real trace: a missing file says where to get it and where to put it.
grep -q "https://github.com/alibaba/clusterdata/tree/master/cluster-trace-gpu-v2023/csv" "$TMP/err" ||
  fail "missing trace: no source given: $(cat "$TMP/err")"
grep -q "data/alibaba-gpu-v2023/" "$TMP/err" || fail "missing trace: no destination given"

# A clean import runs under hrm sim, and the same input gives the same bytes.
expect_exit 0 "$HRM" trace import alibaba-gpu-v2023 --nodes "$data/nodes.csv" \
  --pods "$data/pods.csv" --out "$TMP/spec.json" --sample-interval 1s
grep -q "6 jobs (3 stream, 3 batch)" "$TMP/err" || fail "summary: $(cat "$TMP/err")"
grep -q "1 pods never scheduled" "$TMP/err" || fail "pending pods not counted"
"$HRM" trace import alibaba-gpu-v2023 --nodes "$data/nodes.csv" --pods "$data/pods.csv" \
  --sample-interval 1s -q >"$TMP/spec2.json"
cmp "$TMP/spec.json" "$TMP/spec2.json" || fail "--out and stdout differ"
expect_exit 0 "$HRM" sim "$TMP/spec.json" --policy fifo,drf --json -q
python3 - "$TMP/out" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
assert [r["policy"] for r in runs] == ["fifo", "drf"], runs
for r in runs:
    assert r["jobs_done"] == 6, r
    assert 0 < r["gpu_util"] <= 1 and 0 < r["cpu_util"] <= 1, r
PY

# Bad rows: each reported as file:line: reason, skipped, counted; --strict refuses.
expect_exit 0 "$HRM" trace import alibaba-gpu-v2023 --nodes "$data/nodes.csv" \
  --pods "$data/bad_pods.csv" --out "$TMP/bad.json"
grep -q "bad_pods.csv:3: cpu_milli '12x' is not an integer" "$TMP/err" || fail "bad cpu row: $(cat "$TMP/err")"
grep -q "bad_pods.csv:7: quote inside an unquoted field" "$TMP/err" || fail "bad quote row"
grep -q "bad_pods.csv:10: pod 'bad-nofit'.* fits no node" "$TMP/err" || fail "no-fit row"
grep -q "8 bad rows skipped" "$TMP/err" || fail "bad-row count: $(cat "$TMP/err")"
expect_exit 0 "$HRM" sim "$TMP/bad.json" --policy fifo -q
expect_exit 2 "$HRM" trace import alibaba-gpu-v2023 --strict --nodes "$data/nodes.csv" \
  --pods "$data/bad_pods.csv" --out "$TMP/strict.json"
grep -q "bad_pods.csv:3:.*--strict: refused" "$TMP/err" || fail "strict: $(cat "$TMP/err")"
[ ! -e "$TMP/strict.json" ] || fail "a refused import wrote its --out file"
expect_exit 2 "$HRM" trace import alibaba-gpu-v2023 --nodes "$data/nodes.csv" \
  --pods "$data/pods.csv" --gpu-mem 16
grep -q -- "--gpu-mem" "$TMP/err" || fail "bad --gpu-mem"

# Fragmentation experiment: every policy, deterministic in the seed.
expect_exit 0 "$HRM" trace frag --nodes "$data/nodes.csv" --pods "$data/pods.csv" --runs 2 \
  --seed 3 --until 120
cp "$TMP/out" "$TMP/frag1"
for p in bestfit exclusive hrm fgd; do grep -q "^$p " "$TMP/frag1" || fail "frag: $p missing"; done
"$HRM" trace frag --nodes "$data/nodes.csv" --pods "$data/pods.csv" --runs 2 --seed 3 \
  --until 120 >"$TMP/frag2"
cmp "$TMP/frag1" "$TMP/frag2" || fail "frag differs between identical runs"
expect_exit 2 "$HRM" trace frag --nodes "$data/nodes.csv" --pods "$data/pods.csv" --policy nosuch
grep -q "'nosuch' is not one of" "$TMP/err" || fail "bad frag policy"

# The synthetic stand-in (data/README.md) is exactly what its generator writes, and the whole
# trace path runs on it from the repository alone: import, sim, frag.
standin="$HRM_ROOT/data/alibaba-gpu-v2023-standin"
python3 "$HRM_ROOT/scripts/make-trace-standin" "$TMP/standin"
for f in openb_node_list_all_node.csv openb_pod_list_default.csv openb_pod_list_gpushare100.csv; do
  cmp "$standin/$f" "$TMP/standin/$f" || fail "stand-in $f differs from scripts/make-trace-standin"
done
expect_exit 0 "$HRM" trace import alibaba-gpu-v2023 --strict \
  --nodes "$standin/openb_node_list_all_node.csv" --pods "$standin/openb_pod_list_default.csv" \
  --out "$TMP/standin.json"
grep -q "^hrm trace import: 18 nodes, 357 jobs" "$TMP/err" || fail "stand-in import: $(cat "$TMP/err")"
expect_exit 0 "$HRM" sim "$TMP/standin.json" --policy fifo,hrm --json -q
python3 - "$TMP/out" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
assert [r["policy"] for r in runs] == ["fifo", "hrm"], runs
assert all(r["jobs_done"] == 357 for r in runs), runs
PY
expect_exit 0 "$HRM" trace frag --nodes "$standin/openb_node_list_all_node.csv" \
  --pods "$standin/openb_pod_list_gpushare100.csv" --runs 1 --seed 1
for p in bestfit exclusive hrm fgd; do grep -q "^$p " "$TMP/out" || fail "stand-in frag: $p missing"; done

# scripts/repro-p0-trace without the real trace: exit 2, saying where to get it and put it.
expect_exit 2 bash "$HRM_ROOT/scripts/repro-p0-trace" "$HRM" "$TMP/p0t" "$TMP/nosuch"
grep -q "https://github.com/alibaba/clusterdata" "$TMP/err" || fail "repro-p0-trace: no source: $(cat "$TMP/err")"
grep -q "cluster-trace-gpu-v2023/csv/" "$TMP/err" || fail "repro-p0-trace: no source folder"
grep -q "$TMP/nosuch/" "$TMP/err" || fail "repro-p0-trace: no destination"
grep -q "data/alibaba-gpu-v2023-standin" "$TMP/err" || fail "repro-p0-trace: stand-in not offered"
[ ! -e "$TMP/p0t" ] || fail "repro-p0-trace wrote output without a trace"
expect_exit 0 "$HRM" trace import --help
grep -q "https://github.com/alibaba/clusterdata/tree/master/cluster-trace-gpu-v2023/csv" "$TMP/out" ||
  fail "import --help does not say where to get the trace"

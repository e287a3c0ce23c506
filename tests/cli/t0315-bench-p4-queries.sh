# bench/p4-testbed --tpch and hrm bench p4real's queries: a '>' line is the next stage of the query above it, sent only once the stage before it has ended; each query of several stages gets a QUERY line (response from its first send to its last end, ideal the sum of its stages'); the --tpch testbed reports per query and its simulator spec chains the same stages.  Bad query lines are refused with the line named.  No timing is asserted.
. "$(dirname "$0")/lib.sh"
need python3 timeout
TB=$HRM_ROOT/bench/p4-testbed

# Bad input: a stage that follows nothing, a stage without run times.
printf '> 100 100\n' >"$TMP/first.txt"
expect_exit 2 "$HRM" bench p4real --workload "$TMP/first.txt"
matches "first.txt:1: a '>' stage follows no job" <"$TMP/err" || fail "a leading stage is not named: $(cat "$TMP/err")"
printf '0 100\n>\n' >"$TMP/empty.txt"
expect_exit 2 "$HRM" bench p4real --workload "$TMP/empty.txt"
matches "empty.txt:2" <"$TMP/err" || fail "a stage without run times is not named: $(cat "$TMP/err")"
expect_exit 0 "$HRM" bench p4real --help
matches "QUERY" <"$TMP/out" || fail "--help does not document the QUERY lines"
expect_exit 0 "$TB" --help
matches -- "--tpch" <"$TMP/out" || fail "bench/p4-testbed --help does not document --tpch"

# A query of three stages and a job of one stage, replayed on one agent of two slots.
printf '0 200 200\n> 150 150\n> 100\n0.05 100\n' >"$TMP/q.txt"
expect_exit 0 timeout 300 "$HRM" bench p4real --workload "$TMP/q.txt" --nodes 1 --cpus 2 --state "$TMP/st"
cp "$TMP/out" "$TMP/q.out"
[ "$(grep -c '^QUERY ' "$TMP/q.out")" = 1 ] || fail "expected one QUERY line: $(grep '^QUERY' "$TMP/q.out")"
matches -E "^QUERY 0 3 [0-9.]+ [0-9.]+ done$" <"$TMP/q.out" || fail "the query's line: $(grep '^QUERY' "$TMP/q.out")"
matches "^BENCH p4real.jobs_ended 4 " <"$TMP/q.out" || fail "not every stage ended"
# Each stage was sent after the stage before it ended (the same host's clock); the query's
# response covers its stages' and its ideal is the sum of theirs.
awk '$1 == "JOB" { resp[$2] = $4; ideal[$2] = $5 } $1 == "ID" { sent[$2] = $4 / 1000 }
     $1 == "QUERY" { qr = $4; qi = $5 }
     END { bad = 0
       for (k = 1; k <= 2; k++) if (sent[k] < sent[k - 1] + resp[k - 1]) { print "stage " k " sent before stage " k - 1 " ended"; bad = 1 }
       if (qr + 0.01 < sent[2] - sent[0] + resp[2]) { print "query response " qr " short of its last stage end"; bad = 1 }
       s = ideal[0] + ideal[1] + ideal[2]; if (qi < s - 0.01 || qi > s + 0.01) { print "query ideal " qi " is not " s; bad = 1 }
       if (qr < qi) { print "query response below its ideal"; bad = 1 }
       exit bad }' "$TMP/q.out" >&2 || fail "the query's stages were not chained"

# The --tpch testbed, tiny: figures per query, the same queries in the simulator.
expect_exit 0 timeout 600 "$TB" "$HRM" --tpch --nodes 2 --cpus 4 --loads 30 --seconds 3 \
  --policies drf,dhrm-nego --sched-procs 1 --keep "$TMP/k"
cp "$TMP/out" "$TMP/tb.out"
matches "^checks: .*: ok$" <"$TMP/tb.out" || fail "the checks did not pass: $(tail -5 "$TMP/tb.out")"
matches -E "^== load 30 %: [0-9]+ queries of [0-9]+ jobs" <"$TMP/tb.out" || fail "no per-query table"
for k in drf dhrm_nego; do
  matches "^BENCH p4_real_tpch\.$k\.p50_over_ideal_30 [0-9.]" <"$TMP/tb.out" || fail "no BENCH p4_real_tpch.$k"
  matches "^BENCH p4_sim_tpch\.$k\.p50_over_ideal_30 [0-9.]" <"$TMP/tb.out" || fail "no BENCH p4_sim_tpch.$k"
done
wl=$TMP/k/load30.txt
queries=$(grep -c '^[0-9]' "$wl")
stages=$(grep -vc '^#' "$wl")
[ "$queries" -ge 1 ] && [ "$stages" -ge $((2 * queries)) ] || fail "not queries of 2+ stages: $queries / $stages"
for p in drf dhrm-nego; do
  [ "$(grep -c '^QUERY ' "$TMP/k/load30-$p.out")" = "$queries" ] || fail "$p: not one QUERY line per query"
done
python3 - "$TMP/k/load30-sim.json" "$queries" "$stages" <<'P' || fail "the sim spec does not chain the workload's stages"
import json, sys
spec = json.load(open(sys.argv[1]))
chains = [[(len(st["tasks"]), st.get("deps", []), st["name"]) for st in q["stages"]]
          for q in spec["workload"]["jobs"]]
want_q, want_s = int(sys.argv[2]), int(sys.argv[3])
ok = len(chains) == want_q and sum(map(len, chains)) == want_s and all(
    n == 30 and deps == ([c[k - 1][2]] if k else []) for c in chains for k, (n, deps, _) in enumerate(c))
node = spec["cluster"]["nodes"][0]
sys.exit(0 if ok and (node["count"], node["cores"]) == (2, 4) else 1)
P
echo ok

# scripts/make-trace-standin DIR SEED: seed 1 writes the shipped stand-in byte for byte, another
# seed other pod lists of the same form, which hrm trace frag reads; a bad seed is refused.
. "$(dirname "$0")/lib.sh"
need python3
gen="$HRM_ROOT/scripts/make-trace-standin"
shipped="$HRM_ROOT/data/alibaba-gpu-v2023-standin"
expect_exit 0 "$gen" "$TMP/s1" 1
for f in openb_node_list_all_node.csv openb_pod_list_default.csv openb_pod_list_gpushare100.csv; do
  cmp -s "$TMP/s1/$f" "$shipped/$f" || fail "seed 1: $f differs from the shipped stand-in"
done
expect_exit 0 "$gen" "$TMP/s7" 7
cmp -s "$TMP/s7/openb_pod_list_default.csv" "$shipped/openb_pod_list_default.csv" &&
  fail "seed 7 wrote the same default list as seed 1"
head -1 "$TMP/s7/openb_pod_list_default.csv" | cmp -s - <(head -1 "$shipped/openb_pod_list_default.csv") ||
  fail "seed 7: another header"
expect_exit 0 "$HRM" trace frag --nodes "$TMP/s7/openb_node_list_all_node.csv" \
  --pods "$TMP/s7/openb_pod_list_gpushare100.csv" -p hrm,fgd --runs 2
grep -q "^hrm " "$TMP/out" && grep -q "^fgd " "$TMP/out" || fail "frag on seed 7: no rows"
expect_exit 1 "$gen" "$TMP/bad" seven
grep -q "SEED" "$TMP/err" || fail "bad seed not named: $(cat "$TMP/err")"

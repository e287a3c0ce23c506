# hrm trace frag: P0's placement (hrm) leaves no more GPU capacity unallocated than FGD after
# arrivals of 130 % on the stand-in's pod lists, and the frag replay is deterministic.
. "$(dirname "$0")/lib.sh"
standin="$HRM_ROOT/data/alibaba-gpu-v2023-standin"
# free % of POLICY after arrivals of 130 % in the output file OUT
free_at_130() {
  awk -v p="$2" '/after arrivals of 130%/ { m = 1; next } /^$/ { m = 0 } m && $1 == p { print $5 }' "$1"
}
for list in default gpushare100; do
  expect_exit 0 "$HRM" trace frag --nodes "$standin/openb_node_list_all_node.csv" \
    --pods "$standin/openb_pod_list_$list.csv" -p hrm,fgd --runs 10 --seed 1
  cp "$TMP/out" "$TMP/$list.txt"
  hrm_free=$(free_at_130 "$TMP/$list.txt" hrm)
  fgd_free=$(free_at_130 "$TMP/$list.txt" fgd)
  [ -n "$hrm_free" ] && [ -n "$fgd_free" ] || { cat "$TMP/$list.txt" >&2; fail "$list: no 130 % rows"; }
  awk -v h="$hrm_free" -v f="$fgd_free" 'BEGIN { exit !(h <= f) }' ||
    fail "$list: hrm leaves $hrm_free % of the GPUs unallocated, FGD $fgd_free %"
  # same input, same bytes
  "$HRM" trace frag --nodes "$standin/openb_node_list_all_node.csv" \
    --pods "$standin/openb_pod_list_$list.csv" -p hrm,fgd --runs 10 --seed 1 >"$TMP/again.txt"
  cmp -s "$TMP/$list.txt" "$TMP/again.txt" || fail "$list: two runs differ"
done

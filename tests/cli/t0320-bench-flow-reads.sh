# hrm bench flow-incr reports, per kind of change, the mean number of shortest-path searches per
# re-solve and the arcs they read (hrm_flow_stats' arcs_read): a positive count where the
# re-solves search, on a P1 graph and on a NETGEN one.
. "$(dirname "$0")/lib.sh"

"$HRM" bench flow-incr p1 --algo ssp --repeat 3 --gpus 200 --jobs 5 --tasks-per-job 40 \
  --name t >"$TMP/p1.out" 2>"$TMP/p1.err" || fail "p1: $(cat "$TMP/p1.err")"
for k in task-end job-arrive node-dies arc-cost batch; do
  line=$(grep "^flow-incr: p1 t $k: per re-solve " "$TMP/p1.err") || fail "p1: no reads line for $k: $(cat "$TMP/p1.err")"
  echo "$line" | grep -Eq "per re-solve [0-9]+\.[0-9]{2} searches reading [0-9]+ arcs$" ||
    fail "p1: malformed: $line"
done
for k in task-end job-arrive batch; do
  reads=$(sed -n "s/^flow-incr: p1 t $k: per re-solve [0-9.]* searches reading \([0-9]*\) arcs$/\1/p" "$TMP/p1.err")
  [ "${reads:-0}" -gt 0 ] || fail "p1: $k read no arcs: $(cat "$TMP/p1.err")"
done
! grep -q "CHECK FAILED" "$TMP/p1.err" || fail "p1: $(cat "$TMP/p1.err")"

"$HRM" bench flow-incr netgen --repeat 1 --kind job-arrive >"$TMP/ng.out" 2>"$TMP/ng.err" ||
  fail "netgen: $(cat "$TMP/ng.err")"
grep -Eq "^flow-incr: netgen S job-arrive: per re-solve [0-9.]+ searches reading [0-9]+ arcs$" \
  "$TMP/ng.err" || fail "netgen: $(cat "$TMP/ng.err")"
echo ok

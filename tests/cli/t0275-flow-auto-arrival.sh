# Under --algo auto (what the P1 policies run) a job's arrival is re-solved warm in a few
# shortest-path searches, as under --algo scaling: the new job's vertices are priced from the
# sink side, so its flow enters at its source arc (before, auto took 7-17 searches of the whole
# graph). Every re-solve is checked against a from-scratch solve by the bench itself.
. "$(dirname "$0")/lib.sh"

for shape in "--gpus 200 --jobs 10 --tasks-per-job 40 --job-tasks 30" \
             "--gpus 120 --jobs 6 --tasks-per-job 25 --job-tasks 60 --gpus-per-machine 2"; do
  for fam in p1 p1-rack; do
    for algo in auto ssp; do
      # shellcheck disable=SC2086
      "$HRM" bench flow-incr $fam $shape --algo $algo --repeat 3 --kind job-arrive --name t \
        >"$TMP/out" 2>"$TMP/err" || fail "$fam $algo $shape: $(cat "$TMP/err")"
      ! grep -q "CHECK FAILED" "$TMP/err" || fail "$fam $algo $shape: $(cat "$TMP/err")"
      grep -q "^BENCH flow_incr.$fam.t.job-arrive.ratio_vs_scratch " "$TMP/out" ||
        fail "$fam $algo $shape: no figure: $(cat "$TMP/out")"
      phases=$(sed -n "s/^flow-incr: $fam t job-arrive: last re-solve warm, \([0-9]*\) phases$/\1/p" "$TMP/err")
      [ -n "$phases" ] || fail "$fam $algo $shape: re-solve not warm: $(cat "$TMP/err")"
      [ "$phases" -le 3 ] || fail "$fam $algo $shape: a job arrival took $phases searches (at most 3)"
    done
  done
done
echo ok

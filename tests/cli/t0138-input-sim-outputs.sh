# hrm sim output folders are made and checked before the simulation runs; plots name their spec, bin long series and leave out the GPU panel of a CPU-only cluster.
. "$(dirname "$0")/lib.sh"
need gnuplot
SPEC="$HRM_ROOT/examples/poisson.json"
touch "$TMP/afile"
# A --plot or --csv folder that cannot be made: the run stops before simulating (no table).
expect_exit 1 "$HRM" sim "$SPEC" -q --policy fifo --plot "$TMP/afile/plots"
grep -q -- "--plot: .*afile" "$TMP/err" || fail "plot: $(cat "$TMP/err")"
[ ! -s "$TMP/out" ] || fail "simulated before checking --plot"
expect_exit 1 "$HRM" sim "$SPEC" -q --policy fifo --csv "$TMP/afile/csv"
grep -q -- "--csv: .*afile" "$TMP/err" || fail "csv: $(cat "$TMP/err")"
[ ! -s "$TMP/out" ] || fail "simulated before checking --csv"
expect_exit 1 "$HRM" sim "$SPEC" -q --policy fifo --sweep-load 40:50:10 --plot "$TMP/afile/sweep"
[ ! -s "$TMP/out" ] || fail "swept before checking --plot"
# Missing parents are made, for the sweep too.
expect_exit 0 "$HRM" sim "$SPEC" -q --policy fifo --sweep-load 40:50:10 --plot "$TMP/new/a/sweep"
[ -s "$TMP/new/a/sweep/response-vs-load.png" ] || fail "no sweep plot"
grep -q "poisson.json" "$TMP/new/a/sweep/load-sweep.gp" || fail "the sweep plot does not name its spec"
# A CPU-only cluster: no GPU panel; every plot names the spec.
expect_exit 0 "$HRM" sim "$SPEC" -q --policy fifo,drf --plot "$TMP/p/cpu"
[ -s "$TMP/p/cpu/utilisation.png" ] || fail "no utilisation plot"
! grep -q "GPU utilisation" "$TMP/p/cpu/plot.gp" || fail "a GPU panel for a cluster without GPUs"
[ "$(grep -c "poisson.json" "$TMP/p/cpu/plot.gp")" -ge 2 ] || fail "a plot does not name its spec"
# GPU phases sampled thousands of times: the GPU panel shows a mean per time bin.
G="$HRM_ROOT/examples/p0-gpu-stacking-light.json"
expect_exit 0 "$HRM" sim "$G" -q --plot "$TMP/p/gpu"
grep -q "GPU utilisation (%), mean per bin" "$TMP/p/gpu/plot.gp" || fail "no GPU panel"
grep -q "smooth unique" "$TMP/p/gpu/plot.gp" || fail "long series not binned"
[ -s "$TMP/p/gpu/utilisation.png" ] || fail "no GPU plot"
echo ok

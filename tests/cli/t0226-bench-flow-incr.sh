# hrm bench flow-incr: every change kind is re-solved warm and checked against a from-scratch
# solve on a P1 graph and a NETGEN one (BENCH lines per kind, exit 0); bad input is refused with
# the flag named (exit 2) and prints no figure.
. "$(dirname "$0")/lib.sh"

"$HRM" bench flow-incr p1 --algo scaling --repeat 2 --gpus 200 --jobs 5 --tasks-per-job 40 \
  --name t >"$TMP/p1.out" 2>"$TMP/p1.err" || fail "p1: $(cat "$TMP/p1.err")"
for k in task-end job-arrive node-dies arc-cost batch; do
  grep -q "^BENCH flow_incr.p1.t.$k.ratio_vs_scratch [0-9.]* ratio$" "$TMP/p1.out" ||
    fail "p1: no ratio for $k: $(cat "$TMP/p1.out")"
  grep -q "flow-incr: p1 t $k: last re-solve warm" "$TMP/p1.err" || fail "p1: $k not warm: $(cat "$TMP/p1.err")"
done
! grep -q "CHECK FAILED" "$TMP/p1.err" || fail "p1: $(cat "$TMP/p1.err")"

"$HRM" bench flow-incr netgen --algo scaling --repeat 1 --kind batch >"$TMP/ng.out" 2>"$TMP/ng.err" ||
  fail "netgen: $(cat "$TMP/ng.err")"
grep -q "^BENCH flow_incr.netgen.S.batch.cpu_ms " "$TMP/ng.out" || fail "netgen: $(cat "$TMP/ng.out")"
[ "$(grep -c '\.cpu_ms ' "$TMP/ng.out")" = 1 ] || fail "--kind batch ran other kinds: $(cat "$TMP/ng.out")"

expect_exit 2 "$HRM" bench flow-incr nosuch
grep -q "unknown family 'nosuch'" "$TMP/err" || fail "family: $(cat "$TMP/err")"
expect_exit 2 "$HRM" bench flow-incr p1 --kind reboot
grep -q -- "--kind: 'reboot' is not" "$TMP/err" || fail "kind: $(cat "$TMP/err")"
expect_exit 2 "$HRM" bench flow-incr goto --gpus 10
grep -q -- "--gpus.* apply to p1 and p1-rack only" "$TMP/err" || fail "gpus: $(cat "$TMP/err")"
expect_exit 2 "$HRM" bench flow-incr p1 --repeat 0
grep -q -- "--repeat" "$TMP/err" || fail "repeat: $(cat "$TMP/err")"
! grep -q "^BENCH" "$TMP/out" || fail "a refused run printed figures"
echo ok

# hrm bench flow --algo auto (the default) runs the network simplex on random families (many
# distinct costs) of size S (below 5,000 vertices: t0250 covers larger ones) and shortest paths on P1 scheduling graphs (few), in both the DIMACS supply
# form and the max-flow form, with the same optimal cost as the engine it did not choose.
. "$(dirname "$0")/lib.sh"

engine() { sed -n 's/^flow: full solve: \(warm \)\{0,1\}\(network simplex\|shortest paths\|cost scaling\),.*/\2/p' "$1"; }
cost() { sed -n 's/^BENCH flow.cost \([-0-9]*\) .*/\1/p' "$1"; }

check() { # FAMILY EXPECTED-ENGINE OTHER-ALGO
  "$HRM" bench flow-gen "$1" --size S --seed 2 --out "$TMP/$1.min"
  "$HRM" bench flow --dimacs "$TMP/$1.min" --full 1 --repeat 2 >"$TMP/a.out" 2>"$TMP/a.err" ||
    fail "$1: auto failed: $(cat "$TMP/a.err")"
  [ "$(engine "$TMP/a.err")" = "$2" ] || fail "$1: auto ran '$(engine "$TMP/a.err")', expected $2"
  "$HRM" bench flow --dimacs "$TMP/$1.min" --algo "$3" --full 1 --repeat 0 >"$TMP/o.out" 2>"$TMP/o.err" ||
    fail "$1: $3 failed: $(cat "$TMP/o.err")"
  [ "$(cost "$TMP/a.out")" = "$(cost "$TMP/o.out")" ] ||
    fail "$1: auto cost $(cost "$TMP/a.out"), $3 $(cost "$TMP/o.out")"
}
check netgen "network simplex" ssp
check gridgen "network simplex" ssp
check goto "network simplex" ssp
check p1 "shortest paths" simplex
check p1-rack "shortest paths" simplex

# the max-flow form of P1 (what the flow policies solve): shortest paths, warm after a task ends
"$HRM" bench flow --gpus 200 --jobs 10 --tasks-per-job 30 --full 1 --repeat 2 >"$TMP/m.out" 2>"$TMP/m.err" ||
  fail "max form: $(cat "$TMP/m.err")"
[ "$(engine "$TMP/m.err")" = "shortest paths" ] || fail "max form: auto ran '$(engine "$TMP/m.err")'"
grep -q "task end: warm shortest paths" "$TMP/m.err" || fail "max form re-solve: $(cat "$TMP/m.err")"
"$HRM" bench flow --gpus 200 --jobs 10 --tasks-per-job 30 --algo simplex --full 1 --repeat 2 >"$TMP/s.out" 2>"$TMP/s.err" ||
  fail "max form simplex: $(cat "$TMP/s.err")"
grep -q "task end: warm network simplex" "$TMP/s.err" || fail "simplex after a task end: $(cat "$TMP/s.err")"
grep -q "warm result equals a from-scratch solve" "$TMP/s.err" || fail "simplex warm: $(cat "$TMP/s.err")"
[ "$(cost "$TMP/m.out")" = "$(cost "$TMP/s.out")" ] || fail "max form: auto $(cost "$TMP/m.out"), simplex $(cost "$TMP/s.out")"
echo ok

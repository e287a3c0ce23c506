# hrm bench flow --algo auto (the default) on graphs with many distinct costs: the network simplex
# below 5,000 vertices, cost scaling from 5,000 on, each with the optimal cost of the engine it
# did not choose.
. "$(dirname "$0")/lib.sh"

engine() { sed -n 's/^flow: full solve: \(warm \)\{0,1\}\(network simplex\|shortest paths\|cost scaling\),.*/\2/p' "$1"; }
cost() { sed -n 's/^BENCH flow.cost \([-0-9]*\) .*/\1/p' "$1"; }

check() { # NODES EXPECTED-ENGINE OTHER-ALGO
  "$HRM" bench flow-gen netgen --nodes "$1" --arcs $(($1 * 2)) --sources 20 --sinks 20 --supply 20000 \
    --seed 5 --out "$TMP/n$1.min"
  "$HRM" bench flow --dimacs "$TMP/n$1.min" --full 1 --repeat 0 >"$TMP/a.out" 2>"$TMP/a.err" ||
    fail "$1 vertices: auto failed: $(cat "$TMP/a.err")"
  [ "$(engine "$TMP/a.err")" = "$2" ] || fail "$1 vertices: auto ran '$(engine "$TMP/a.err")', expected $2"
  "$HRM" bench flow --dimacs "$TMP/n$1.min" --algo "$3" --full 1 --repeat 0 >"$TMP/o.out" 2>"$TMP/o.err" ||
    fail "$1 vertices: $3 failed: $(cat "$TMP/o.err")"
  [ -n "$(cost "$TMP/a.out")" ] || fail "$1 vertices: no cost printed"
  [ "$(cost "$TMP/a.out")" = "$(cost "$TMP/o.out")" ] ||
    fail "$1 vertices: auto cost $(cost "$TMP/a.out"), $3 $(cost "$TMP/o.out")"
}
check 3000 "network simplex" scaling
check 6000 "cost scaling" simplex
echo ok

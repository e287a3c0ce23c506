# hrm bench flow-gen: --help documents every parameter with its default; a small instance of each
# family is written as DIMACS, is the same file for the same seed, and is solved by hrm bench flow
# with the same optimal cost by cost scaling and by successive shortest paths; bad flags are
# refused naming the flag (exit 2) and write nothing.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "$HRM" bench flow-gen --help
for w in netgen gridgen goto p1 p1-rack --size --seed --out --nodes --arcs --sources --sinks \
  --supply --rows --cols --cost-min --cost-max --cap-min --cap-max --gpus --jobs --tasks-per-job \
  --gpus-per-machine --machines-per-rack; do
  matches -e "$w" "$TMP/out" || fail "--help does not mention $w"
done
"$HRM" bench --help | matches flow-gen || fail "hrm bench --help does not list flow-gen"

cost() { sed -n 's/^BENCH flow.cost \([0-9-]*\) .*/\1/p' "$1"; }
# family and small parameters
while read -r fam params; do
  # shellcheck disable=SC2086
  expect_exit 0 "$HRM" bench flow-gen "$fam" --seed 3 $params --out "$TMP/$fam.min"
  # shellcheck disable=SC2086
  "$HRM" bench flow-gen "$fam" --seed 3 $params >"$TMP/$fam.again.min"
  cmp -s "$TMP/$fam.min" "$TMP/$fam.again.min" || fail "$fam: the same seed wrote two files"
  # shellcheck disable=SC2086
  "$HRM" bench flow-gen "$fam" --seed 4 $params >"$TMP/$fam.other.min"
  ! cmp -s "$TMP/$fam.min" "$TMP/$fam.other.min" || fail "$fam: seeds 3 and 4 wrote the same file"
  matches -x 'p min [0-9]* [0-9]*' "$TMP/$fam.min" || fail "$fam: no 'p min' line"
  expect_exit 0 "$HRM" bench flow --dimacs "$TMP/$fam.min" --algo scaling --full 1 --repeat 0
  c1=$(cost "$TMP/out")
  expect_exit 0 "$HRM" bench flow --dimacs "$TMP/$fam.min" --algo ssp --full 1 --repeat 0
  c2=$(cost "$TMP/out")
  [ -n "$c1" ] && [ "$c1" = "$c2" ] || fail "$fam: scaling cost '$c1', ssp cost '$c2'"
done <<'LIST'
netgen --nodes 150 --arcs 900 --sources 4 --sinks 6 --supply 500
gridgen --rows 8 --cols 9 --arcs 400 --sources 3 --sinks 2 --supply 300
goto --rows 8 --cols 8 --arcs 512 --supply 5000
p1 --gpus 80 --jobs 6 --tasks-per-job 12
p1-rack --gpus 80 --jobs 6 --tasks-per-job 12
LIST
grep -q '^p min 150 900$' "$TMP/netgen.min" || fail "netgen: not 150 nodes and 900 arcs"
[ "$(grep -c '^a ' "$TMP/netgen.min")" = 900 ] || fail "netgen: not 900 'a' lines"

bad() { # bad WANTED-TEXT ARGS...
  local want=$1; shift
  expect_exit 2 "$HRM" bench flow-gen "$@" --out "$TMP/bad.min"
  grep -q -e "$want" "$TMP/err" || fail "'$*': stderr lacks '$want': $(cat "$TMP/err")"
  [ ! -e "$TMP/bad.min" ] || fail "'$*' wrote a file"
}
bad "FAMILY: 'nosuch' is not" nosuch
bad "which FAMILY" --size S
bad "--size: 'L' is not S or M" netgen --size L
bad "--nodes: 'x' must be an integer" netgen --nodes x
bad "--sources/--sinks" netgen --nodes 10 --arcs 20 --sources 6 --sinks 6
bad "--arcs: 5 is below --nodes" netgen --nodes 10 --arcs 5
bad "--cost-min/--cost-max" gridgen --cost-min 9 --cost-max 3
bad "--rows does not apply to netgen" netgen --rows 4
bad "--gpus does not apply to goto" goto --gpus 4
bad "--cap-min" goto --cap-min 0
bad "--nosuch: unknown option" netgen --nosuch 1
bad "--supply x --cost-max x --arcs: the total cost could overflow" netgen --supply 1000000000 --cost-max 2000000000
bad "--gpus: 20000000 is not in" p1-rack --gpus 20000000
echo ok

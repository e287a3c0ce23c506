# Every script a user runs (bench/*, scripts/*, tests/run, tests/fuzz/run-dimacs, .ci/run) answers --help and -h with its usage and exit status 0, and does nothing else: it starts no benchmark, cluster or build and writes nothing in the folder it is run from.
. "$(dirname "$0")/lib.sh"
cd "$TMP"
n=0
for s in "$HRM_ROOT"/bench/* "$HRM_ROOT"/scripts/* "$HRM_ROOT/tests/run" "$HRM_ROOT/tests/fuzz/run-dimacs" "$HRM_ROOT/.ci/run"; do
  [ -f "$s" ] && [ -x "$s" ] || continue
  name=${s#"$HRM_ROOT"/}
  for flag in --help -h; do
    mkdir -p "$TMP/cwd" && cd "$TMP/cwd"
    set +e; timeout 120 "$s" "$flag" </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?; set -e
    cd "$TMP"
    [ "$rc" -eq 0 ] || fail "$name $flag exited $rc: $(head -3 "$TMP/err")"
    grep -qi "usage" "$TMP/out" || fail "$name $flag printed no usage line: $(head -3 "$TMP/out")"
    [ -z "$(ls -A "$TMP/cwd")" ] || fail "$name $flag wrote $(ls -A "$TMP/cwd" | head -3) where it was run"
    rmdir "$TMP/cwd"
  done
  n=$((n + 1))
done
[ "$n" -ge 25 ] || fail "only $n scripts found"
echo ok

# examples/p3-gen.py writes exactly the P3 specs in the tree (with and without the memory model), and its variants run.
. "$(dirname "$0")/lib.sh"
need python3
mkdir "$TMP/ex"
cp "$HRM_ROOT/examples/p3-gen.py" "$TMP/ex/"
python3 "$TMP/ex/p3-gen.py" >/dev/null
n=0
for f in "$TMP"/ex/p3*.json; do
  cmp "$f" "$HRM_ROOT/examples/$(basename "$f")" || fail "examples/$(basename "$f") is not what p3-gen.py writes"
  n=$((n + 1))
done
ls "$HRM_ROOT"/examples/p3*.json | while read -r f; do
  [ -f "$TMP/ex/$(basename "$f")" ] || fail "p3-gen.py does not write $(basename "$f")"
done
[ "$n" -eq 25 ] || fail "p3-gen.py wrote $n specs"
[ -f "$TMP/ex/p3m-vm4-jmix-seq.json" ] || fail "no memory-model Table 2 spec"
# A sensitivity variant: every spec is accepted and every job of every policy finishes.
mkdir "$TMP/var"
python3 "$TMP/ex/p3-gen.py" --memory-variant "$TMP/var" 3 60MB/s 1
for f in "$TMP"/var/p3m-*.json; do
  "$HRM" sim "$f" -q --json >"$TMP/out.json" || fail "$(basename "$f") did not run"
  python3 -c 'import json,sys; assert all(r["jobs_done"] == r["jobs"] for r in json.load(open(sys.argv[1])))' \
    "$TMP/out.json" || fail "$(basename "$f"): a job did not finish"
done
matches -F '"disk_bw": "60MB/s"' "$TMP/var/p3m-vm4-sort.json" || fail "the HDD bandwidth was not applied"
expect_exit 1 python3 "$TMP/ex/p3-gen.py" --bogus

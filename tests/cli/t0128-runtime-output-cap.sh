# hrm agent --max-output bounds a task's output file on disk, while it runs and at its end: the newest output is kept after a line saying how many bytes were dropped, and hrm logs shows exactly that.
. "$(dirname "$0")/rtlib.sh"
keygen
start_master
# Tasks asking 2G of memory fit n1 only, tasks asking 2 CPUs n2 only.
start_agent n1 --cpus 1 --mem 64G --max-output 1M
# n2 writes output on tmpfs, which cannot drop a file's head in place: the file is emptied.
SHM=$(mktemp -d /dev/shm/hrm-t0128.XXXXXX)
trap 'rt_cleanup; rm -rf "$TMP" "$SHM"; [ -z "${RT_LEFT:-}" ] || exit 1' EXIT
start_agent n2 --cpus 2 --mem 1G --max-output 1M --work-dir "$SHM"
until_ok 60 nodes_up 2 || fail "the nodes did not register"
cap=1048576
out() { echo "$S/agents/n1/$1/0.out"; }
# marker_count FILE: the count of the marker line that starts FILE; the bytes after it
marker_count() {
  head -n 1 "$1" | matches '^\[hrm: [0-9]* earlier bytes of this output were dropped' ||
    fail "$1: no marker line at the start of the output"
  dropped=$(head -n 1 "$1" | sed 's/^\[hrm: \([0-9]*\) .*/\1/')
  rest=$(($(stat -c %s "$1") - $(head -n 1 "$1" | wc -c)))
}
size_at_most() { [ -f "$1" ] && [ "$(stat -c %s "$1")" -le "$2" ]; }

seq 1 3000000 >"$TMP/seq"
total=$(stat -c %s "$TMP/seq")
[ "$total" -gt $((cap * 10)) ] || fail "the test writes too little to exceed the cap"
# check_capped JOB TOTAL LAST: the file is within the cap; hrm logs prints one marker line
# whose count plus the bytes after it is TOTAL, and the output ends as the task's did.
check_capped() {
  size_at_most "$(out "$1")" "$cap" || fail "job $1: $(stat -c %s "$(out "$1")") bytes on disk, over the cap"
  timeout 300 "$HRM" logs "$1" >"$TMP/logs" || fail "hrm logs $1"
  marker_count "$TMP/logs"
  [ $((dropped + rest)) -eq "$2" ] || fail "job $1: $dropped dropped + $rest kept is not the $2 bytes written"
  [ "$(tail -n 1 "$TMP/logs")" = "$3" ] || fail "job $1: the output does not end with its last line"
  grep -v after-line "$TMP/logs" | tail -n 1000 | cmp - <(sed -n '2999001,3000000p' "$TMP/seq") >/dev/null ||
    fail "job $1: the kept tail differs from what the task wrote"
}

# A burst that ends before any periodic check: bounded when the task ends.
j=$("$HRM" submit --cpus 1 --mem 2G -- seq 1 3000000) || fail "submit"
expect_exit 0 timeout 300 "$HRM" wait "$j"
check_capped "$j" "$total" 3000000

# A task still running: bounded while it runs; what it writes afterwards lands at the end.
k=$("$HRM" submit --cpus 1 --mem 2G -- sh -c "seq 1 3000000; while [ ! -e '$TMP/go' ]; do sleep 0.1; done; echo after-line") || fail "submit k"
until_ok 60 grep -q '^3000000$' "$(out "$k")" || fail "the running task did not write its output"
until_ok 60 size_at_most "$(out "$k")" "$cap" || fail "the running task's output was not bounded"
touch "$TMP/go"
expect_exit 0 timeout 300 "$HRM" wait "$k"
check_capped "$k" $((total + 11)) after-line

# Small output is untouched.
s=$("$HRM" submit --cpus 1 --mem 2G -- echo small) || fail "submit s"
expect_exit 0 timeout 300 "$HRM" wait "$s"
[ "$("$HRM" logs "$s")" = small ] || fail "a small output was changed"

# On tmpfs: bounded too. A file there cannot lose its head in place, so a cut while the task
# writes may lose what it wrote meanwhile uncounted (docs/runtime.md): the marker counts at most
# what was written (and a cut just after the last write leaves only the marker).
if [ "$(stat -f -c %T "$SHM")" = tmpfs ]; then
  t=$("$HRM" submit --cpus 2 -- seq 1 3000000) || fail "submit t"
  expect_exit 0 timeout 300 "$HRM" wait "$t"
  size_at_most "$SHM/$t/0.out" "$cap" || fail "the output on tmpfs was not bounded"
  timeout 300 "$HRM" logs "$t" >"$TMP/logs" || fail "hrm logs $t"
  marker_count "$TMP/logs"
  [ $((dropped + rest)) -le "$total" ] || fail "tmpfs: $dropped dropped + $rest kept is more than the $total bytes written"
fi

expect_exit 2 "$HRM" agent --max-output 1K
grep -q -- "--max-output" "$TMP/err" || fail "a cap below the minimum is not refused by name"

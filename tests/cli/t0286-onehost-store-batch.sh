# The master's store writes a turn's task rows and events as multi-row statements: a job whose 16 first tasks start in one pass takes fewer statements than rows (the master's last log line counts both), and every row is there and exact after the stop (tasks done or failed, a task_started and a task_ended event per run, task_ended's detail text as before).
. "$(dirname "$0")/rtlib.sh"
keygen
start_master --max-attempts 1
start_agent n1 --cpus 16 --mem 4G
until_ok 60 nodes_up 1 || fail "node did not register"

# 16 free CPUs and 48 one-CPU tasks: the first pass launches 16 at once, in one turn.
ok=$("$HRM" submit --count 48 --no-output -- true) || fail "submit ok"
expect_exit 0 timeout 120 "$HRM" wait "$ok"
bad=$("$HRM" submit -- sh -c 'exit 3') || fail "submit bad"
expect_exit 3 timeout 120 "$HRM" wait "$bad"

kill -TERM "$MASTER"
for _ in $(seq 600); do kill -0 "$MASTER" 2>/dev/null || break; sleep 0.1; done
kill -0 "$MASTER" 2>/dev/null && fail "the master did not stop"
line=$(grep 'master stopped' "$TMP/master.log" | tail -1)
[[ $line =~ store:\ ([0-9]+)\ rows\ in\ ([0-9]+)\ statements,\ ([0-9]+)\ commits ]] ||
  fail "no store counts in the master's last line: $line"
rows=${BASH_REMATCH[1]} statements=${BASH_REMATCH[2]} commits=${BASH_REMATCH[3]}
# Each run: its row at launch and at its end, and an event each time.
echo "store: $rows rows, $statements statements, $commits commits" >&2
[ "$rows" -ge $((4 * 49)) ] || fail "$rows rows for 49 runs"
# The first pass alone wrote 16 task rows and 16 events in two statements; one statement per row
# (and a few for the jobs' own rows) would be more statements than rows.
[ "$statements" -lt "$rows" ] || fail "$statements statements for $rows rows"
[ "$commits" -ge 1 ] || fail "$commits commits"

python3 - "$S/hrm.db" "$ok" "$bad" <<'P' || fail "the store's rows"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ok, bad = int(sys.argv[2]), int(sys.argv[3])
q = lambda sql, *a: db.execute(sql, a).fetchall()
assert q("SELECT count(*), min(state), max(state) FROM tasks WHERE job = ?", ok) == [(48, 2, 2)], \
    q("SELECT idx, state FROM tasks WHERE job = ?", ok)
assert q("SELECT state, exit FROM tasks WHERE job = ?", bad) == [(3, 3)]
for kind in ("task_started", "task_ended"):
    n = q("SELECT count(DISTINCT task) FROM events WHERE job = ? AND kind = ?", ok, kind)[0][0]
    assert n == 48, "%s: %d of 48 tasks" % (kind, n)
(att,) = q("SELECT attempt FROM tasks WHERE job = ?", bad)[0]
details = {d for (d,) in q("SELECT detail FROM events WHERE job = ? AND kind = 'task_ended'", ok)}
want = {'{"ok":true,"exit":0,"signal":0,"oom":false,"attempt":%d}' % a
        for (a,) in q("SELECT DISTINCT attempt FROM tasks WHERE job = ?", ok)}
assert details == want, (details, want)
(d,) = q("SELECT detail FROM events WHERE job = ? AND kind = 'task_ended'", bad)[0]
assert d == '{"ok":false,"exit":3,"signal":0,"oom":false,"attempt":%d}' % att, d
seqs = [s for (s,) in q("SELECT seq FROM events ORDER BY seq")]
assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "sequence numbers with gaps"
P
echo ok

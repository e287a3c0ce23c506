# The web page in headless Chromium: job rows with their states, a node's bars, a GPU's share, a task's log, live events from the stream, a cancel that takes effect, and the message shown without a token.
. "$(dirname "$0")/rtlib.sh"
need python3 chromium chromedriver
U="$TMP/up"
export HRM_STATE="$U"
# The hrm policy stacks GPU shares (docs/runtime.md, "Fractional GPUs"): three half-GPU tasks
# on two GPUs put two on one.
timeout -k 10 500 "$HRM" up --nodes 2 --racks 2 --cpus 4 --mem 8G --gpus 1 --policy hrm --state "$U" >"$TMP/up.out" 2>"$TMP/up.err" &
PIDS+=("$!")
until_ok 90 nodes_up 2 || { cat "$TMP/up.err" >&2; fail "hrm up did not start"; }
until_ok 60 test -s "$U/http" || fail "no $U/http"
mkdir -p "$TMP/gate"
gated="while [ ! -e $TMP/gate/go ]; do sleep 0.05; done"

hello=$("$HRM" submit --name hello --count 2 -- sh -c 'echo "hello from task $HRM_TASK_ID"; echo "to stderr $HRM_TASK_ID" >&2') || fail "submit hello"
hold=$("$HRM" submit --name hold --cpus 1.5 -- sh -c "$gated") || fail "submit hold"
gpu=$("$HRM" submit --name shared-gpu --count 3 --cpus 0.5 --gpus 0.5 -- sh -c "$gated") || fail "submit gpu"
victim=$("$HRM" submit --name victim --cpus 0.5 -- sh -c "$gated") || fail "submit victim"
expect_exit 0 timeout 120 "$HRM" wait "$hello"
until_ok 60 started "$hold" 1 || fail "job hold never started"
until_ok 60 started "$gpu" 3 || fail "job shared-gpu never started"
until_ok 60 started "$victim" 1 || fail "job victim never started"
# cores JOB=CORES...: the cores the running tasks of these jobs hold per node, as JSON.
cores() {
  local a
  for a in "$@"; do "$HRM" job "${a%=*}" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); j=d.get("job", d)
for t in j["tasks"]: print(t["node"], sys.argv[1])' "${a#*=}"; done |
    python3 -c 'import json,sys
c = {}
for line in sys.stdin:
    n, v = line.split(); c[n] = c.get(n, 0) + float(v)
print(json.dumps(c))'
}
job_state() { "$HRM" job "$1" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); j=d.get("job", d); print(j["state"])'; }
cancelled() { [ "$(job_state "$1")" = cancelled ]; }

cat >"$TMP/late.sh" <<X
#!/bin/sh
exec "$HRM" submit --name late -- true
X
chmod +x "$TMP/late.sh"

timeout -k 10 300 python3 - "$HRM_ROOT/tests/cli" "$TMP" "$(cat "$U/http")" "$(cat "$U/keys/http.token")" \
  "$hello" "$hold" "$gpu" "$victim" "$(cores "$hold=1.5" "$gpu=0.5" "$victim=0.5")" <<'X' || { tail -30 "$TMP/chromedriver.log" >&2; fail "the page test failed"; }
import json, subprocess, sys
sys.path.insert(0, sys.argv[1])
from webdriver import Browser
tmp, url, token = sys.argv[2:5]
hello, hold, gpu, victim = sys.argv[5:9]
held = json.loads(sys.argv[9])  # node -> cores its running tasks hold

def check(cond, what):
    if not cond:
        raise SystemExit('FAIL: ' + what)

with Browser(tmp, log=tmp + '/chromedriver.log') as b:
    # Without a token: a message that says how to get the address.
    b.get(url + '/')
    note = b.wait_for(lambda: b.find('#no-token:not([hidden])'), 60, 'the no-token message')
    check('#token=' in note.text and 'hrm up' in note.text, 'no-token message: ' + note.text)
    check(b.find('#app[hidden]') is not None, 'the cluster is shown without a token')

    b.get(url + '/#token=' + token)
    # The token leaves the address bar (it is kept in the tab's sessionStorage).
    b.wait_for(lambda: b.script('return location.hash') == '', 30, 'the token to leave the URL')
    row = lambda j: b.find(f'tr[data-job="{j}"]')
    state_of = lambda j: b.find(f'tr[data-job="{j}"] [data-state]').text
    b.wait_for(lambda: row(hello) and row(victim), 60, 'the job rows')
    b.wait_for(lambda: state_of(hello) == 'done', 60, 'job hello shown done')
    for j in (hold, gpu, victim):
        b.wait_for(lambda: state_of(j) == 'running', 60, f'job {j} shown running')
    check('hello' in row(hello).text and '2/2' in row(hello).text, 'hello row: ' + row(hello).text)

    # The nodes' bars: each node's CPU bar shows the cores its running tasks hold, of 4, with a
    # fill of that width; the three half-GPU tasks show as three segments, stacked on the GPUs
    # they share, half a GPU each.
    for node in ('node1', 'node2'):
        want = held.get(node, 0.0)
        cpu = b.wait_for(lambda: b.find(f'.node[data-node="{node}"] .bar.cpu'), 30, f'{node} cpu bar')
        b.wait_for(lambda: float(cpu.attr('data-used')) == want, 30, f'{node} cpu bar at {want}')
        check(cpu.attr('data-total') == '4', 'cpu total ' + str(cpu.attr('data-total')))
        width = b.script('const r = arguments[0].getBoundingClientRect().width; '
                         'return arguments[0].querySelector(".fill").getBoundingClientRect().width / r',
                         {'element-6066-11e4-a52e-4f735466cecf': cpu.ref})
        check(abs(width - want / 4) < 0.05, f'{node}: cpu fill is {width:.2f} of the bar, want {want / 4}')
        check(b.find(f'.node[data-node="{node}"] .bar.mem') is not None, f'{node}: no memory bar')
    gpus = b.find_all('.node .gpu')
    check(len(gpus) == 2, f'{len(gpus)} GPU boxes, want 2 nodes x 1')
    used = sum(float(g.attr('data-used')) for g in gpus)
    check(used == 1.5, f'GPU shares given sum to {used}, want 1.5')
    check(sorted(int(g.attr('data-tasks')) for g in gpus) == [1, 2], 'GPU tasks shown per GPU: ' +
          str([g.attr('data-tasks') for g in gpus]))
    for g in gpus:
        k = int(g.attr('data-tasks'))
        check(len(g.find_all('.share')) == k, f'a GPU held by {k} tasks shows {len(g.find_all(".share"))} segments')
        check(float(g.attr('data-used')) == 0.5 * k, 'a GPU\'s share is not half a GPU per task')
    check(len(b.find_all('.rack')) == 2, 'two racks shown')

    # A job's tasks, and a task's log.
    row(hello).click()
    b.wait_for(lambda: len(b.find_all('#tasks tr[data-task]')) == 2, 30, "hello's two tasks")
    b.find('#tasks tr[data-task="1"]').click()
    b.wait_for(lambda: 'hello from task 1' in b.find('#log').text, 30, "task 1's stdout")
    b.find('#log-stderr').click()
    b.wait_for(lambda: 'to stderr 1' in b.find('#log').text, 30, "task 1's stderr")

    # Live: the event stream is on, and a job submitted now appears with its event.
    b.wait_for(lambda: 'on' in b.find('#live').attr('class').split(), 60, 'the event stream')
    late = subprocess.run([tmp + '/late.sh'], capture_output=True, text=True, check=True).stdout.strip()
    b.wait_for(lambda: row(late), 30, f'the new job {late} listed')
    b.wait_for(lambda: any('job_submitted' in e.text and f'job {late}' in e.text
                           for e in b.find_all('#events li')), 30, f"job {late}'s job_submitted event")

    # Cancel: a click, the confirmation, and the job is cancelled in the master.
    b.find(f'button[data-cancel="{victim}"]').click()
    b.accept_alert()
    b.wait_for(lambda: state_of(victim) == 'cancelled', 60, 'the victim shown cancelled')
    check(b.find(f'button[data-cancel="{victim}"]') is None, 'a cancelled job keeps its button')
    check(b.find('#error:not([hidden])') is None, 'the page shows an error: ' +
          (b.find('#error').text if b.find('#error') else ''))
print('page ok')
X
cancelled "$victim" || fail "job $victim is $(job_state "$victim") in hrm job, not cancelled"
[ "$(job_state "$hold")" = running ] || fail "cancelling $victim touched $hold"
touch "$TMP/gate/go"
expect_exit 0 timeout 120 "$HRM" wait "$hold"

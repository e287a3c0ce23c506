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
    note = b.wait_for(lambda: b.text('#no-token:not([hidden])'), 60, 'the no-token message')
    check('#token=' in note and 'hrm up' in note, 'no-token message: ' + note)
    check(b.find('#app[hidden]') is not None, 'the cluster is shown without a token')

    b.get(url + '/#token=' + token)
    # The token leaves the address bar (it is kept in the tab's sessionStorage).
    b.wait_for(lambda: b.script('return location.hash') == '', 30, 'the token to leave the URL')
    state_of = lambda j: b.text(f'tr[data-job="{j}"] [data-state]')
    b.wait_for(lambda: state_of(hello) == 'done', 60, 'job hello shown done')
    for j in (hold, gpu, victim):
        b.wait_for(lambda: state_of(j) == 'running', 60, f'job {j} shown running')
    b.wait_for(lambda: 'hello' in b.text(f'tr[data-job="{hello}"]') and
               '2/2' in b.text(f'tr[data-job="{hello}"]'), 30, 'the hello row with 2/2 tasks')

    # The nodes' bars: each node's CPU bar shows the cores its running tasks hold, of 4, with a
    # fill of that width; the three half-GPU tasks show as three segments, two stacked on one
    # GPU, half a GPU each.  Read in one script: the page redraws the nodes as events come.
    seen = lambda: b.script("""
        return [...document.querySelectorAll('.node')].map((n) => {
          const cpu = n.querySelector('.bar.cpu');
          return {node: n.dataset.node, rack: n.closest('.rack').dataset.rack,
                  used: +cpu.dataset.used, total: +cpu.dataset.total,
                  fill: cpu.querySelector('.fill').getBoundingClientRect().width /
                        cpu.getBoundingClientRect().width,
                  mem: !!n.querySelector('.bar.mem'),
                  gpus: [...n.querySelectorAll('.gpu')].map((g) => ({
                    used: +g.dataset.used, tasks: +g.dataset.tasks,
                    segments: g.querySelectorAll('.share').length}))};
        });""")
    def bars_right():
        nodes = {n['node']: n for n in seen()}
        if sorted(nodes) != ['node1', 'node2']:
            return False
        for name, n in nodes.items():
            want = held.get(name, 0.0)
            if n['used'] != want or n['total'] != 4 or abs(n['fill'] - want / 4) > 0.05 or not n['mem']:
                return False
        gpus = [g for n in nodes.values() for g in n['gpus']]
        return (sorted(g['tasks'] for g in gpus) == [1, 2] and
                all(g['segments'] == g['tasks'] and g['used'] == 0.5 * g['tasks'] for g in gpus) and
                len({n['rack'] for n in nodes.values()}) == 2)
    try:
        b.wait_for(bars_right, 30, 'the nodes\' bars')
    except TimeoutError:
        raise SystemExit(f'FAIL: the nodes as shown: {seen()}; cores held per node: {held}')

    # A job's tasks, and a task's log.
    b.click(f'tr[data-job="{hello}"]')
    b.wait_for(lambda: len(b.find_all('#tasks tr[data-task]')) == 2, 30, "hello's two tasks")
    b.click('#tasks tr[data-task="1"]')
    b.wait_for(lambda: 'hello from task 1' in b.text('#log'), 30, "task 1's stdout")
    b.click('#log-stderr')
    b.wait_for(lambda: 'to stderr 1' in b.text('#log'), 30, "task 1's stderr")

    # Live: the event stream is on, and a job submitted now appears with its event.
    b.wait_for(lambda: b.find('#live.on'), 60, 'the event stream')
    late = subprocess.run([tmp + '/late.sh'], capture_output=True, text=True, check=True).stdout.strip()
    b.wait_for(lambda: b.find(f'tr[data-job="{late}"]'), 30, f'the new job {late} listed')
    b.wait_for(lambda: f'job_submitted job {late}' in b.text('#events'), 30,
               f"job {late}'s job_submitted event")

    # Cancel: a click, the confirmation, and the job is cancelled in the master.
    b.click(f'button[data-cancel="{victim}"]')
    b.accept_alert()
    b.wait_for(lambda: state_of(victim) == 'cancelled', 60, 'the victim shown cancelled')
    check(b.find(f'button[data-cancel="{victim}"]') is None, 'a cancelled job keeps its button')
    check(b.find('#error:not([hidden])') is None, 'the page shows an error: ' + str(b.text('#error')))
print('page ok')
X
cancelled "$victim" || fail "job $victim is $(job_state "$victim") in hrm job, not cancelled"
[ "$(job_state "$hold")" = running ] || fail "cancelling $victim touched $hold"
touch "$TMP/gate/go"
expect_exit 0 timeout 120 "$HRM" wait "$hold"

#!/usr/bin/env python3
"""slurm_vs_hrm.py -- the Slurm side and the report of bench/slurm-vs-hrm (stdlib only).

  slurm_vs_hrm.py arrivals JOBS RATE OUT      Poisson arrival offsets (seed 1), one per line
  slurm_vs_hrm.py slurm VARIANT BASE OUT      measure the running Slurm cluster under BASE
  slurm_vs_hrm.py report HRM.txt [SLURM...]   side-by-side markdown table with ratios
  slurm_vs_hrm.py compare HRM.txt...         hrm's figures, one column per run (file name)
  slurm_vs_hrm.py bound ARRIVALS [SLOTS]      the short-task load's mean response on SLOTS
                                              (128) slots with nothing but queueing (FIFO)

The method (bench/slurm-setup.md):
throughput of one N-task array (`sbatch --array=1-N -o /dev/null --wrap=true`) from the
first submit until `squeue -h -r` is empty (polled every 0.1 s); start latency of
`srun -n1 bash -c 'echo $EPOCHREALTIME'` and of `sbatch` (the job writes $EPOCHREALTIME);
the short-task load (JOBS arrays of 100 x `sleep 0.1`, arrivals read from a file);
CPU from the cpuacct cgroups the setup puts each daemon in (slurmd's group also holds
slurmstepd and the jobs).  Results are lines "SLURM <variant>.<name> <value> <unit>".
"""
import json, os, random, statistics, subprocess, sys, time

HZ = os.sysconf("SC_CLK_TCK")


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100.0
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def arrivals(jobs, rate, out):
    rng = random.Random(1)
    lam = rate / 100.0   # jobs/s: 100 tasks per job
    t, lines = 0.0, []
    for _ in range(jobs):
        lines.append(f"{t:.6f}")
        t += rng.expovariate(lam)
    open(out, "w").write("\n".join(lines) + "\n")


class Slurm:
    def __init__(self, base, variant, out):
        self.base, self.variant, self.out = base, variant, open(out, "a")
        self.env = dict(os.environ, SLURM_CONF=f"{base}/etc/slurm.conf")
        self.cg = f"/sys/fs/cgroup/cpuacct/{os.path.basename(base)}"
        os.makedirs(f"{base}/out", exist_ok=True)

    def sh(self, *args, check=True):
        r = subprocess.run(args, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=120)
        if check and r.returncode != 0:
            raise RuntimeError(f"{args}: rc={r.returncode} {r.stderr.strip()}")
        return r.stdout

    def emit(self, name, value, unit):
        line = f"SLURM {self.variant}.{name} {value} {unit}"
        print(line, flush=True)
        self.out.write(line + "\n")
        self.out.flush()

    def remaining(self):
        r = subprocess.run(["squeue", "-h", "-r", "-o", "%i"], env=self.env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
        return len(r.stdout.split()) if r.returncode == 0 else None

    def wait_empty(self, cap, ivl=0.1):
        t0 = time.time()
        while time.time() - t0 < cap:
            if self.remaining() == 0:
                return time.time(), 0
            time.sleep(ivl)
        return time.time(), self.remaining()

    def quiesce(self):
        self.wait_empty(300, 0.5)
        time.sleep(1.0)

    def cpu(self):
        r = {}
        for g in ("ctld", "nodes", "munge"):
            try:
                r[g] = int(open(f"{self.cg}/{g}/cpuacct.usage").read()) / 1e9
            except OSError:
                r[g] = float("nan")
        return r

    def throughput(self, n, cap):
        self.quiesce()
        c0, t0 = self.cpu(), time.time()
        self.sh("sbatch", "-Q", f"--array=1-{n}", "-o", "/dev/null", "--wrap=true")
        t1, left = self.wait_empty(cap)
        c1 = self.cpu()
        done = n - (left or 0)
        self.emit("array.tasks", done, "tasks")
        self.emit("array.wall_s", round(t1 - t0, 3), "s")
        self.emit("array.tasks_per_s", round(done / (t1 - t0), 2), "tasks/s")
        if left:
            self.emit("array.capped", left, "tasks")
            self.sh("scancel", "--partition=bench", check=False)
        per = {g: (c1[g] - c0[g]) * 1e3 / max(done, 1) for g in c0}
        self.emit("array.cpu_ms_per_task", round(sum(per.values()), 3), "ms")
        for g, v in per.items():
            self.emit(f"array.{g}_cpu_ms_per_task", round(v, 3), "ms")

    def latency_srun(self, runs):
        self.quiesce()
        start = []
        for _ in range(runs):
            t0 = time.time()
            out = self.sh("srun", "-Q", "-n1", "bash", "-c", "echo $EPOCHREALTIME")
            start.append(float(out.strip()) - t0)
            time.sleep(0.2)
        self.emit("srun.start_p50_ms", round(pct(start, 50) * 1e3, 2), "ms")
        self.emit("srun.start_p95_ms", round(pct(start, 95) * 1e3, 2), "ms")

    def latency_sbatch(self, runs, cap=60):
        self.quiesce()
        d = f"{self.base}/out/lat"
        os.makedirs(d, exist_ok=True)
        script = f"{self.base}/out/lat.sh"
        open(script, "w").write(f"#!/bin/bash\necho $EPOCHREALTIME > {d}/$SLURM_JOB_ID\n")
        start = []
        for _ in range(runs):
            t0 = time.time()
            jid = self.sh("sbatch", "--parsable", "-o", "/dev/null", script).strip().split(";")[0]
            f = f"{d}/{jid}"
            while time.time() - t0 < cap:
                try:
                    start.append(float(open(f).read()) - t0)
                    break
                except (OSError, ValueError):
                    time.sleep(0.005)
            time.sleep(0.2)
        self.emit("sbatch.start_p50_ms", round(pct(start, 50) * 1e3, 1), "ms")
        self.emit("sbatch.start_p95_ms", round(pct(start, 95) * 1e3, 1), "ms")

    def shorttask(self, arrivals_file, tasks, dur, cap):
        self.quiesce()
        d = f"{self.base}/out/st"
        os.makedirs(d, exist_ok=True)
        script = f"{self.base}/out/st.sh"
        open(script, "w").write(
            "#!/bin/bash\ns=$EPOCHREALTIME\nsleep %s\n"
            "echo \"$SLURM_ARRAY_TASK_ID $s $EPOCHREALTIME\" >> %s/$SLURM_ARRAY_JOB_ID\n" % (dur, d))
        at = [float(x) for x in open(arrivals_file).read().split()]
        subs = []
        c0, t0 = self.cpu(), time.time()
        for off in at:
            now = time.time()
            if t0 + off > now:
                time.sleep(t0 + off - now)
            ts = time.time()
            jid = self.sh("sbatch", "--parsable", f"--array=0-{tasks - 1}", "-o", "/dev/null",
                          script).strip().split(";")[0]
            subs.append((jid, ts))
        t_sub = time.time() - t0
        _, left = self.wait_empty(cap, 0.5)
        if left:
            self.sh("scancel", "--partition=bench", check=False)
        resp, last_end, incomplete = [], 0.0, 0
        for jid, ts in subs:
            try:
                rows = [l.split() for l in open(f"{d}/{jid}").read().splitlines() if l.strip()]
            except OSError:
                rows = []
            if len(rows) < tasks:
                incomplete += 1
                continue
            ends = [float(r[2]) for r in rows]
            resp.append(max(ends) - ts)
            last_end = max(last_end, max(ends))
        c1 = self.cpu()
        self.emit("short.jobs", len(at), "jobs")
        self.emit("short.incomplete_jobs", incomplete, "jobs")
        self.emit("short.submit_span_s", round(t_sub, 2), "s")
        if resp:
            self.emit("short.resp_mean_s", round(statistics.mean(resp), 3), "s")
            self.emit("short.resp_p95_s", round(pct(resp, 95), 3), "s")
            self.emit("short.achieved_tasks_per_s",
                      round(len(resp) * tasks / (last_end - t0), 1), "tasks/s")
        done = len(resp) * tasks
        if done:
            self.emit("short.cpu_ms_per_task",
                      round(sum(c1[g] - c0[g] for g in c0) * 1e3 / done, 3), "ms")


def slurm(variant, base, out):
    s = Slurm(base, variant, out)
    e = os.environ.get
    s.emit("loadavg_1m", round(os.getloadavg()[0], 2), "load")
    s.throughput(int(e("TP_N", "5000")), float(e("TP_CAP", "600")))
    s.latency_srun(int(e("LAT_SRUN", "50")))
    s.latency_sbatch(int(e("LAT_BATCH", "30")))
    if e("ST_ARRIVALS"):
        s.shorttask(e("ST_ARRIVALS"), 100, 0.1, float(e("ST_CAP", "900")))


# ------------------------------------------------------------------ report
def fifo_bound(arrivals_path, slots=128, tasks=100, dur=0.1):
    """Mean job response of the short-task load if launching cost nothing: every task starts
    on the slot that frees first, jobs in arrival order.  With jobs of 100 tasks arriving
    about every 0.1 s on 128 slots, a job usually waits for the one before it: this, not the
    ideal of one task's duration, is what any scheduler can reach on these arrivals."""
    import heapq
    free = [0.0] * slots
    resp = []
    for line in open(arrivals_path):
        if not line.strip():
            continue
        a = float(line)
        end = a
        for _ in range(tasks):
            e = max(heapq.heappop(free), a) + dur
            heapq.heappush(free, e)
            end = max(end, e)
        resp.append(end - a)
    return sum(resp) / len(resp) if resp else float("nan")


def load(path, tag):
    vals = {}
    for line in open(path):
        p = line.split()
        if len(p) >= 3 and p[0] == tag:
            try:
                vals[p[1]] = float(p[2])
            except ValueError:
                pass
    return vals


def report(hrm_path, slurm_paths):
    h = load(hrm_path, "BENCH")
    s = {}
    for p in slurm_paths:
        s.update(load(p, "SLURM"))
    variants = sorted({k.split(".")[0] for k in s})

    def hv(k):
        return h.get("throughput." + k)

    def f(v, nd=1):
        return "n/a" if v is None or v != v else f"{v:,.{nd}f}"

    cols = ["hrm"] + [f"Slurm {v}" for v in variants]
    print("| metric | " + " | ".join(cols) + " | hrm / best Slurm |")
    print("|---|" + "---|" * (len(cols) + 1))

    def row(name, hval, skey, nd=1, better="high"):
        svals = [s.get(f"{v}.{skey}") if skey else None for v in variants]
        known = [x for x in svals if x is not None and x == x]
        ratio = "-"
        if hval is not None and known and hval > 0:
            best = max(known) if better == "high" else min(known)
            r = hval / best if better == "high" else best / hval
            ratio = f"{r:,.1f}x" + ("" if better == "high" else " lower")
        print(f"| {name} | {f(hval, nd)} | " + " | ".join(f(x, nd) for x in svals) + f" | {ratio} |")

    bare1, bare2 = hv("bare.serial_per_s"), hv("bare.two_way_per_s")
    bare4 = hv("bare.agents_way_per_s")
    print(f"| bare spawn-and-wait loops of the command: 1 / 2 / 4 side by side (spawns/s) | "
          f"{f(bare1, 0)} / {f(bare2, 0)} / {f(bare4, 0)} |" + " |" * len(variants) + " - |")
    row("5,000 tasks as one job / array, submit -> all done (tasks/s)", hv("count.tasks_per_s"),
        "array.tasks_per_s")
    row("5,000 one-task jobs, submit -> all done (tasks/s)", hv("jobs.tasks_per_s"), None)
    row("CPU per task, daemons (ms; Slurm: all its processes incl. the jobs)",
        hv("count.cpu_ms_per_task"), "array.cpu_ms_per_task", 3, "low")
    tcpu = hv("count.tasks_cpu_ms_per_task")
    dcpu = hv("count.cpu_ms_per_task")
    row("CPU per task, daemons + the tasks themselves (ms)",
        (tcpu + dcpu) if tcpu is not None and dcpu is not None else None,
        "array.cpu_ms_per_task", 3, "low")
    row("submit -> start p50 (ms; hrm: execve done on the agent; Slurm: srun, bash's clock)",
        hv("latency.start_p50_ms"), "srun.start_p50_ms", 2, "low")
    row("submit -> start p95 (ms; same)", hv("latency.start_p95_ms"), "srun.start_p95_ms", 2, "low")
    row("submit -> start p50, both by the task's clock (`bash -c 'echo $EPOCHREALTIME'`; Slurm: srun)",
        hv("latency_bash.start_p50_ms"), "srun.start_p50_ms", 2, "low")
    row("submit -> start p95, both by the task's clock (Slurm: srun)",
        hv("latency_bash.start_p95_ms"), "srun.start_p95_ms", 2, "low")
    row("submit -> start p50, both by the task's clock (Slurm: sbatch)",
        hv("latency_bash.start_p50_ms"), "sbatch.start_p50_ms", 2, "low")
    row("short tasks: job response mean (s), ideal 0.1", hv("short.resp_mean_s"), "short.resp_mean_s", 3, "low")
    row("short tasks: job response p95 (s)", hv("short.resp_p95_s"), "short.resp_p95_s", 3, "low")
    row("short tasks: achieved tasks/s", hv("short.achieved_tasks_per_s"), "short.achieved_tasks_per_s")
    print(f"| master RSS per queued task / per queued one-task job (bytes) | "
          f"{f(hv('memory.rss_per_queued_task'), 0)} / {f(hv('memory.rss_per_queued_job'), 0)} |"
          + " |" * len(variants) + " - |")
    print(f"| load average (1 min) at start | {f(hv('loadavg_1m'), 2)} | "
          + " | ".join(f(s.get(f'{v}.loadavg_1m'), 2) for v in variants) + " | - |")
    print()
    # the runtime goals of docs/benchmarks.md
    tp = hv("count.tasks_per_s")
    goals = []
    if tp and bare2:
        goals.append(("throughput >= 70 % of the bare rate, 2 loops side by side", tp / bare2 >= 0.7,
                      f"{tp / bare2 * 100:.0f} % ({tp:,.0f} / {bare2:,.0f})"))
    if tp and bare1:
        goals.append(("(same, against 1 loop)", tp / bare1 >= 0.7,
                      f"{tp / bare1 * 100:.0f} % ({tp:,.0f} / {bare1:,.0f})"))
    if tp and bare4:
        goals.append(("(same, against 4 loops side by side, one per agent)", tp / bare4 >= 0.7,
                      f"{tp / bare4 * 100:.0f} % ({tp:,.0f} / {bare4:,.0f})"))
    strict = max([b for b in (bare1, bare2, bare4) if b] or [0])
    if tp and strict:
        goals.append(("throughput >= 70 % of the best bare rate of this run (strictest)",
                      tp / strict >= 0.7, f"{tp / strict * 100:.0f} % ({tp:,.0f} / {strict:,.0f})"))
    if tp and strict:
        goals.append(("throughput >= 90 % of the best bare rate of this run", tp / strict >= 0.9,
                      f"{tp / strict * 100:.0f} % ({tp:,.0f} / {strict:,.0f})"))
    p50 = hv("latency.start_p50_ms")
    if p50 is not None:
        goals.append(("submit -> start p50 < 5 ms", p50 < 5, f"{p50:.2f} ms"))
        goals.append(("submit -> start p50 < 1 ms", p50 < 1, f"{p50:.2f} ms"))
    if dcpu is not None:
        goals.append(("< 2 ms CPU per task across hrm's processes", dcpu < 2, f"{dcpu:.3f} ms"))
        goals.append(("< 0.1 ms CPU per task across hrm's processes", dcpu < 0.1, f"{dcpu:.3f} ms"))
    resp = hv("short.resp_mean_s")
    if resp is not None:
        goals.append(("short tasks: mean response <= 1.5 x the ideal (0.15 s)", resp <= 0.15,
                      f"{resp:.3f} s = {resp / 0.1:.2f} x 0.1 s"))
        arr = os.environ.get("ST_ARRIVALS")
        if arr and os.path.exists(arr):
            b = fifo_bound(arr)
            goals.append(("(for reference) the same over the queueing bound of these arrivals",
                          True, f"{resp / b:.2f} x {b:.3f} s"))
    best = [s.get(f"{v}.array.tasks_per_s") for v in variants if s.get(f"{v}.array.tasks_per_s")]
    if tp and best:
        goals.append(("(for reference) hrm / best Slurm throughput", True, f"{tp / max(best):.1f}x"))
    print("| goal | met | value |")
    print("|---|---|---|")
    for name, ok, val in goals:
        print(f"| {name} | {'yes' if ok else 'no'} | {val} |")


def compare(paths):
    """hrm's runtime figures side by side, one column per run, named by its file."""
    runs = [load(p, "BENCH") for p in paths]
    names = [("bare spawn, best of 1/2/4 loops (spawns/s)", None, 0),
             ("5,000 tasks as one job (tasks/s)", "count.tasks_per_s", 0),
             ("  over the best bare rate of the same run", "ratio", 2),
             ("daemons' CPU per task (ms)", "count.cpu_ms_per_task", 3),
             ("  master (ms)", "count.master_cpu_ms_per_task", 3),
             ("  agents (ms)", "count.agents_cpu_ms_per_task", 3),
             ("5,000 one-task jobs (tasks/s)", "jobs.tasks_per_s", 0),
             ("daemons' CPU per task, one-task jobs (ms)", "jobs.cpu_ms_per_task", 3),
             ("submit -> acknowledged p50 (ms)", "latency.ack_p50_ms", 2),
             ("submit -> start p50 (ms)", "latency.start_p50_ms", 2),
             ("submit -> start p95 (ms)", "latency.start_p95_ms", 2),
             ("short tasks: mean response (s)", "short.resp_mean_s", 3),
             ("short tasks: p95 response (s)", "short.resp_p95_s", 3),
             ("load average (1 min) at start", "loadavg_1m", 1)]

    def best_bare(r):
        b = [r.get("throughput.bare." + k) for k in ("serial_per_s", "two_way_per_s",
                                                    "agents_way_per_s")]
        b = [x for x in b if x]
        return max(b) if b else None

    print("| metric | " + " | ".join(os.path.basename(p).replace(".txt", "") for p in paths) + " |")
    print("|---|" + "---|" * len(paths))
    for label, key, nd in names:
        vals = []
        for r in runs:
            if key is None:
                v = best_bare(r)
            elif key == "ratio":
                b, t = best_bare(r), r.get("throughput.count.tasks_per_s")
                v = t / b if b and t else None
            else:
                v = r.get("throughput." + key)
            vals.append("n/a" if v is None else f"{v:,.{nd}f}")
        print(f"| {label} | " + " | ".join(vals) + " |")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "arrivals" and len(sys.argv) == 5:
        arrivals(int(sys.argv[2]), float(sys.argv[3]), sys.argv[4])
    elif cmd == "slurm" and len(sys.argv) == 5:
        slurm(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "report" and len(sys.argv) >= 3:
        report(sys.argv[2], sys.argv[3:])
    elif cmd == "compare" and len(sys.argv) >= 4:
        compare(sys.argv[2:])
    elif cmd == "bound" and len(sys.argv) in (3, 4):
        print(f"{fifo_bound(sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 128):.4f}")
    else:
        print(__doc__)
        sys.exit(2)

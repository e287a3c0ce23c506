#!/usr/bin/env python3
"""Where submit -> start goes, hop by hop, from `perf script` of bench/profile-latency.

Input: perf script -F comm,pid,tid,time,event,trace of the uprobes PREFIX_submit_one,
PREFIX_submit_ret (its return), PREFIX_dispatch_msg, PREFIX_commit, PREFIX_commit_ret,
PREFIX_flush_msgs and the tracepoints sys_enter_sendto, sys_exit_recvfrom, sys_exit_poll,
sys_enter/exit_fdatasync, sys_enter_clone, block_rq_issue.  Each latency probe of `hrm bench
throughput` (one one-task job on the idle cluster) is followed from the client's call through
ZeroMQ's I/O threads (their sendto and recvfrom), the master's turn, its commit and sync, to
the agent's clone (where the agent takes the task's start_us).  Where the launch leaves between
the commit's write and its sync (PREFIX_commit on hrm_store_commit_unsynced, which returns
before the fdatasync), the sync is printed apart, beside the launch's hops.  Prints the quartiles of each
hop over the first N probes, and the device requests each probe's fdatasync issued.
usage: latency_hops.py PERF_SCRIPT_TXT PREFIX [N]
"""
import collections
import re
import sys

PAT = re.compile(r'^\s*(\S+)\s+(\d+)/(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)$')


def load(path, prefix):
    ev = []
    for line in open(path):
        m = PAT.match(line)
        if m:
            _, pid, tid, t, name, rest = m.groups()
            name = name.split(':')[-1]
            if name.startswith(prefix + '_'):
                name = name[len(prefix) + 1:]
            ev.append((float(t) * 1e3, pid, tid, name, rest))
    return ev


def probes(ev, limit):
    n = len(ev)

    def first(i, pred, until):
        while i < n and ev[i][0] <= until:
            if pred(ev[i]):
                return i
            i += 1
        return None

    main = lambda x, pid: x[1] == pid and x[2] == pid
    io = lambda x, pid: x[1] == pid and x[2] != pid
    rows = []
    for i, e in enumerate(ev):
        if e[3] != 'submit_one':
            continue
        client, until = e[1], e[0] + 100
        steps = [('client: submit called', i)]

        def step(label, pred):
            j = first(steps[-1][1] + 1, pred, until)
            if j is None:
                raise LookupError(label)
            steps.append((label, j))
        try:
            step('client I/O thread sends it', lambda x: io(x, client) and x[3] == 'sys_enter_sendto')
            step('master I/O thread receives it', lambda x: x[1] != client and x[1] != x[2]
                 and x[3] == 'sys_exit_recvfrom')
            master = ev[steps[-1][1]][1]
            step('master main thread dispatches it', lambda x: main(x, master) and x[3] == 'dispatch_msg')
            step('master: turn done, commit called', lambda x: main(x, master) and x[3] == 'commit')
            at = steps[-1][1] + 1
            ret = first(at, lambda x: main(x, master) and x[3] == 'commit_ret__return', until)
            sync = first(at, lambda x: main(x, master) and x[3] == 'sys_enter_fdatasync', until)
            early = ret is not None and (sync is None or ret < sync)
            if early:  # the launch leaves between the commit's write and its sync
                step('master: commit written (frames), returned', lambda x: main(x, master)
                     and x[3] == 'commit_ret__return')
                step('master: launches sent (flush), sync next', lambda x: main(x, master)
                     and x[3] == 'flush_msgs')
                s0 = first(steps[-1][1] + 1, lambda x: main(x, master)
                           and x[3] == 'sys_enter_fdatasync', until)
            else:
                step('master: rows and WAL written, fdatasync', lambda x: main(x, master)
                     and x[3] == 'sys_enter_fdatasync')
                s0 = steps[-1][1]
                step('fdatasync returned', lambda x: main(x, master) and x[3] == 'sys_exit_fdatasync')
                step('commit returned', lambda x: main(x, master) and x[3] == 'commit_ret__return')
                step('master: turn\'s messages sent (flush)', lambda x: main(x, master)
                     and x[3] == 'flush_msgs')
            s1 = None if s0 is None else first(s0 + 1, lambda x: main(x, master)
                                               and x[3] == 'sys_exit_fdatasync', until)
            # The agent clones on its main thread or on its launch thread: any thread of it.
            k = first(steps[-1][1] + 1, lambda x: x[3] == 'sys_enter_clone'
                      and x[1] not in (master, client), until)
            if k is None:
                raise LookupError('clone')
            agent = ev[k][1]
            step('master I/O thread sends the launch', lambda x: io(x, master) and x[3] == 'sys_enter_sendto'
                 and x[0] < ev[k][0])
            step('agent I/O thread receives it', lambda x: io(x, agent) and x[3] == 'sys_exit_recvfrom')
            step('agent main thread wakes (poll returns)', lambda x: main(x, agent)
                 and x[3] == 'sys_exit_poll' and x[4].strip() not in ('0x0', ''))
            step('agent: clone (start_us)', lambda x: x[1] == agent and x[3] == 'sys_enter_clone')
        except LookupError:
            continue
        ack = first(i + 1, lambda x: main(x, client) and x[3] == 'submit_ret__return', until)
        reqs = '' if s1 is None else ' '.join(
            ev[z][4].split()[1] for z in range(s0, s1)
            if ev[z][3] == 'block_rq_issue' and ev[z][1] == master)
        rows.append(([ev[j][0] for _, j in steps], [l for l, _ in steps],
                     ev[ack][0] - e[0] if ack is not None else None, reqs,
                     ev[s1][0] - ev[s0][0] if early and s1 is not None else None))
        if len(rows) == limit:
            break
    return rows


def main():
    if any(a in ("-h", "--help") for a in sys.argv[1:]):
        print(__doc__.strip())
        return
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = probes(load(sys.argv[1], sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 50)
    print('probes followed: %d' % len(rows))
    if not rows:
        sys.exit(1)

    def q(d, f):
        d = sorted(d)
        return d[int(f * (len(d) - 1))]
    print('%-42s %7s %7s %7s' % ('hop (ms since the step before)', 'p25', 'p50', 'p75'))
    labels = rows[0][1]
    rows = [r for r in rows if r[1] == labels]  # one binary: one order of the commit's steps
    for k in range(1, len(labels)):
        d = [r[0][k] - r[0][k - 1] for r in rows]
        print('%-42s %7.3f %7.3f %7.3f' % (labels[k], q(d, .25), q(d, .5), q(d, .75)))
    d = [r[0][-1] - r[0][0] for r in rows]
    print('%-42s %7.3f %7.3f %7.3f' % ('submit called -> clone', q(d, .25), q(d, .5), q(d, .75)))
    d = [r[4] for r in rows if r[4] is not None]
    if d:  # the sync runs while the launch travels: not a hop of the start's path
        print('%-42s %7.3f %7.3f %7.3f' % ('fdatasync, beside the launch', q(d, .25), q(d, .5), q(d, .75)))
    d = [r[2] for r in rows if r[2] is not None]
    if d:
        print('%-42s %7.3f %7.3f %7.3f' % ('submit called -> acknowledged', q(d, .25), q(d, .5), q(d, .75)))
    reqs = collections.Counter(r[3] or '(none)' for r in rows)
    print('device requests per fdatasync (block_rq_issue rwbs):',
          ', '.join('%s x%d' % kv for kv in reqs.most_common(4)))


if __name__ == '__main__':
    main()

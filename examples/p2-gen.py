#!/usr/bin/env python3
"""Writes the P2 (FGM) reproduction specs: examples/p2-*.json.

A Facebook-like MapReduce/Spark mix on 23 nodes of 16 cores and 32 GB
(docs/reproduction-p2-p3.md).  Deterministic: the same script writes the same
files.  Run from anywhere: python3 examples/p2-gen.py

Options for experiments beyond the committed specs:
  --cpu-variation X   each job's map cpu demands times U(1-X, 1+X) (default 0: none)
  --volume GB         total input: every job's maps times GB / 400, at least 1 (default 400)
  --drift X           jobs 51-100 (the later arrivals) read another kind of data of the same
                      size: their maps use X times the cpu (default 1: none)
  --drift-mem         ... and X times the memory too (beyond the requests: tasks may fail)
  --gap S             online arrivals: mean gap between jobs in seconds (default 1.5)
  --out DIR           write the files there instead of examples/
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = HERE
CPU_VARIATION = 0.0
VOLUME_GB = 400
DRIFT = 1.0
DRIFT_MEM = False
GAP_S = 1.5
BLOCK_MB = 128

# Job sizes in map tasks: the Facebook 2009 bins of Zaharia et al. (Delay
# Scheduling, EuroSys'10, Table 2: 39 % of jobs with 1 map, 16 % with 2, ...,
# 3 % with thousands), scaled so that 100 jobs read ~400 GB as in the FGM
# paper (3,196 blocks of 128 MB).  Heavy tailed: the 6 largest jobs hold
# more than half of the maps.
BINS = [(39, 1), (16, 2), (14, 10), (9, 25), (6, 50), (6, 80), (4, 120), (3, 200), (3, 300)]

# Programs: map phases per 128 MB block on a speed-1.0 core (seconds, cores,
# GB) and the request users write for them (YARN-style round numbers above
# the peak); reduce phases as shares of the reduce's time, which grows with
# the shuffle it reads.  "selectivity" = map output / input.
PROGRAMS = {
    "wordcount": dict(map_req=(1, 2), map=[(3, 0.9, 0.8), (9, 1.0, 1.3), (2, 0.5, 1.4)],
                      red_req=(1, 4), red=[(0.3, 0.3, 1.5), (0.7, 1.0, 2.5)],
                      selectivity=0.2, red_s_per_gb=12),
    "grep": dict(map_req=(1, 2), map=[(6, 0.4, 0.6)],
                 red_req=(1, 2), red=[(1.0, 0.5, 0.8)], selectivity=0.02, red_s_per_gb=20),
    "sort": dict(map_req=(1, 2), map=[(4, 0.6, 1.0), (5, 0.9, 1.8)],
                 red_req=(1, 4), red=[(0.3, 0.3, 2.0), (0.5, 1.0, 3.4), (0.2, 0.5, 1.2)],
                 selectivity=1.0, red_s_per_gb=10),
    "join": dict(map_req=(2, 4), map=[(5, 1.6, 2.4), (10, 1.0, 3.0)],
                 red_req=(2, 6), red=[(0.4, 0.5, 3.0), (0.6, 1.8, 4.5)],
                 selectivity=0.5, red_s_per_gb=14),
}
NAMES = ["wordcount", "grep", "sort", "join"]
USERS = 10


def fmt_s(x):
    return "%dms" % max(1, round(x * 1000))


def fmt_gb(x):
    return "%dM" % max(1, round(x * 1024))


def jobs(rng, arrival_rate=None):
    sizes = [m for n, m in BINS for _ in range(n)]
    rng.shuffle(sizes)
    out, t = [], 0.0
    for i, maps in enumerate(sizes):
        # The volume sweep scales every job alike; it draws nothing, so 400 GB is the default mix.
        maps = max(1, round(maps * VOLUME_GB / 400)) if VOLUME_GB != 400 else maps
        prog = NAMES[rng.randrange(len(NAMES))]
        p = PROGRAMS[prog]
        # Jobs of one program differ a little (data skew, another input).
        f_t, f_m = rng.uniform(0.85, 1.15), rng.uniform(0.92, 1.08)
        f_c = rng.uniform(1 - CPU_VARIATION, 1 + CPU_VARIATION) if CPU_VARIATION else 1.0
        # Drift: the same program on other data of the same size (the paper's inputs are
        # Wikipedia text and random data), which the similar-task key does not tell apart.
        f_d = DRIFT if i >= len(sizes) // 2 else 1.0
        f_dm = f_d if DRIFT_MEM else 1.0
        map_phases = [{"duration": fmt_s(d * f_t), "cpu": round(c * f_c * f_d, 3),
                       "mem": fmt_gb(m * f_m * f_dm)} for d, c, m in p["map"]]
        reduces = max(1, maps // 20)
        shuffle_gb = maps * BLOCK_MB / 1024 * p["selectivity"] / reduces
        red_time = max(4.0, shuffle_gb * p["red_s_per_gb"]) * f_t
        red_phases = [{"duration": fmt_s(share * red_time), "cpu": c, "mem": fmt_gb(m * f_m)}
                      for share, c, m in p["red"]]
        job = {
            "name": "%s%03d" % (prog, i + 1),
            "user": "user%d" % (i % USERS + 1),
            "queue": "prod" if i % 3 == 0 else "adhoc",
            "stages": [
                {"name": "map", "tasks": maps,
                 "task": {"logic": prog + "-map", "cpu": p["map_req"][0],
                          "mem": "%dG" % p["map_req"][1],
                          "input": {"size": "%dM" % BLOCK_MB, "replicas": 3},
                          "profile": map_phases}},
                {"name": "reduce", "deps": ["map"], "tasks": reduces,
                 "task": {"logic": prog + "-reduce", "cpu": p["red_req"][0],
                          "mem": "%dG" % p["red_req"][1],
                          "input": {"size": fmt_gb(shuffle_gb), "replicas": 1},
                          "profile": red_phases}},
            ],
        }
        if arrival_rate:
            job["submit"] = fmt_s(t)
            t += rng.expovariate(arrival_rate)
        out.append(job)
    return out


def cluster():
    return {
        "comment": "P2 testbed: 24 servers (2x 8-core E5-2670, 32 GB, 2 SAS disks), "
                   "one the master: 23 compute nodes.",
        "network": {"disk_bw": "1GB/s", "rack_bw": "10Gb/s", "core_bw": "40Gb/s",
                    "latency": "200us"},
        "nodes": [{"name": "n", "count": 23, "cores": 16, "mem": "32G", "disk": "600G"}],
    }


def workload(rng, rate):
    return {
        "comment": "Facebook-like MapReduce/Spark mix: 100 jobs, 3,196 map blocks of 128 MB "
                   "(~400 GB), heavy-tailed sizes; requests above real use.",
        "queues": [{"name": "prod", "guarantee": 0.6, "max": 1.0},
                   {"name": "adhoc", "guarantee": 0.4, "max": 1.0}],
        "jobs": jobs(rng, rate),
    }


EXECUTION = {"model": "fluid", "contention": 0.05, "usage_interval": "1s"}
CLOUD = dict(EXECUTION, background={"nodes": 0.6, "cpu_min": 4, "cpu_max": 12,
                                    "mem_min": "1G", "mem_max": "4G",
                                    "busy": "60s", "idle": "90s"})
POLICIES = ["fifo", "capacity", "fair", "drf", "fgm"]


def write(name, spec):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")
    print("wrote", path)


def main():
    global OUT, CPU_VARIATION, VOLUME_GB, DRIFT, DRIFT_MEM, GAP_S
    args = sys.argv[1:]
    while args:
        if args[0] == "--out" and len(args) > 1:
            OUT = args[1]
        elif args[0] == "--cpu-variation" and len(args) > 1:
            CPU_VARIATION = float(args[1])
        elif args[0] == "--volume" and len(args) > 1:
            VOLUME_GB = float(args[1])
        elif args[0] == "--drift" and len(args) > 1:
            DRIFT = float(args[1])
        elif args[0] == "--gap" and len(args) > 1:
            GAP_S = float(args[1])
        elif args[0] == "--drift-mem":
            DRIFT_MEM = True
            args = args[1:]
            continue
        else:
            sys.exit(__doc__)
        args = args[2:]
    os.makedirs(OUT, exist_ok=True)
    write("p2-cluster.json", cluster())
    write("p2-offline-workload.json", workload(random.Random(2020), None))
    # Online: the same mix arriving as a Poisson process, one job per 1.5 s on average
    # (about the rate at which the offline run completes jobs under DRF).
    write("p2-online-workload.json", workload(random.Random(2020), 1 / GAP_S))
    sim = {"policies": POLICIES}
    write("p2-offline.json", {"comment": "P2, offline (all jobs at 0), dedicated cluster.",
                              "cluster": "p2-cluster.json",
                              "workload": "p2-offline-workload.json",
                              "execution": EXECUTION, "sim": sim})
    write("p2-online.json", {"comment": "P2, online (Poisson arrivals), dedicated cluster.",
                             "cluster": "p2-cluster.json",
                             "workload": "p2-online-workload.json",
                             "execution": EXECUTION, "sim": sim})
    write("p2-cloud.json", {"comment": "P2, online, cloud: foreign load on 60 % of the "
                                       "nodes at random times.",
                            "cluster": "p2-cluster.json",
                            "workload": "p2-online-workload.json",
                            "execution": CLOUD, "sim": sim})


if __name__ == "__main__":
    main()

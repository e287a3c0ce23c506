#!/usr/bin/env python3
"""Writes the P3 (NPARSA) reproduction specs: examples/p3-*.json.

The paper's heterogeneous Spark clusters (Tables 3 and 4) and its four
workloads (docs/reproduction-p2-p3.md).  Deterministic.  Run from anywhere:
python3 examples/p3-gen.py
Sensitivity variants of the memory-model specs (p3m-*.json) into DIR:
python3 examples/p3-gen.py --memory-variant DIR BLOWUP HDD_BW ITER_PASSES
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

SSD, HDD = "500MB/s", "120MB/s"
NET = {"disk_bw": SSD, "rack_bw": "1Gb/s", "core_bw": "1Gb/s", "latency": "500us"}


def node(name, ghz, ref_ghz, cores, mem, disk, kind):
    return {"name": name, "cores": cores, "mem": mem, "disk": disk, "disk_type": kind,
            "disk_bw": SSD if kind == "ssd" else HDD, "cpu_speed": round(ghz / ref_ghz, 4)}


# Table 3: four VMs at 3.2 GHz; slave 2 has one core, slave 3 an HDD.
VM4 = [node("master", 3.2, 3.2, 2, "5G", "50G", "ssd"),
       node("slave1", 3.2, 3.2, 2, "4G", "50G", "ssd"),
       node("slave2", 3.2, 3.2, 1, "4G", "50G", "ssd"),
       node("slave3", 3.2, 3.2, 2, "4G", "50G", "hdd")]
# Section 2.2.3: the same without slave 1.
VM3 = [VM4[0], VM4[2], VM4[3]]
# Table 4: the physical cluster; speeds relative to 2.8 GHz.
PHYS = [node("master", 2.8, 2.8, 6, "12G", "100G", "ssd"),
        node("slave1", 2.4, 2.8, 4, "4G", "100G", "hdd"),
        node("slave2", 2.8, 2.8, 2, "8G", "100G", "ssd")]

# Workloads.  A job asks 4 cores (the paper's spark.cores.max) as 4 one-core
# executors; WordCount, K-means and PageRank ask 4 GB in all (J = 1: CPU),
# Sort 8 GB (J = 2: memory).  Each executor processes a quarter of the input:
# it reads its share from HDFS (3 replicas on random nodes; Sort also reads
# back its sort spill, as much again) and computes on a speed-1.0 core for
# the program's seconds per GB.
PROGRAMS = {
    "wordcount": dict(mem_gb=1, s_per_gb=12, reads=1, sizes=[2, 4, 6, 8, 10]),
    "sort": dict(mem_gb=2, s_per_gb=3, reads=2, sizes=[2, 4, 6, 8, 10]),
    "kmeans": dict(mem_gb=1, s_per_gb=40, reads=1, sizes=[1, 2, 3, 4, 5]),
    "pagerank": dict(mem_gb=1, s_per_gb=40, reads=1, sizes=[0.5, 1, 1.5, 2, 2.5]),
}
EXECUTORS = 4
POLICIES = ["spread", "nparsa-notype", "nparsa"]


def job(prog, size_gb, index, submit=None):
    p = PROGRAMS[prog]
    share_mb = size_gb * 1024 / EXECUTORS
    blocks = max(1, round(share_mb / 128))
    j = {"name": "%s-%s-%d" % (prog, ("%g" % size_gb).replace(".", "_"), index),
         "tasks": EXECUTORS,
         "task": {"logic": prog, "cpu": 1, "mem": "%dG" % p["mem_gb"],
                  "duration": "%dms" % round(size_gb / EXECUTORS * p["s_per_gb"] * 1000),
                  "input": {"size": "%dM" % round(share_mb * p["reads"] / blocks),
                            "blocks": blocks, "replicas": 3}}}
    if submit is not None:
        j["submit"] = submit
    return j


# ---- With the memory model (docs/reproduction-p3.md): examples/p3m-*.json ----
# A task's working set is its input share times BLOWUP: Spark's tuning guide puts Java
# objects at 2-5x their raw data, and we take the low end.  What exceeds the executor's heap
# (its request) spills: to the node's page cache while the node has memory no executor
# holds, else to its disk, each spilled byte moved SPILL_PASSES times (written and read back
# once; K-means and PageRank re-read what their 10 iterations cannot keep cached).  Sort no
# longer reads its input twice: its spill is the memory model's now.
BLOWUP = 2.0
SPILL_PASSES = {"wordcount": 2, "sort": 2, "kmeans": 10, "pagerank": 10}
POLICIES_M = ["spread", "sdasa", "difference", "nparsa"]


def job_m(prog, size_gb, index, blowup=BLOWUP, mem_gb=None):
    """A P3 job with the memory model; mem_gb overrides the executor's request."""
    p = PROGRAMS[prog]
    share_mb = size_gb * 1024 / EXECUTORS
    blocks = max(1, round(share_mb / 128))
    mem = mem_gb if mem_gb is not None else p["mem_gb"]
    j = {"name": "%s-%s-%d" % (prog, ("%g" % size_gb).replace(".", "_"), index),
         "tasks": EXECUTORS,
         "task": {"logic": prog, "cpu": 1, "mem": "%dM" % round(mem * 1024),
                  "duration": "%dms" % round(size_gb / EXECUTORS * p["s_per_gb"] * 1000),
                  "input": {"size": "%dM" % round(share_mb / blocks),
                            "blocks": blocks, "replicas": 3},
                  "memory": {"working_set": "%dM" % round(share_mb * blowup),
                             "spill_passes": SPILL_PASSES[prog]}}}
    return j


def write(name, obj):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    print("wrote", os.path.join(HERE, name))


def cluster(nodes, comment):
    return {"comment": comment, "network": NET, "nodes": nodes}


def main():
    write("p3-vm4-cluster.json", cluster(VM4, "NPARSA Table 3: four heterogeneous VMs."))
    write("p3-vm3-cluster.json", cluster(VM3, "NPARSA 2.2.3: Table 3 without slave 1."))
    write("p3-phys-cluster.json", cluster(PHYS, "NPARSA Table 4: three physical nodes."))
    sim = {"policies": POLICIES}
    for prog, p in PROGRAMS.items():
        # Single-job runs: each job alone (closed loop of one), sizes in turn.
        wl = {"max_parallel": 1, "jobs": [job(prog, s, i + 1) for i, s in enumerate(p["sizes"])]}
        write("p3-%s-workload.json" % prog, wl)
        write("p3-vm4-%s.json" % prog,
              {"comment": "NPARSA single-job %s runs on the 4-VM cluster." % prog,
               "cluster": "p3-vm4-cluster.json", "workload": "p3-%s-workload.json" % prog,
               "sim": sim})
    write("p3-vm3-pagerank.json",
          {"comment": "NPARSA Fig. 7: PageRank on the 3-VM cluster.",
           "cluster": "p3-vm3-cluster.json", "workload": "p3-pagerank-workload.json",
           "sim": sim})
    # Physical cluster: the paper adds a sixth, larger PageRank.
    pr = {"max_parallel": 1,
          "jobs": [job("pagerank", s, i + 1) for i, s in enumerate([0.5, 1, 1.5, 2, 2.5, 3])]}
    write("p3-phys-pagerank-workload.json", pr)
    write("p3-phys-pagerank.json",
          {"comment": "NPARSA Fig. 8: PageRank on the physical cluster.",
           "cluster": "p3-phys-cluster.json", "workload": "p3-phys-pagerank-workload.json",
           "sim": sim})
    # Fig. 6: WordCount and Sort jobs running side by side.
    par = {"max_parallel": 2, "fair_m": 2,
           "jobs": [job(prog, s, i + 1) for i, s in enumerate([2, 4, 6, 8])
                    for prog in ("wordcount", "sort")]}
    write("p3-parallel-workload.json", par)
    write("p3-vm4-parallel.json",
          {"comment": "NPARSA Fig. 6: WordCount and Sort in parallel on the 4-VM cluster.",
           "cluster": "p3-vm4-cluster.json", "workload": "p3-parallel-workload.json",
           "sim": sim})

    main_memory()


# The seven experiments with the memory model, and a mixed workload for Table 2.
SIZES_M = {"vm4-wordcount": ("vm4", "wordcount", [2, 4, 6, 8, 10]),
           "vm4-sort": ("vm4", "sort", [2, 4, 6, 8, 10]),
           "vm4-kmeans": ("vm4", "kmeans", [1, 2, 3, 4, 5]),
           "vm4-pagerank": ("vm4", "pagerank", [0.5, 1, 1.5, 2, 2.5]),
           "vm3-pagerank": ("vm3", "pagerank", [0.5, 1, 1.5, 2, 2.5]),
           "phys-pagerank": ("phys", "pagerank", [0.5, 1, 1.5, 2, 2.5, 3])}
# Table 2: executors asking J GiB per core, straddling the thresholds the paper tried
# (0.8 .. 1.4); every program at every J, mid-size inputs, two jobs at a time.
J_MIX = [0.75, 0.85, 0.95, 1.05, 1.15, 1.25, 1.35, 1.5]
MID = {"wordcount": 6, "sort": 6, "kmeans": 3, "pagerank": 1.5}


def main_memory(outdir=HERE, blowup=BLOWUP, hdd=HDD, iter_passes=None):
    """Writes the p3m-*.json specs into outdir, with their clusters inline (so that variants
    for the sensitivity tables can go anywhere): blowup, the HDD's bandwidth and the spill
    passes of the iterative programs are the knobs of docs/reproduction-p3.md."""
    passes = dict(SPILL_PASSES)
    if iter_passes is not None:
        passes["kmeans"] = passes["pagerank"] = iter_passes

    def cl(nodes, comment):
        nodes = [dict(n, disk_bw=hdd) if n["disk_type"] == "hdd" else n for n in nodes]
        return cluster(nodes, comment)

    clusters = {"vm4": cl(VM4, "NPARSA Table 3: four heterogeneous VMs."),
                "vm3": cl(VM3, "NPARSA 2.2.3: Table 3 without slave 1."),
                "phys": cl(PHYS, "NPARSA Table 4: three physical nodes.")}

    def jm(prog, size, index, mem_gb=None):
        j = job_m(prog, size, index, blowup=blowup, mem_gb=mem_gb)
        j["task"]["memory"]["spill_passes"] = passes[prog]
        return j

    def put(name, comment, cname, jobs, parallel, policies):
        wl = {"max_parallel": parallel, "jobs": jobs}
        if parallel > 1:
            wl["fair_m"] = parallel
        obj = {"comment": comment, "cluster": clusters[cname], "workload": wl,
               "sim": {"policies": policies}}
        with open(os.path.join(outdir, name), "w") as f:
            json.dump(obj, f, indent=1)
            f.write("\n")
        if outdir == HERE:
            print("wrote", os.path.join(outdir, name))

    for name, (cname, prog, sizes) in SIZES_M.items():
        put("p3m-%s.json" % name, "NPARSA %s with the memory model." % name, cname,
            [jm(prog, s, i + 1) for i, s in enumerate(sizes)], 1, POLICIES_M)
    put("p3m-vm4-parallel.json", "NPARSA Fig. 6 with the memory model: WordCount and Sort "
        "in parallel.", "vm4", [jm(prog, s, i + 1) for i, s in enumerate([2, 4, 6, 8])
                                for prog in ("wordcount", "sort")], 2, POLICIES_M)
    progs = ("wordcount", "sort", "kmeans", "pagerank")
    mix = [jm(prog, MID[prog], i * len(progs) + k + 1, mem_gb=jv)
           for i, jv in enumerate(J_MIX) for k, prog in enumerate(progs)]
    put("p3m-vm4-jmix.json", "NPARSA Table 2 with the memory model: jobs asking 0.75 .. 1.5 "
        "GiB per core, two at a time.", "vm4", mix, 2, ["spread", "nparsa"])
    put("p3m-vm4-jmix-seq.json", "NPARSA Table 2 with the memory model: jobs asking 0.75 .. "
        "1.5 GiB per core, one at a time.", "vm4", mix, 1, ["spread", "nparsa"])


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--memory-variant":
        # --memory-variant DIR BLOWUP HDD ITER_PASSES: the sensitivity specs, into DIR
        main_memory(sys.argv[2], float(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
    elif len(sys.argv) == 1:
        main()
    else:
        sys.exit(__doc__)

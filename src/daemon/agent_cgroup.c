/* The tasks' cgroups: hrm/<cluster>/<node>/<job>.<task>.<attempt> with their limits, killing a task's whole group, removing it, and sweeping what a killed agent left. */
#define _GNU_SOURCE 1 /* O_DIRECTORY */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/log.h"

#define CPU_PERIOD_US 100000
/* How long a group kill at a task's end waits for the freezer and for the group to empty
 * before it leaves the rest to later turns (cg_retry), which do not wait: the agent's loop
 * must not stall on a process stuck in the kernel. */
#define PATIENCE_US 1000000

/* v1 hierarchies in the order of enum cg_ctl. */
static const char *const ctl_names[CG_NCTL] = {"cpu",     "memory", "pids",
                                               "cpuacct", "cpuset", "freezer"};

void cg_cluster_id(const char *master_pub, char out[CG_CLUSTER_LEN + 1])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, (const unsigned char *)master_pub, strlen(master_pub));
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < CG_CLUSTER_LEN; i++)
        out[i] = hex[(h[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    out[CG_CLUSTER_LEN] = '\0';
}

static bool ctl_on(const struct agent *a, int ctl)
{
    if (a->hw.cg == CG_V2)
        return ctl == CG_CPU; /* one unified directory, named once */
    return ctl == CG_CPU || ctl == CG_MEM || (ctl == CG_PIDS && a->hw.cg_pids) ||
           (ctl == CG_CPUACCT && a->hw.cg_cpuacct) || (ctl == CG_FREEZER && a->hw.cg_freezer) ||
           (ctl == CG_CPUSET && a->hw.cg_cpuset);
}

/* The node's folder in one hierarchy (leaf NULL), or a task's. */
static void cg_dir(const struct agent *a, int ctl, const char *leaf, char *out, size_t len)
{
    int n = a->hw.cg == CG_V2
                ? snprintf(out, len, "%s/hrm/%s/%s", a->hw.cg_root, a->cluster, a->name)
                : snprintf(out, len, "/sys/fs/cgroup/%s/hrm/%s/%s", ctl_names[ctl], a->cluster,
                           a->name);
    if (leaf && n > 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, "/%s", leaf);
}

static void leaf_of(const struct arun *r, char *out, size_t len)
{
    snprintf(out, len, "%lld.%d.%d", (long long)r->job, r->task, r->attempt);
}

int cg_write_file(const char *dir, const char *name, const char *text)
{
    char path[1300];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -e;
}

static void read_file(const char *dir, const char *name, char *out, size_t len)
{
    char path[1300];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, len - 1);
    close(fd);
    out[n > 0 ? n : 0] = '\0';
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/*
 * v2: tasks go under hrm/<cluster>/<node> of the agent's delegated parent, each level passing
 * cpu, memory and pids down.  The agent's own cgroup is a sibling of hrm/, so it is never part
 * of the tree it kills.
 */
static int v2_prepare(struct agent *a)
{
    char dir[1100], level[1100];
    cg_dir(a, CG_CPU, NULL, dir, sizeof(dir));
    if (agent_mkdirs(dir, 0755) < 0)
        return -errno;
    size_t root = strlen(a->hw.cg_root);
    snprintf(level, sizeof(level), "%s", dir);
    /* From the root down: a level can pass on only what its parent passed to it. */
    for (char *p = level + root;; p = strchr(p + 1, '/')) {
        char save = p ? *p : '\0';
        if (p)
            *p = '\0';
        /* One by one: a write naming a controller the level lacks fails as a whole. */
        if (a->hw.cg_cpu)
            cg_write_file(level, "cgroup.subtree_control", "+cpu");
        if (a->hw.cg_mem)
            cg_write_file(level, "cgroup.subtree_control", "+memory");
        if (a->hw.cg_pids)
            cg_write_file(level, "cgroup.subtree_control", "+pids");
        if (a->hw.cg_cpuset)
            cg_write_file(level, "cgroup.subtree_control", "+cpuset");
        if (!p)
            break;
        *p = save;
    }
    return 0;
}

/* v1 cpuset: a new group has no CPUs and no memory nodes, and takes no process until it has
 * both, so each level of hrm/<cluster>/<node> gets its parent's.  Levels another agent of the
 * cluster removed (cg_fini) come back here. */
static int cpuset_levels(const struct agent *a)
{
    char dir[1100], parent[1100], text[4096];
    cg_dir(a, CG_CPUSET, NULL, dir, sizeof(dir));
    size_t root = strlen("/sys/fs/cgroup/cpuset");
    for (char *p = strchr(dir + root + 1, '/');; p = strchr(p + 1, '/')) {
        if (p)
            *p = '\0';
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
            return -errno;
        snprintf(parent, sizeof(parent), "%s", dir);
        *strrchr(parent, '/') = '\0';
        static const char *const files[2] = {"cpuset.cpus", "cpuset.mems"};
        for (int f = 0; f < 2; f++) {
            read_file(dir, files[f], text, sizeof(text));
            if (text[0] && text[0] != '\n')
                continue;
            read_file(parent, files[f], text, sizeof(text));
            int rc = cg_write_file(dir, files[f], text);
            if (rc < 0)
                return rc;
        }
        if (!p)
            return 0;
        *p = '/';
    }
}

int cg_cpuset_write(struct agent *a, const struct arun *r, const char *cpus, const char *mems)
{
    char dir[1100], leaf[64];
    leaf_of(r, leaf, sizeof(leaf));
    cg_dir(a, a->hw.cg == CG_V2 ? CG_CPU : CG_CPUSET, leaf, dir, sizeof(dir));
    /* Memory nodes first: a group's CPUs and nodes must both be set before it takes a task. */
    int rc = mems[0] ? cg_write_file(dir, "cpuset.mems", mems) : 0;
    return rc < 0 ? rc : cg_write_file(dir, "cpuset.cpus", cpus);
}

int cg_node_dir(struct agent *a, int ctl, char *out, size_t len)
{
    if (a->hw.cg == CG_NONE || a->cfg.no_cgroup)
        return -ENOTSUP;
    if (a->hw.cg == CG_V2 && !a->cg_prepared) {
        if (v2_prepare(a) < 0)
            return -errno;
        a->cg_prepared = true;
    }
    cg_dir(a, ctl, NULL, out, len);
    return agent_mkdirs(out, 0755) < 0 ? -errno : 0;
}

int cg_setup(struct agent *a, struct arun *r, int64_t cpu_milli, int64_t mem,
             char procs[CG_NCTL][1200])
{
    char dir[1100], val[64], leaf[64];
    for (int i = 0; i < CG_NCTL; i++)
        procs[i][0] = '\0';
    if (a->hw.cg == CG_NONE || a->cfg.no_cgroup)
        return 0;
    leaf_of(r, leaf, sizeof(leaf));
    if (a->hw.cg == CG_V2 && !a->cg_prepared) { /* once: the levels stay until cg_fini */
        if (v2_prepare(a) < 0)
            goto fail;
        a->cg_prepared = true;
    }
    for (int c = 0; c < CG_NCTL; c++) {
        if (!ctl_on(a, c))
            continue;
        cg_dir(a, c, leaf, dir, sizeof(dir));
        if (c == CG_CPUSET) { /* optional: without it, affinity binds the task (bind_run) */
            /* The levels are made (and given CPUs) by the first task, or again when gone. */
            int rc = mkdir(dir, 0755) < 0 ? -errno : 0;
            if (rc == -ENOENT && (rc = cpuset_levels(a)) == 0 && mkdir(dir, 0755) < 0)
                rc = -errno;
            if (rc < 0)
                hrm_log(HRM_LOG_WARNING, "cpuset cgroup for task " HRM_TASK_FMT ": %s",
                        HRM_TASK_ARGS(r->job, r->task, r->attempt), strerror(-rc));
            else
                snprintf(procs[c], 1200, "%s/cgroup.procs", dir);
            continue;
        }
        /* The node's folder is there but for the first task: one mkdir, not one per level. */
        if (mkdir(dir, 0755) < 0 && (errno != ENOENT || agent_mkdirs(dir, 0755) < 0))
            goto fail;
        r->cg = true; /* from here on, removal has something to do */
        snprintf(procs[c], 1200, "%s/cgroup.procs", dir);
        bool v2 = a->hw.cg == CG_V2;
        if (c == CG_CPU && a->hw.cg_cpu) {
            if (v2) {
                snprintf(val, sizeof(val), "%lld %d",
                         (long long)(cpu_milli * CPU_PERIOD_US / 1000), CPU_PERIOD_US);
                cg_write_file(dir, "cpu.max", val);
            } else {
                snprintf(val, sizeof(val), "%d", CPU_PERIOD_US);
                cg_write_file(dir, "cpu.cfs_period_us", val);
                snprintf(val, sizeof(val), "%lld", (long long)(cpu_milli * CPU_PERIOD_US / 1000));
                cg_write_file(dir, "cpu.cfs_quota_us", val);
            }
        }
        if ((c == CG_MEM || v2) && mem > 0 && a->hw.cg_mem) {
            snprintf(val, sizeof(val), "%lld", (long long)mem);
            cg_write_file(dir, v2 ? "memory.max" : "memory.limit_in_bytes", val);
        }
        if ((c == CG_PIDS || v2) && a->cfg.task_pids > 0 && a->hw.cg_pids) {
            snprintf(val, sizeof(val), "%lld", (long long)a->cfg.task_pids);
            if (cg_write_file(dir, "pids.max", val) < 0 && c == CG_PIDS)
                goto fail;
        }
    }
    return 0;
fail:
    hrm_log(HRM_LOG_WARNING, "cgroup for task " HRM_TASK_FMT ": %s; running it unlimited",
            HRM_TASK_ARGS(r->job, r->task, r->attempt), strerror(errno));
    for (int i = 0; i < CG_NCTL; i++)
        procs[i][0] = '\0';
    return -1;
}

int cg_task_cpu(struct agent *a, const struct arun *r, int64_t cpu_milli)
{
    char dir[1100], leaf[64], val[64];
    if (!r->cg || a->hw.cg == CG_NONE || a->cfg.no_cgroup)
        return -ENOENT;
    leaf_of(r, leaf, sizeof(leaf));
    cg_dir(a, CG_CPU, leaf, dir, sizeof(dir));
    long long quota = (long long)(cpu_milli * CPU_PERIOD_US / 1000);
    if (quota < 1000)
        quota = 1000; /* the kernel's smallest quota is 1 ms */
    if (a->hw.cg == CG_V2) {
        snprintf(val, sizeof(val), "%lld %d", quota, CPU_PERIOD_US);
        return cg_write_file(dir, "cpu.max", val);
    }
    snprintf(val, sizeof(val), "%lld", quota);
    return cg_write_file(dir, "cpu.cfs_quota_us", val);
}

bool cg_oom(const struct agent *a, const struct arun *r)
{
    char dir[1100], leaf[64], text[512];
    leaf_of(r, leaf, sizeof(leaf));
    cg_dir(a, CG_MEM, leaf, dir, sizeof(dir));
    read_file(dir, a->hw.cg == CG_V2 ? "memory.events" : "memory.oom_control", text, sizeof(text));
    const char *p = strstr(text, "oom_kill ");
    return p && atoll(p + 9) > 0;
}

/* A number in a cgroup file, or after "key " in a flat-keyed one (cpu.stat); -1 if absent. */
static int64_t read_count(const char *dir, const char *name, const char *key)
{
    char text[1024];
    read_file(dir, name, text, sizeof(text));
    const char *p = text;
    if (key) {
        size_t k = strlen(key);
        for (p = strstr(text, key); p && ((p > text && p[-1] != '\n') || p[k] != ' ');
             p = strstr(p + 1, key))
            ;
        if (!p)
            return -1;
        p += k + 1;
    }
    char *end;
    long long v = strtoll(p, &end, 10);
    return end == p || v < 0 ? -1 : (int64_t)v;
}

int cg_usage(const struct agent *a, const struct arun *r, int64_t *cpu_us, int64_t *mem,
             int64_t *peak)
{
    if (!r->cg)
        return -1;
    char dir[1100], leaf[64];
    leaf_of(r, leaf, sizeof(leaf));
    if (a->hw.cg == CG_V2) {
        cg_dir(a, CG_CPU, leaf, dir, sizeof(dir));
        *cpu_us = read_count(dir, "cpu.stat", "usage_usec");
        *mem = read_count(dir, "memory.current", NULL);
        *peak = read_count(dir, "memory.peak", NULL); /* kernels before 5.19 lack it */
    } else {
        /* cpuacct is the cpu hierarchy's own when the two are mounted together. */
        cg_dir(a, a->hw.cg_cpuacct ? CG_CPUACCT : CG_CPU, leaf, dir, sizeof(dir));
        int64_t ns = read_count(dir, "cpuacct.usage", NULL);
        *cpu_us = ns < 0 ? -1 : ns / 1000;
        cg_dir(a, CG_MEM, leaf, dir, sizeof(dir));
        *mem = read_count(dir, "memory.usage_in_bytes", NULL);
        *peak = read_count(dir, "memory.max_usage_in_bytes", NULL);
    }
    if (*cpu_us < 0 || *mem < 0)
        return -1;
    if (*peak < *mem)
        *peak = *mem;
    return 0;
}

/* Signals every process listed in one directory's cgroup.procs (never the agent itself,
 * should it have been started inside the tree); returns how many were listed. */
static int signal_listed(const char *dir, int sig)
{
    char path[1300], line[32];
    snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    int n = 0;
    pid_t self = getpid();
    while (fgets(line, sizeof(line), f)) {
        pid_t pid = (pid_t)atol(line);
        if (pid <= 0 || pid == self)
            continue;
        kill(pid, sig);
        n++;
    }
    fclose(f);
    return n;
}

static bool group_empty(const struct agent *a, const char *leaf)
{
    char dir[1100], text[64];
    for (int c = 0; c < CG_NCTL; c++) {
        if (!ctl_on(a, c))
            continue;
        cg_dir(a, c, leaf, dir, sizeof(dir));
        read_file(dir, "cgroup.procs", text, sizeof(text)); /* "" too when it is gone */
        if (text[0])
            return false;
    }
    return true;
}

/*
 * Signals every process of a task's group, including those that left its process group
 * (setsid, daemons).  A SIGKILL first freezes the group (v1 freezer), so no process can fork
 * a child the listing misses, kills what is listed and thaws it; on v2 cgroup.kill does all
 * of that in the kernel.  Returns how many processes were signalled.
 */
static int group_signal(struct agent *a, const char *leaf, int sig, int64_t patience_us)
{
    char dir[1100], state[32];
    if (a->hw.cg == CG_V2) {
        cg_dir(a, CG_CPU, leaf, dir, sizeof(dir));
        if (sig == SIGKILL && cg_write_file(dir, "cgroup.kill", "1") == 0)
            return 1;
        return signal_listed(dir, sig);
    }
    bool freeze = sig == SIGKILL && a->hw.cg_freezer;
    char fdir[1100];
    cg_dir(a, CG_FREEZER, leaf, fdir, sizeof(fdir));
    if (freeze && cg_write_file(fdir, "freezer.state", "FROZEN") == 0) {
        for (int64_t end = hrm_mono_us() + patience_us;;) {
            read_file(fdir, "freezer.state", state, sizeof(state));
            if (strncmp(state, "FROZEN", 6) == 0 || hrm_mono_us() >= end)
                break;
            pause_us(1000);
        }
    } else {
        freeze = false;
    }
    int n = 0;
    for (int c = 0; c < CG_NCTL; c++) {
        if (!ctl_on(a, c))
            continue;
        cg_dir(a, c, leaf, dir, sizeof(dir));
        n += signal_listed(dir, sig);
    }
    if (freeze)
        cg_write_file(fdir, "freezer.state", "THAWED");
    return n;
}

static bool group_rmdir(const struct agent *a, const char *leaf)
{
    bool gone = true;
    char dir[1100];
    for (int c = CG_NCTL - 1; c >= 0; c--) { /* the freezer first: it holds the group's state */
        if (!ctl_on(a, c))
            continue;
        cg_dir(a, c, leaf, dir, sizeof(dir));
        if (rmdir(dir) < 0 && errno != ENOENT)
            gone = false;
    }
    return gone;
}

/* Kills what is left of a group, waits (at most patience_us) until it is empty, and removes
 * its directories.  True when they are all gone. */
static bool group_remove(struct agent *a, const char *leaf, int64_t patience_us)
{
    /* rmdir fails on a group that still holds a process (EBUSY): when it succeeds, there was
     * nothing left to kill, which is the common case at a task's end and costs no reads. */
    if (group_rmdir(a, leaf))
        return true;
    if (!group_empty(a, leaf)) {
        for (int64_t end = hrm_mono_us() + patience_us;;) {
            group_signal(a, leaf, SIGKILL, patience_us);
            if (group_empty(a, leaf) || hrm_mono_us() >= end)
                break;
            pause_us(2000);
        }
    }
    return group_rmdir(a, leaf);
}

void cg_signal(struct agent *a, const struct arun *r, int sig)
{
    char leaf[64];
    if (!r->cg)
        return;
    leaf_of(r, leaf, sizeof(leaf));
    group_signal(a, leaf, sig, PATIENCE_US);
}

void cg_release(struct agent *a, struct arun *r)
{
    char leaf[64];
    if (!r->cg)
        return;
    leaf_of(r, leaf, sizeof(leaf));
    if (group_remove(a, leaf, PATIENCE_US)) {
        r->cg = false;
        return;
    }
    hrm_log(HRM_LOG_WARNING, "cgroup of task " HRM_TASK_FMT " is not empty yet; retrying",
            HRM_TASK_ARGS(r->job, r->task, r->attempt));
    HRM_GROW(a->cg_left, a->cap_cg_left, a->ncg_left + 1);
    snprintf(a->cg_left[a->ncg_left++].leaf, sizeof(a->cg_left[0].leaf), "%s", leaf);
    r->cg = false;
}

void cg_retry(struct agent *a)
{
    for (size_t i = 0; i < a->ncg_left;) {
        if (group_remove(a, a->cg_left[i].leaf, 0))
            a->cg_left[i] = a->cg_left[--a->ncg_left];
        else
            i++;
    }
}

/*
 * A new agent runs nothing yet, so every task cgroup under its node's folder belongs to a
 * predecessor that died without cleaning up (SIGKILL): the main processes died with it
 * (PR_SET_PDEATHSIG) but what they started may live on.  Kill and remove all of it.
 */
void cg_sweep(struct agent *a)
{
    if (a->hw.cg == CG_NONE || a->cfg.no_cgroup)
        return;
    int groups = 0, left = 0;
    char dir[1100];
    for (int c = 0; c < CG_NCTL; c++) {
        if (!ctl_on(a, c))
            continue;
        cg_dir(a, c, NULL, dir, sizeof(dir));
        DIR *d = opendir(dir);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_type != DT_DIR || e->d_name[0] == '.')
                continue;
            groups++;
            if (!group_remove(a, e->d_name, PATIENCE_US))
                left++;
        }
        closedir(d);
    }
    if (groups > 0)
        hrm_log(HRM_LOG_NOTICE, "removed %d task cgroup(s) a previous agent named %s left%s",
                groups - left, a->name, left ? "; some could not be emptied" : "");
}

/* On exit: the node's folders, and its cluster's and hrm's when nothing else is there. */
void cg_fini(struct agent *a)
{
    if (a->hw.cg == CG_NONE || a->cfg.no_cgroup || !a->cluster[0]) {
        hrm_free(a->cg_left);
        return;
    }
    cg_retry(a);
    char dir[1100];
    for (int c = 0; c < CG_NCTL; c++) {
        if (!ctl_on(a, c))
            continue;
        cg_dir(a, c, NULL, dir, sizeof(dir));
        for (int up = 0; up < 3 && rmdir(dir) == 0; up++)
            *strrchr(dir, '/') = '\0';
    }
    hrm_free(a->cg_left);
}

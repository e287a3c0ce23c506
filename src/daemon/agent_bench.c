/* hrm agent --bench: the node's CPU (a fixed integer/float kernel on every core at once), memory bandwidth and disk write speed, measured in about two seconds under the node's limits and cached in the state folder. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_private.h"
#include "hrm/alloc.h"
#include "hrm/log.h"

#define CPU_S 0.5               /* each core runs the kernel this long */
#define MEM_S 0.25
#define MEM_BUF ((size_t)32 << 20) /* far above any cache: what is copied is memory */
#define DISK_MAX ((size_t)16 << 20)
#define DISK_S 1.0              /* a throttled disk stops the write early, not the agent */
#define DISK_CHUNK ((size_t)1 << 20)
#define LOCK_FILE "bench.lock"
/* The agents of a state folder take turns for at most this long (hrm up waits 20 s for all
 * of its agents to register), then measure side by side. */
#define LOCK_WAIT_S 10.0
#define CHILD_TIMEOUT_S 30 /* the bench takes about two seconds */

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the kernels (in the bench process) ---- */

struct cpu_arg {
    double start, rate;
    uint64_t sink;
};

/* A fixed mix of 64-bit integer (an LCG and a xorshift) and dependent floating point work per
 * iteration; its rate is iterations per second of wall time, so a CPU quota shows in it. */
static void *cpu_main(void *p)
{
    struct cpu_arg *c = p;
    uint64_t x = 88172645463325252ULL, iters = 0;
    double f = 1.0, now;
    do {
        for (int i = 0; i < 1 << 14; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            x ^= x >> 29;
            f = f * 0.999999 + (double)(x >> 44) * 1e-7;
        }
        iters += 1 << 14;
    } while ((now = mono_s()) - c->start < CPU_S);
    c->rate = (double)iters / (now - c->start);
    c->sink = x + (uint64_t)f; /* keeps the loop from being optimised away */
    return NULL;
}

static double bench_cpu(int cores)
{
    struct cpu_arg *args = hrm_calloc((size_t)cores, sizeof(*args));
    pthread_t *th = hrm_calloc((size_t)cores, sizeof(*th));
    double start = mono_s(), sum = 0;
    int started = 0;
    for (; started < cores; started++) {
        args[started].start = start;
        if (pthread_create(&th[started], NULL, cpu_main, &args[started]) != 0)
            break;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        sum += args[i].rate;
    }
    hrm_free(args);
    hrm_free(th);
    /* Per core over every core the host has: a core a thread could not start on counts 0. */
    return cores > 0 ? sum / cores : 0;
}

static double bench_mem(void)
{
    char *a = malloc(MEM_BUF), *b = malloc(MEM_BUF);
    double bw = 0;
    if (a && b) {
        memset(a, 1, MEM_BUF); /* pages in before the clock starts */
        memset(b, 2, MEM_BUF);
        double start = mono_s(), now;
        size_t bytes = 0;
        do {
            memcpy(b, a, MEM_BUF);
            a[bytes % MEM_BUF] ^= b[(bytes + 7) % MEM_BUF]; /* each pass depends on the last */
            bytes += MEM_BUF;
        } while ((now = mono_s()) - start < MEM_S);
        bw = (double)bytes / (now - start);
    }
    free(a);
    free(b);
    return bw;
}

/* Writes up to DISK_MAX in chunks, each fsync'd, then removes the file.  0 with *bw, or -1
 * with why. */
static int bench_disk(const char *path, double *bw, char *why, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(why, len, "cannot write its disk file %.200s: %s", path, strerror(errno));
        return -1;
    }
    char *buf = malloc(DISK_CHUNK);
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; buf && i < DISK_CHUNK; i += 8) { /* not compressible */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(buf + i, &x, 8);
    }
    double start = mono_s(), now = start;
    size_t done = 0;
    int rc = buf ? 0 : -1;
    while (rc == 0 && done < DISK_MAX && (now = mono_s()) - start < DISK_S) {
        if (write(fd, buf, DISK_CHUNK) != (ssize_t)DISK_CHUNK || fsync(fd) < 0) {
            snprintf(why, len, "cannot write its disk file %.200s: %s", path,
                     errno ? strerror(errno) : "short write");
            rc = -1;
        }
        done += DISK_CHUNK;
        now = mono_s();
    }
    close(fd);
    unlink(path);
    free(buf);
    if (rc == 0)
        *bw = (double)done / (now - start);
    return rc;
}

struct result {
    double cpu, mem_bw, disk_bw;
    char why[400];
};

static void bench_child(int go, int out, int cores, const char *disk_path)
{
    char c;
    struct result r = {0};
    if (read(go, &c, 1) == 1) { /* the parent has put us under the node's limits */
        r.cpu = bench_cpu(cores);
        r.mem_bw = bench_mem();
        if (bench_disk(disk_path, &r.disk_bw, r.why, sizeof(r.why)) < 0)
            r.disk_bw = 0;
    }
    ssize_t n = write(out, &r, sizeof(r));
    _exit(n == (ssize_t)sizeof(r) ? 0 : 1);
}

/* ---- the agent's side ---- */

static void perf_path(const struct agent *a, const char *suffix, char *out, size_t len)
{
    snprintf(out, len, "%.1000s/bench-%s.%s", a->state_dir, a->name, suffix);
}

static double speed_of(const struct agent *a)
{
    return a->cfg.speed > 0 && a->cfg.speed < 1 ? a->cfg.speed : 1;
}

int bench_run(struct agent *a, struct node_perf *out, struct hrm_error *err)
{
    char lock[1100], disk[1100], leaf[CG_NCTL][1200];
    snprintf(lock, sizeof(lock), "%.1000s/" LOCK_FILE, a->state_dir);
    perf_path(a, "disk", disk, sizeof(disk));
    /* The agents of one state folder (hrm up) take turns: benches run side by side would
     * measure each other. */
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    double give_up = mono_s() + LOCK_WAIT_S;
    while (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) < 0) {
        if (mono_s() >= give_up) { /* many agents on one host: hrm up must not time out */
            hrm_log(HRM_LOG_WARNING, "bench: other agents of %s are still measuring after %g s; "
                    "measuring beside them", a->state_dir, LOCK_WAIT_S);
            close(lfd);
            lfd = -1;
            break;
        }
        struct timespec nap = {0, 50000000};
        nanosleep(&nap, NULL);
    }
    int go[2] = {-1, -1}, res[2] = {-1, -1};
    pid_t pid = -1;
    int rc = 0;
    if (pipe2(go, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
        rc = hrm_errorf(err, -errno, "bench: cannot start its process: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        bench_child(go[0], res[1], a->hw.pus, disk);
    }
    close(go[0]), go[0] = -1;
    close(res[1]), res[1] = -1;
    speed_join_bench(a, pid, leaf);
    struct result r = {0};
    ssize_t n = -1;
    if (write(go[1], "g", 1) == 1) {
        /* Bounded: a bench that hangs must not keep the agent from starting. */
        struct pollfd pf = {.fd = res[0], .events = POLLIN};
        int ready;
        while ((ready = poll(&pf, 1, CHILD_TIMEOUT_S * 1000)) < 0 && errno == EINTR)
            ;
        if (ready > 0)
            n = read(res[0], &r, sizeof(r));
        else
            kill(pid, SIGKILL);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    speed_leave_bench(leaf);
    if (n != (ssize_t)sizeof(r)) {
        rc = hrm_errorf(err, -HRM_EIO, "bench: its process ended without figures (status %d)",
                        status);
        goto out;
    }
    *out = (struct node_perf){.cpu = r.cpu,
                              .mem_bw = r.mem_bw,
                              .disk_bw = r.disk_bw,
                              .at = (int64_t)time(NULL),
                              .speed = speed_of(a),
                              .disk_bps = a->cfg.disk_bps > 0 ? a->cfg.disk_bps : 0};
    if (r.why[0])
        hrm_log(HRM_LOG_WARNING, "bench: %s; the disk speed is unknown", r.why);
out:
    for (int i = 0; i < 2; i++) {
        if (go[i] >= 0)
            close(go[i]);
        if (res[i] >= 0)
            close(res[i]);
    }
    if (lfd >= 0)
        close(lfd); /* releases the lock */
    return rc;
}

static void log_perf(const struct agent *a, const char *how)
{
    const struct node_perf *p = &a->perf;
    hrm_log(HRM_LOG_NOTICE,
            "bench (%s, %s): cpu %.1f M iterations/s per core, memory %.0f MB/s, disk %.0f MB/s"
            "%s",
            how, p->at ? "measured" : "never", p->cpu / 1e6, p->mem_bw / 1e6, p->disk_bw / 1e6,
            p->disk_bw > 0 ? "" : " (unknown)");
}

void bench_at_start(struct agent *a)
{
    char path[1100];
    perf_path(a, "json", path, sizeof(path));
    struct hrm_error err = {{0}};
    int64_t bps = a->cfg.disk_bps > 0 ? a->cfg.disk_bps : 0;
    if (!a->cfg.rebench) {
        struct node_perf cached;
        int rc = nodeperf_cache_read(path, &cached, &err);
        if (rc == 0 && nodeperf_cache_fits(&cached, speed_of(a), bps)) {
            a->perf = cached;
            log_perf(a, path);
            return;
        }
        if (rc < 0 && rc != -ENOENT)
            hrm_log(HRM_LOG_WARNING, "bench cache %s; measuring again", err.text);
    }
    if (bench_run(a, &a->perf, &err) < 0) {
        hrm_log(HRM_LOG_WARNING, "%s; the node's performance is unknown", err.text);
        a->perf = (struct node_perf){.speed = speed_of(a), .disk_bps = bps};
        return;
    }
    log_perf(a, "new");
    /* Only a complete bench is kept: a figure that failed is measured again next start. */
    if (nodeperf_cache_fits(&a->perf, speed_of(a), bps) &&
        nodeperf_cache_write(path, &a->perf, &err) < 0)
        hrm_log(HRM_LOG_WARNING, "bench: %s; measuring again next start", err.text);
}

int hrm_agent_bench(const struct hrm_agent_config *cfg, bool json, struct hrm_error *err)
{
    struct agent *a = hrm_calloc(1, sizeof(*a));
    a->cfg = *cfg;
    char host[64] = "localhost";
    gethostname(host, sizeof(host) - 1);
    snprintf(a->name, sizeof(a->name), "%.47s", cfg->name ? cfg->name : host);
    snprintf(a->state_dir, sizeof(a->state_dir), "%s", cfg->state_dir ? cfg->state_dir : ".");
    if (cfg->keys_dir)
        snprintf(a->keys_dir, sizeof(a->keys_dir), "%s", cfg->keys_dir);
    else
        snprintf(a->keys_dir, sizeof(a->keys_dir), "%s/keys", a->state_dir);
    hw_discover(&a->hw, a->name, false);
    /* The node's cgroup folder is named by the cluster (master.pub); without keys the bench
     * still runs, under a folder of its own. */
    struct hrm_keypair master;
    struct hrm_error kerr;
    cg_cluster_id(hrm_keys_load(a->keys_dir, "master", true, &master, &kerr) == 0 ? master.pub
                                                                                : "bench",
                  a->cluster);
    if (agent_mkdirs(a->state_dir, 0700) < 0) {
        int rc = hrm_errorf(err, -errno, "cannot make the state folder %s: %s", a->state_dir,
                            strerror(errno));
        hrm_free(a);
        return rc;
    }
    speed_apply_disk(a);
    int rc = bench_run(a, &a->perf, err);
    char path[1100];
    perf_path(a, "json", path, sizeof(path));
    struct hrm_error werr = {{0}};
    bool saved = rc == 0 && nodeperf_cache_fits(&a->perf, speed_of(a), a->perf.disk_bps) &&
                 nodeperf_cache_write(path, &a->perf, &werr) == 0;
    if (rc == 0 && json) {
        json_t *o = nodeperf_to_json(&a->perf);
        json_object_set_new(o, "name", json_string(a->name));
        json_object_set_new(o, "cache", saved ? json_string(path) : json_null());
        char *s = json_dumps(o, JSON_INDENT(2));
        printf("%s\n", s);
        free(s);
        json_decref(o);
    } else if (rc == 0) {
        const struct node_perf *p = &a->perf;
        printf("node       %s (speed %g of %d CPUs)\n", a->name, p->speed, a->hw.pus);
        printf("cpu        %.2f M iterations/s per core (all %d at once)\n", p->cpu / 1e6,
               a->hw.pus);
        printf("memory     %.0f MB/s copied\n", p->mem_bw / 1e6);
        if (p->disk_bw > 0)
            printf("disk       %.1f MB/s written and fsync'd in %s\n", p->disk_bw / 1e6,
                   a->state_dir);
        else
            printf("disk       unknown (the bench could not write its file)\n");
        printf("saved in   %s\n", saved ? path : "(not saved: a figure is unknown)");
    }
    if (rc == 0 && !saved && werr.text[0])
        fprintf(stderr, "hrm agent: bench: %s\n", werr.text);
    speed_fini(a); /* the node's cgroup folders are a live agent's, if any: left as they are */
    hrm_free(a);
    return rc;
}

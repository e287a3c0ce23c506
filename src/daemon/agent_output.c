/* Task output on the agent: served to `hrm logs` in chunks, each file bounded (--max-output), old jobs' output removed (--output-retention). */
#define _GNU_SOURCE 1 /* fallocate, FALLOC_FL_COLLAPSE_RANGE */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_private.h"
#include "hrm/alloc.h"
#include "hrm/clock.h"
#include "hrm/log.h"
#include "hrm/units.h"
#include "hrm/wire.h"

#define CAP_PERIOD_US 1000000  /* sizes of running tasks' files are checked this often */
#define SWEEP_MAX_PERIOD_US 60000000
#define TEXT_TAIL_MAX (32 << 10) /* the text reply of an offset-less fetch stays a wire string */
#define MARKER_MAX 256
#define MARKER_HEAD "[hrm: "
#define MARKER_FMT MARKER_HEAD "%lld earlier bytes of this output were dropped; the agent keeps at most %s per file (hrm agent --max-output)]\n"

static void out_path(const struct agent *a, int64_t job, int32_t task, const char *stream,
                     char *buf, size_t len)
{
    snprintf(buf, len, "%s/%lld/%d.%s", a->work_dir, (long long)job, task, stream);
}

/*
 * A file whose head was dropped starts with one marker line that says how many
 * bytes of the task's output it no longer holds (n), followed by the rest of
 * the output.  Offsets on the wire count the task's bytes (n + position after
 * the marker), so a reader's offset stays valid when the head is dropped.
 */
struct marker {
    long long dropped; /* the task's bytes no longer in the file */
    size_t len;        /* bytes of the marker line; 0: no marker */
};

static struct marker read_marker(int fd)
{
    struct marker mk = {0, 0};
    char head[MARKER_MAX + 1];
    ssize_t n = pread(fd, head, MARKER_MAX, 0);
    if (n <= (ssize_t)strlen(MARKER_HEAD) || memcmp(head, MARKER_HEAD, strlen(MARKER_HEAD)) != 0)
        return mk;
    head[n] = '\0';
    char *nl = memchr(head, '\n', (size_t)n);
    long long d;
    if (nl && sscanf(head + strlen(MARKER_HEAD), "%lld", &d) == 1 && d >= 0) {
        mk.dropped = d;
        mk.len = (size_t)(nl - head) + 1;
    }
    return mk;
}

/* The marker line in buf; its length.  It says `before` bytes were dropped, plus its own length
 * when it overwrites the first bytes the file keeps (those are dropped too). */
static size_t format_marker(long long before, bool overwrites, int64_t cap, char *buf, size_t len)
{
    char capt[32];
    hrm_format_size(cap, capt, sizeof(capt));
    size_t m = 0;
    for (int i = 0; i < 4; i++) { /* its length depends on the number it holds: a fixed point */
        size_t n = (size_t)snprintf(buf, len, MARKER_FMT, before + (overwrites ? (long long)m : 0),
                                    capt);
        if (n == m)
            break;
        m = n;
    }
    return m;
}

/*
 * Bounds one output file: over the cap, its oldest bytes are removed in place
 * (FALLOC_FL_COLLAPSE_RANGE, whole blocks) so that half the cap remains, and
 * the marker line says how much is gone.  The task writes with O_APPEND, so
 * its next write lands at the new end.  A file system without the operation
 * (tmpfs, btrfs) gets the file emptied instead.
 */
static void cap_file(struct agent *a, const char *path)
{
    int64_t cap = a->cfg.max_output;
    struct stat st;
    /* No symbolic links: the agent must never cut a file the task pointed it at. */
    if (cap <= 0 || lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= cap)
        return;
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    struct marker old = read_marker(fd);
    int64_t blk = st.st_blksize > 0 ? st.st_blksize : 4096;
    int64_t cut = (st.st_size - cap / 2) / blk * blk;
    char text[MARKER_MAX];
    long long before;
    if (cut > (int64_t)old.len && fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 0, cut) == 0) {
        before = old.dropped + (long long)(cut - (int64_t)old.len);
        size_t m = format_marker(before, true, cap, text, sizeof(text));
        before += (long long)m;
        if (pwrite(fd, text, m, 0) != (ssize_t)m)
            hrm_log(HRM_LOG_WARNING, "%s: marker not written: %s", path, strerror(errno));
    } else {
        /* The marker goes over the file's head first, then the file is cut right after it, so
         * the marker is always the file's first line: a task writing meanwhile (O_APPEND)
         * lands after it, never before, and the next cut still finds the count.  Bytes the
         * task writes between the size read here and the cut are lost uncounted. */
        off_t size = lseek(fd, 0, SEEK_END);
        before = old.dropped + (long long)((int64_t)size - (int64_t)old.len);
        size_t m = format_marker(before, false, cap, text, sizeof(text));
        if (size < (off_t)m || pwrite(fd, text, m, 0) != (ssize_t)m || ftruncate(fd, (off_t)m) < 0)
            hrm_log(HRM_LOG_WARNING, "%s: cannot bound it: %s", path, strerror(errno));
    }
    close(fd);
    hrm_log(HRM_LOG_INFO, "%s: over --max-output; %lld earlier bytes dropped", path, before);
}

void aout_run_ended(struct agent *a, int64_t job, int32_t task)
{
    char path[1300];
    out_path(a, job, task, "out", path, sizeof(path));
    cap_file(a, path);
    out_path(a, job, task, "err", path, sizeof(path));
    cap_file(a, path);
}

/* ---- retention ---- */

static bool job_live(const struct agent *a, int64_t job)
{
    for (size_t i = 0; i < a->nruns; i++)
        if (a->runs[i].job == job)
            return true;
    return false;
}

/* Removes JOB's folder when nothing in it changed since cutoff (wall clock, s). */
static void sweep_job(struct agent *a, int64_t job, const char *dir, time_t cutoff)
{
    struct stat st;
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_mtime >= cutoff)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    char path[1520];
    struct dirent *e;
    bool old = true;
    while (old && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%.1300s/%.200s", dir, e->d_name);
            old = lstat(path, &st) == 0 && st.st_mtime < cutoff;
        }
    for (rewinddir(d); old && (e = readdir(d));)
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%.1300s/%.200s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    if (old && rmdir(dir) == 0) {
        if (a->dir_job == job)
            a->dir_job = 0; /* a later task of the job makes the folder again */
        hrm_log(HRM_LOG_INFO, "output of job %lld removed: unchanged for longer than "
                "--output-retention", (long long)job);
    }
}

static void sweep(struct agent *a)
{
    DIR *d = opendir(a->work_dir);
    if (!d)
        return;
    time_t cutoff = (time_t)((agent_now_us() - a->cfg.output_retention_us) / 1000000);
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long long job = strtoll(e->d_name, &end, 10);
        if (*end || job <= 0 || job_live(a, job))
            continue;
        char dir[1300];
        snprintf(dir, sizeof(dir), "%.1100s/%.180s", a->work_dir, e->d_name);
        sweep_job(a, job, dir, cutoff);
    }
    closedir(d);
}

void aout_tick(struct agent *a)
{
    int64_t now = hrm_mono_us();
    if (a->cfg.max_output > 0 && now >= a->next_cap_us) {
        for (size_t i = 0; i < a->nruns; i++)
            if (!a->runs[i].no_output)
                aout_run_ended(a, a->runs[i].job, a->runs[i].task);
        a->next_cap_us = now + CAP_PERIOD_US;
    }
    if (a->cfg.output_retention_us > 0 && now >= a->next_sweep_us) {
        sweep(a);
        int64_t period = a->cfg.output_retention_us / 4;
        a->next_sweep_us = now + (period < 1000000             ? 1000000
                                  : period > SWEEP_MAX_PERIOD_US ? SWEEP_MAX_PERIOD_US
                                                                 : period);
    }
}

/* ---- serving logs_fetch ---- */

/* Log text as valid UTF-8 (JSON strings must be): invalid bytes become '?'. */
static void sanitize_utf8(unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        bool ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = (s[i + k] & 0xc0) == 0x80;
        if (c == 0)
            ok = false;
        if (!ok) {
            s[i++] = '?';
            continue;
        }
        i += len;
    }
}

/* A fetch without "offset" (an older master): the end of the file as text. */
static void serve_text_tail(json_t *m, int fd, off_t size, int64_t max)
{
    if (max <= 0 || max > TEXT_TAIL_MAX)
        max = TEXT_TAIL_MAX;
    off_t from = size > max ? size - max : 0;
    unsigned char *buf = hrm_alloc((size_t)(size - from) + 1);
    ssize_t got = pread(fd, buf, (size_t)(size - from), from);
    if (got < 0)
        got = 0;
    sanitize_utf8(buf, (size_t)got);
    json_object_set_new(m, "data", json_stringn((const char *)buf, (size_t)got));
    json_object_set_new(m, "size", json_integer(size));
    hrm_free(buf);
}

/* Bytes [offset, offset + max) of the task's output (offsets count the task's bytes, see
 * struct marker), base64 in "chunk"; "next" is the offset to ask for next. */
static void serve_chunk(json_t *m, int fd, off_t fsize, int64_t offset, int64_t max)
{
    if (max <= 0 || max > HRM_LOGS_CHUNK_MAX)
        max = HRM_LOGS_CHUNK_MAX;
    struct marker mk = read_marker(fd);
    int64_t shift = mk.dropped - (int64_t)mk.len; /* offset = position + shift after the marker */
    int64_t pos = mk.len && offset < mk.dropped ? 0 : offset - shift;
    if (pos > fsize)
        pos = fsize; /* the file was started again (a new attempt): the client sees "attempt" */
    size_t want = (size_t)(fsize - pos < max ? fsize - pos : max);
    unsigned char *buf = hrm_alloc(want + 1);
    ssize_t got = pread(fd, buf, want, pos);
    if (got < 0)
        got = 0;
    size_t b64len = sodium_base64_encoded_len((size_t)got, sodium_base64_VARIANT_ORIGINAL);
    char *b64 = hrm_alloc(b64len);
    sodium_bin2base64(b64, b64len, buf, (size_t)got, sodium_base64_VARIANT_ORIGINAL);
    json_object_set_new(m, "chunk", json_string(b64));
    int64_t end = pos + got;
    json_object_set_new(m, "next", json_integer(end >= (int64_t)mk.len ? end + shift : offset));
    json_object_set_new(m, "size", json_integer(fsize >= (off_t)mk.len ? fsize + shift : fsize));
    json_object_set_new(m, "eof", json_boolean(pos + got >= fsize));
    hrm_free(b64);
    hrm_free(buf);
}

json_t *aout_serve(struct agent *a, const json_t *fetch)
{
    int64_t job = json_integer_value(json_object_get(fetch, "job"));
    int32_t task = (int32_t)json_integer_value(json_object_get(fetch, "task"));
    int32_t attempt = (int32_t)json_integer_value(json_object_get(fetch, "attempt"));
    const char *stream = json_string_value(json_object_get(fetch, "stream"));
    const json_t *offset = json_object_get(fetch, "offset");
    char path[1300];
    out_path(a, job, task, strcmp(stream, "err") == 0 ? "err" : "out", path, sizeof(path));
    json_t *m = hrm_wire_new(HRM_WIRE_LOGS_DATA);
    json_object_set(m, "req", json_object_get(fetch, "req"));
    bool running = false;
    for (size_t i = 0; i < a->nruns && !running; i++)
        running = a->runs[i].job == job && a->runs[i].task == task &&
                  a->runs[i].attempt == attempt;
    json_object_set_new(m, "running", json_boolean(running));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        json_object_set_new(m, "error",
                            errno == ENOENT
                                ? json_sprintf("node %s has no such output (never written, or "
                                               "removed after --output-retention)", a->name)
                                : json_sprintf("%s: %s", path, strerror(errno)));
        if (fd >= 0)
            close(fd);
        return m;
    }
    int64_t max = json_integer_value(json_object_get(fetch, "max"));
    if (offset)
        serve_chunk(m, fd, st.st_size, json_integer_value(offset), max);
    else
        serve_text_tail(m, fd, st.st_size, max);
    close(fd);
    return m;
}

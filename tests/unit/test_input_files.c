/* Input files: regular files only, read with a bound, for job files and specs alike. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hrm/alloc.h"
#include "hrm/jobdesc.h"
#include "hrm/readfile.h"
#include "hrm/spec.h"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof(dir), "/tmp/hrm-input-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void path_in(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

Test(input_files, refuses_what_is_not_a_regular_file, .init = make_dir)
{
    char fifo[128];
    path_in(fifo, sizeof(fifo), "fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    struct hrm_error err;
    char *buf;
    size_t len;
    /* Nobody writes to the FIFO: the old reader blocked here for ever. */
    cr_assert_eq(hrm_read_regular_file(fifo, "f", 100, &buf, &len, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "f: not a regular file (a FIFO)"), "%s", err.text);
    cr_assert_null(hrm_jobdesc_load(fifo, &err));
    cr_assert(strstr(err.text, "a FIFO"), "%s", err.text);
    cr_assert_null(hrm_spec_load(fifo, 1, &err));
    cr_assert(strstr(err.text, "a FIFO"), "%s", err.text);
    cr_assert_null(hrm_jobdesc_load("/dev/zero", &err));
    cr_assert(strstr(err.text, "a character device"), "%s", err.text);
    cr_assert_null(hrm_spec_load("/dev/zero", 1, &err));
    cr_assert(strstr(err.text, "a character device"), "%s", err.text);
    cr_assert_null(hrm_jobdesc_load(dir, &err));
    cr_assert(strstr(err.text, "a directory"), "%s", err.text);
    cr_assert_null(hrm_jobdesc_load("/nonexistent/job.json", &err));
    cr_assert(strstr(err.text, "cannot open"), "%s", err.text);
    unlink(fifo);
    rmdir(dir);
}

Test(input_files, reads_within_the_bound_and_refuses_beyond, .init = make_dir)
{
    char path[128];
    path_in(path, sizeof(path), "f");
    write_text(path, "{\"tasks\": [{\"cmd\": \"true\"}]}");
    struct hrm_error err;
    char *buf;
    size_t len;
    cr_assert_eq(hrm_read_regular_file(path, "f", 28, &buf, &len, &err), 0, "%s", err.text);
    cr_assert_eq(len, 28);
    cr_assert_eq(buf[len], '\0');
    cr_assert_eq(memcmp(buf, "{\"tasks\"", 8), 0);
    hrm_free(buf);
    cr_assert_eq(hrm_read_regular_file(path, "f", 27, &buf, &len, &err), -HRM_ESPEC);
    cr_assert(strstr(err.text, "larger than the limit of 27"), "%s", err.text);
    cr_assert_null(buf);
    json_t *j = hrm_jobdesc_load(path, &err);
    cr_assert_not_null(j, "%s", err.text);
    json_decref(j);
    /* An empty file reads as empty. */
    write_text(path, "");
    cr_assert_eq(hrm_read_regular_file(path, "f", 10, &buf, &len, &err), 0);
    cr_assert_eq(len, 0);
    hrm_free(buf);
    unlink(path);
    rmdir(dir);
}

Test(input_files, a_spec_over_its_memory_bound_is_refused_before_it_is_built, .init = make_dir)
{
    char path[128];
    path_in(path, sizeof(path), "huge.json");
    write_text(path, "{\"cluster\": {\"nodes\": [{\"name\": \"n\", \"count\": 4, \"cores\": 8, \"mem\": "
          "\"16G\"}]},\n \"workload\": {\"jobs\": [{\"name\": \"big\", \"tasks\": 50000000, "
          "\"task\": {\"cpu\": 1, \"mem\": \"1G\", \"duration\": \"1s\"}}]}}\n");
    struct hrm_error err;
    cr_assert_null(hrm_spec_load_bounded(path, 1, 1LL << 30, &err));
    cr_assert(strstr(err.text, "workload.jobs[0].tasks: 50000000 tasks in all would need about "),
              "%s", err.text);
    /* 1,000 tasks fit in 1 MiB at the estimate. */
    write_text(path, "{\"cluster\": {\"nodes\": [{\"name\": \"n\", \"cores\": 8, \"mem\": \"16G\"}]},\n"
          " \"workload\": {\"jobs\": [{\"name\": \"j\", \"tasks\": 1000, \"task\": "
          "{\"duration\": \"1s\"}}]}}\n");
    struct hrm_spec *spec = hrm_spec_load_bounded(path, 1, 1LL << 20, &err);
    cr_assert_not_null(spec, "%s", err.text);
    hrm_spec_free(spec);
    unlink(path);
    rmdir(dir);
}

/* The hot messages written as text (launches, end acknowledgements, the batch around them, the agent's starts and ends): the same bytes as their jansson trees. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent_private.h"
#include "daemon/master_private.h"
#include "hrm/alloc.h"
#include "hrm/jsontext.h"
#include "hrm/rng.h"
#include "hrm/wire.h"

#define ROUNDS 600

static uint64_t pick(struct hrm_rng *r, uint64_t n)
{
    return hrm_rng_below(r, n);
}

static const char *const words[] = {"/bin/true", "a b", "x=\"y\"", "tab\there", "\xc3\xa9t\xc3\xa9",
                                    "back\\slash", "", "/usr/bin:/bin", "nl\n", "\x01"};
#define NWORDS (sizeof(words) / sizeof(words[0]))

/* A job of 1-3 groups as the master holds it: its normalised spec's cmd, cwd, env and output
 * (each sometimes absent), requests, shares, user and tasks' attempts and GPU masks. */
static struct rjob *random_job(struct hrm_rng *r)
{
    struct rjob *j = hrm_calloc(1, sizeof(*j));
    j->id = (int64_t)pick(r, 2) ? (int64_t)pick(r, 100) : (int64_t)(hrm_rng_u64(r) >> 1);
    snprintf(j->user, sizeof(j->user), "%s", pick(r, 4) ? "root" : words[pick(r, NWORDS)]);
    j->ngroups = 1 + (int32_t)pick(r, 3);
    j->greq = hrm_calloc((size_t)j->ngroups, sizeof(*j->greq));
    j->gshare = hrm_calloc((size_t)j->ngroups, sizeof(*j->gshare));
    json_t *groups = json_array();
    for (int32_t g = 0; g < j->ngroups; g++) {
        json_t *grp = json_object();
        if (pick(r, 10)) {
            json_t *cmd = json_array();
            for (uint64_t i = 1 + pick(r, 3); i > 0; i--)
                json_array_append_new(cmd, json_string(words[pick(r, NWORDS)]));
            json_object_set_new(grp, "cmd", cmd);
        }
        if (pick(r, 10))
            json_object_set_new(grp, "cwd", json_string(words[pick(r, NWORDS)]));
        if (pick(r, 2)) {
            json_t *env = json_object();
            for (uint64_t i = pick(r, 4); i > 0; i--)
                json_object_set_new(env, words[pick(r, NWORDS)], json_string(words[pick(r, NWORDS)]));
            json_object_set_new(grp, "env", env);
        }
        if (pick(r, 3) == 0)
            json_object_set_new(grp, "output", pick(r, 2) ? json_false() : json_true());
        json_array_append_new(groups, grp);
        for (int d = 0; d < HRM_NDIM; d++)
            j->greq[g].v[d] = pick(r, 3) ? (int64_t)pick(r, 1 << 20) : (int64_t)(hrm_rng_u64(r) >> 2);
        j->gshare[g] = (int32_t)pick(r, 1001);
    }
    j->spec = json_pack("{s:o}", "tasks", groups);
    j->ntasks = 1 + (int32_t)pick(r, 5);
    j->tasks = hrm_calloc((size_t)j->ntasks, sizeof(*j->tasks));
    for (int32_t k = 0; k < j->ntasks; k++) {
        j->tasks[k].group = (int32_t)pick(r, (uint64_t)j->ngroups);
        j->tasks[k].attempt = (int32_t)pick(r, 4);
        j->tasks[k].gpu_mask = pick(r, 2) ? 0 : (uint32_t)hrm_rng_u64(r);
    }
    return j;
}

static void job_free(struct rjob *j)
{
    json_decref(j->spec);
    hrm_free(j->greq);
    hrm_free(j->gshare);
    hrm_free(j->tasks);
    hrm_free(j);
}

Test(onehost3_launch, a_launch_s_text_is_its_tree_s_dump)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 299);
    for (int round = 0; round < ROUNDS; round++) {
        struct rjob *j = random_job(&r);
        for (int32_t k = 0; k < j->ntasks; k++) {
            json_t *tree = jobs_launch_json(NULL, j, k);
            size_t wlen, glen;
            char *want = hrm_wire_dump(tree, &wlen);
            char *got = jobs_launch_text(j, k, &glen);
            cr_assert_not_null(want);
            cr_assert_eq(glen, wlen, "round %d task %d", round, k);
            cr_assert_str_eq(got, want, "round %d task %d", round, k);
            /* and what jansson writes itself */
            char *jans = json_dumps(tree, JSON_COMPACT);
            cr_assert_str_eq(got, jans);
            free(jans);
            free(want);
            free(got);
            json_decref(tree);
        }
        job_free(j);
    }
}

Test(onehost3_launch, an_end_ack_s_text_is_its_tree_s_dump)
{
    static const int64_t v[] = {0, 1, 7, 2147483647, INT64_MAX, 1764151234567890};
    for (size_t a = 0; a < 6; a++)
        for (size_t b = 0; b < 6; b++) {
            json_t *tree = hrm_wire_new(HRM_WIRE_TASK_END_ACK);
            json_object_set_new(tree, "job", json_integer(v[a]));
            json_object_set_new(tree, "task", json_integer(v[b]));
            json_object_set_new(tree, "attempt", json_integer(v[(a + b) % 6]));
            char *want = json_dumps(tree, JSON_COMPACT);
            size_t len;
            char *got = master_end_ack_text(v[a], v[b], v[(a + b) % 6], &len);
            cr_assert_str_eq(got, want);
            cr_assert_eq(len, strlen(want));
            free(want);
            free(got);
            json_decref(tree);
        }
}

/* A batch of trees and texts mixed: the frame hrm_wire_dump_batch writes for the same trees. */
Test(onehost3_launch, a_batch_of_texts_and_trees_is_the_batch_s_dump)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 300);
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + pick(&r, 20);
        struct hrm_wire_item items[20];
        json_t *trees = json_array();
        for (size_t i = 0; i < n; i++) {
            json_t *m = hrm_wire_new(HRM_WIRE_TASK_KILL);
            json_object_set_new(m, "job", json_integer((json_int_t)pick(&r, 1000)));
            json_object_set_new(m, "why", json_string(words[pick(&r, NWORDS)]));
            json_array_append_new(trees, m);
            items[i] = (struct hrm_wire_item){.msg = m};
            if (pick(&r, 2)) {
                char *t = hrm_json_dump(m, &items[i].len);
                items[i] = (struct hrm_wire_item){.text = t, .len = strlen(t)};
            }
        }
        size_t wlen, glen;
        char *want = hrm_wire_dump_batch(trees, &wlen);
        char *got = hrm_wire_batch_text(items, n, &glen);
        cr_assert_str_eq(got, want, "round %d", round);
        cr_assert_eq(glen, wlen);
        free(want);
        free(got);
        for (size_t i = 0; i < n; i++)
            if (!items[i].msg)
                free((char *)items[i].text);
        json_decref(trees);
    }
    /* Over the frame limit: NULL, as hrm_wire_dump_batch (the items then go one by one). */
    size_t big = HRM_WIRE_MAX_BYTES / 2 + 16;
    char *text = hrm_alloc(big + 1);
    memset(text, ' ', big);
    text[big] = '\0';
    struct hrm_wire_item two[2] = {{.text = text, .len = big}, {.text = text, .len = big}};
    size_t len;
    cr_assert_null(hrm_wire_batch_text(two, 2, &len));
    hrm_free(text);
}

/* The agent's reports per task: task_started and task_end texts = their trees' dumps. */
Test(onehost3_launch, an_agent_s_reports_are_their_trees_dumps)
{
    struct hrm_rng r;
    hrm_rng_seed(&r, 301);
    for (int round = 0; round < ROUNDS; round++) {
        struct arun run = {0};
        run.job = (int64_t)(hrm_rng_u64(&r) >> pick(&r, 64));
        run.task = (int32_t)pick(&r, 100000);
        run.attempt = (int32_t)pick(&r, 5);
        run.pid = (pid_t)pick(&r, 4194304);
        run.start_us = (int64_t)(hrm_rng_u64(&r) >> 12);
        run.end_us = run.start_us + (int64_t)pick(&r, 1000000);
        run.status = (int)pick(&r, 2);
        run.exit = pick(&r, 4) ? 0 : (int)pick(&r, 300) - 20;
        run.signal = (int)pick(&r, 3) * 9;
        run.oom = pick(&r, 5) == 0;
        run.cpu_us = (int64_t)pick(&r, 1 << 30);
        run.rss = (int64_t)pick(&r, (uint64_t)1 << 40);
        if (pick(&r, 3) == 0) /* words[] has a cut-free é and control bytes; "\xc3" is cut */
            snprintf(run.error, sizeof(run.error), "%s: %s", words[pick(&r, NWORDS)],
                     pick(&r, 4) ? words[pick(&r, NWORDS)] : "cut \xc3");
        json_t *end = exec_end_json(&run);
        char *want = json_dumps(end, JSON_COMPACT);
        size_t len;
        char *got = exec_end_text(&run, &len);
        cr_assert_str_eq(got, want, "round %d", round);
        cr_assert_eq(len, strlen(want));
        free(want);
        free(got);
        json_decref(end);
        json_t *st = hrm_wire_new(HRM_WIRE_TASK_STARTED);
        json_object_set_new(st, "job", json_integer(run.job));
        json_object_set_new(st, "task", json_integer(run.task));
        json_object_set_new(st, "attempt", json_integer(run.attempt));
        json_object_set_new(st, "pid", json_integer(run.pid));
        json_object_set_new(st, "start_us", json_integer(run.start_us));
        want = json_dumps(st, JSON_COMPACT);
        got = exec_started_text(&run, &len);
        cr_assert_str_eq(got, want, "round %d", round);
        free(want);
        free(got);
        json_decref(st);
    }
}

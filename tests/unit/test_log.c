/* Logging: level filter before argument evaluation, redirectable sink, level names. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "hrm/log.h"

struct capture {
    int n, level;
    char line[256];
};

static void sink(void *arg, int level, const char *line)
{
    struct capture *c = arg;
    c->n++;
    c->level = level;
    strncpy(c->line, line, sizeof(c->line) - 1);
}

static int evaluated;
static int side_effect(void)
{
    return ++evaluated;
}

Test(log, filters_before_evaluating_arguments)
{
    struct capture c = {0};
    hrm_log_setup("test", HRM_LOG_NOTICE);
    hrm_log_set_sink(sink, &c);
    hrm_log(HRM_LOG_DEBUG, "x %d", side_effect());
    cr_assert_eq(evaluated, 0);
    cr_assert_eq(c.n, 0);
    hrm_log(HRM_LOG_WARNING, "job %d", 7);
    cr_assert_eq(c.n, 1);
    cr_assert_str_eq(c.line, "job 7");
    cr_assert_eq(c.level, HRM_LOG_WARNING);
    hrm_log_err(HRM_LOG_ERR, -ENOENT, "open %s", "f");
    cr_assert(strstr(c.line, "open f: "));
    hrm_log_set_sink(NULL, NULL);
}

Test(log, level_names)
{
    cr_assert_eq(hrm_log_parse_level("debug"), HRM_LOG_DEBUG);
    cr_assert_eq(hrm_log_parse_level("WARN"), HRM_LOG_WARNING);
    cr_assert_eq(hrm_log_parse_level("3"), HRM_LOG_ERR);
    cr_assert_eq(hrm_log_parse_level("loud"), -1);
    cr_assert_str_eq(hrm_log_level_name(HRM_LOG_INFO), "info");
}

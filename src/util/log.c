/* Daemon logging: level filter, "time name level: message" lines, stderr or a caller's sink. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "hrm/error.h"
#include "hrm/log.h"

#define LOG_LINE_MAX 2048

/* The process's logger (see log.h for why this one piece is process-wide). */
static struct {
    int level;
    char name[32];
    hrm_log_sink_f sink;
    void *arg;
} logger = {HRM_LOG_INFO, "hrm", NULL, NULL};

static const char *const level_names[] = {"emerg",   "alert",  "crit", "err",
                                          "warning", "notice", "info", "debug"};

void hrm_log_setup(const char *name, int level)
{
    snprintf(logger.name, sizeof(logger.name), "%s", name ? name : "hrm");
    hrm_log_set_level(level);
}

void hrm_log_set_sink(hrm_log_sink_f sink, void *arg)
{
    logger.sink = sink;
    logger.arg = arg;
}

void hrm_log_set_level(int level)
{
    logger.level = level < HRM_LOG_EMERG ? HRM_LOG_EMERG
                   : level > HRM_LOG_DEBUG ? HRM_LOG_DEBUG
                                           : level;
}

int hrm_log_get_level(void)
{
    return logger.level;
}

int hrm_log_parse_level(const char *s)
{
    if (!s)
        return -1;
    for (int i = 0; i <= HRM_LOG_DEBUG; i++)
        if (strcasecmp(s, level_names[i]) == 0)
            return i;
    if (strcasecmp(s, "warn") == 0)
        return HRM_LOG_WARNING;
    if (strcasecmp(s, "error") == 0)
        return HRM_LOG_ERR;
    if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
        return s[0] - '0';
    return -1;
}

const char *hrm_log_level_name(int level)
{
    return level >= 0 && level <= HRM_LOG_DEBUG ? level_names[level] : "?";
}

static void emit(int level, int code, const char *fmt, va_list ap)
{
    char line[LOG_LINE_MAX];
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    if (n < 0)
        return;
    if (code && (size_t)n < sizeof(line))
        snprintf(line + n, sizeof(line) - (size_t)n, ": %s", hrm_strerror(code));
    if (logger.sink) {
        logger.sink(logger.arg, level, line);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    char stamp[32];
    strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
    /* One fprintf per line: lines from concurrent daemons sharing a terminal stay whole. */
    fprintf(stderr, "%s.%03ld %s %s: %s\n", stamp, ts.tv_nsec / 1000000, logger.name,
            hrm_log_level_name(level), line);
}

void hrm_log_emit(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(level, 0, fmt, ap);
    va_end(ap);
}

void hrm_log_emit_err(int level, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(level, code, fmt, ap);
    va_end(ap);
}

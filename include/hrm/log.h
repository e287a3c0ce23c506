/* Daemon logging: one call, syslog levels, level checked before arguments are evaluated, redirectable sink. */
#ifndef HRM_LOG_H
#define HRM_LOG_H

#include <stdbool.h>

/*
 * Only the daemons (src/daemon, src/net, src/store) log.  The scheduling core
 * (model, state, policy, sched, sim) never does: it returns errors or emits
 * events, and the daemon that drives it decides what is worth a line.
 *
 * The logger is the one piece of process-wide state of hrm (like syslog
 * itself): it is configured once by main before any thread starts, and by
 * tests to capture lines.  Reading the level is the only thing hrm_log does
 * when a message is filtered out, so a debug line in a hot path costs a compare.
 */
enum hrm_log_level {
    HRM_LOG_EMERG,
    HRM_LOG_ALERT,
    HRM_LOG_CRIT,
    HRM_LOG_ERR,
    HRM_LOG_WARNING,
    HRM_LOG_NOTICE,
    HRM_LOG_INFO,
    HRM_LOG_DEBUG
};

/* Receives one formatted line (no trailing newline); line is borrowed for the call. */
typedef void (*hrm_log_sink_f)(void *arg, int level, const char *line);

/* Name and level for the line prefix and filter; name is copied. */
void hrm_log_setup(const char *name, int level);
/* Replaces the sink (NULL restores stderr).  Returns nothing: the logger cannot fail. */
void hrm_log_set_sink(hrm_log_sink_f sink, void *arg);
void hrm_log_set_level(int level);
int hrm_log_get_level(void);
/* "emerg".."debug" (or 0..7) to a level; -1 if unknown. */
int hrm_log_parse_level(const char *s);
const char *hrm_log_level_name(int level);

void hrm_log_emit(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, with ": <hrm_strerror(code)>" appended. */
void hrm_log_emit_err(int level, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define hrm_log(level, ...)                                                                    \
    do {                                                                                       \
        if ((level) <= hrm_log_get_level())                                                    \
            hrm_log_emit((level), __VA_ARGS__);                                                \
    } while (0)

#define hrm_log_err(level, code, ...)                                                          \
    do {                                                                                       \
        if ((level) <= hrm_log_get_level())                                                    \
            hrm_log_emit_err((level), (code), __VA_ARGS__);                                    \
    } while (0)

/* Identifier formats, so every line names jobs, tasks and nodes the same way:
 * hrm_log(HRM_LOG_INFO, "task " HRM_TASK_FMT " started", HRM_TASK_ARGS(job, idx, att)); */
#define HRM_JOB_FMT "job %lld"
#define HRM_TASK_FMT "%lld.%d#%d"
#define HRM_TASK_ARGS(job, task, attempt) (long long)(job), (int)(task), (int)(attempt)

#endif

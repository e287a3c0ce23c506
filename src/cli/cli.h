/* The hrm command: subcommand table shared by the cmd_*.c files. */
#ifndef HRM_CLI_H
#define HRM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
};

int cmd_sim(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* the runtime: cmd_daemon.c, cmd_up.c, cmd_client.c */
int cmd_master(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_sched(int argc, char **argv);
int cmd_keygen(int argc, char **argv);
int cmd_up(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_job(int argc, char **argv);
int cmd_nodes(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_wait(int argc, char **argv);
int cmd_raw(int argc, char **argv);
int cmd_raw_serve(int argc, char **argv);
int cmd_events(int argc, char **argv); /* cmd_events.c */
/* cmd_trace.c, cmd_trace_frag.c: hrm trace import / frag */
int cmd_trace(int argc, char **argv);
int cmd_trace_frag(int argc, char **argv);
struct hrm_trace;
/* Prints a bad-row message on stderr (an hrm_trace_report_f). */
void cli_trace_report_row(void *arg, const char *msg);
/* Reads a node and a pod list for 'hrm trace CMD', bad rows reported on stderr;
 * returns the count of bad rows, or a negative code (message printed). */
int cli_trace_load(struct hrm_trace *t, const char *cmd, const char *nodes, const char *pods,
                   bool strict);
int bench_flow(int argc, char **argv); /* bench_flow.c: hrm bench flow */
int bench_flowgen(int argc, char **argv); /* bench_flowgen.c: hrm bench flow-gen */
int bench_flowincr(int argc, char **argv); /* bench_flowincr.c: hrm bench flow-incr */
int bench_dhrm(int argc, char **argv); /* bench_dhrm.c: hrm bench dhrm */
int bench_central(int argc, char **argv); /* bench_central.c: hrm bench central */
int bench_throughput(int argc, char **argv); /* bench_throughput.c: hrm bench throughput */
void bench_remove_tree(const char *dir);      /* bench_throughput.c: rm -rf DIR */
int bench_p4real(int argc, char **argv);     /* bench_p4real.c: hrm bench p4real */
int bench_flood(int argc, char **argv);      /* bench_flood.c: hrm bench flood */
int bench_fleet(int argc, char **argv);      /* bench_fleet.c: hrm bench fleet */

/* printable.c: replaces, in place, every control character of every string in a
 * reply (a JSON value, borrowed) by \xHH before it is printed as text: a job name
 * must not be able to drive the reader's terminal.  (JSON output escapes them.) */
typedef struct json_t json_t;
void cli_escape_strings(json_t *v);

struct hrm_spec;
/* sweep_load.c: hrm sim SPEC --sweep-load A:B:S (policies' params as "P.key=value"). */
int cli_sweep_load(const struct hrm_spec *spec, const char *range, const char *const *policies,
                   int npolicies, const char **params, size_t nparams, uint64_t seed,
                   const char *plot_dir, int quiet);

/* Exit codes: 0 ok, 1 the run failed, 2 bad usage or input. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Parses flag's value s as an integer in lo..hi into *out; otherwise prints
 * "hrm CMD: FLAG: 'S' must be an integer in LO..HI" and returns -1. */
int cli_parse_int(const char *cmd, const char *flag, const char *s, long long lo, long long hi,
                  long long *out);

struct hrm_agent_config;
/* cmd_daemon.c: an agent flag for its tasks (getopt value 'U' --usage-period, 'O' --max-output,
 * 'R' --output-retention, 'P' --task-pids) parsed into cfg, as hrm agent takes it; hrm up checks
 * the ones it passes on with it.  0, or -1 after saying why on stderr. */
int cli_agent_task_flag(struct hrm_agent_config *cfg, int flag, const char *arg);
/* nodes_perf.c: hrm nodes' table of measured performance and NPARSA scores (the nodes array
 * of a nodes_list). */
void cli_print_nodes_perf(const json_t *nodes);
/* hrm agent --speed / --disk-bps (flag 'S' / 'D'): 0, or -1 after saying why. */
int cli_agent_perf_flag(struct hrm_agent_config *cfg, int flag, const char *arg);

/* Seconds on the monotonic clock: for timeouts, deadlines and wall-time measures. */
double cli_mono_s(void);

/* True when argv[i] is -h or --help. */
int cli_is_help(const char *arg);

#endif

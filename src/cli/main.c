/* hrm: entry point and subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cli_command commands[] = {
    {"sim", "simulate a cluster and workload under one or more policies", cmd_sim},
    {"bench", "run a named benchmark and print BENCH lines", cmd_bench},
    {"trace", "import production traces; GPU fragmentation experiment", cmd_trace},
    {"up", "run a local cluster: master and N agents on 127.0.0.1", cmd_up},
    {"master", "run the master (job table, store, scheduler)", cmd_master},
    {"agent", "run a node agent (discovery, launching, reporting)", cmd_agent},
    {"sched", "run scheduler instances of a distributed policy as a process", cmd_sched},
    {"keygen", "write the cluster's CURVE keys", cmd_keygen},
    {"submit", "submit a job (JSON file, or -- CMD ARGS)", cmd_submit},
    {"jobs", "list jobs", cmd_jobs},
    {"job", "show one job and its tasks", cmd_job},
    {"nodes", "list nodes", cmd_nodes},
    {"stats", "scheduling counters (shared-state commits and conflicts)", cmd_stats},
    {"cancel", "cancel a job", cmd_cancel},
    {"logs", "print a task's output", cmd_logs},
    {"wait", "wait for a job; exit with its code", cmd_wait},
    {"events", "print the cluster's event log (--follow: as it grows)", cmd_events},
    {"raw", "send raw frames to the master (protocol debugging)", cmd_raw},
    {"raw-serve", "send raw frames to an agent, as its master (protocol debugging)", cmd_raw_serve},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

int cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: hrm <command> [options]\n\n"
                 "hrm is a cluster resource manager for mixed batch, stream and GPU work.\n\n"
                 "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-9s  %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'hrm <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("hrm 0.1.0\n");
        return CLI_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "hrm: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return CLI_USAGE;
}

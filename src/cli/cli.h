/* The hrm command: subcommand table shared by the cmd_*.c files. */
#ifndef HRM_CLI_H
#define HRM_CLI_H

#include <stdio.h>

struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
};

int cmd_sim(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* Exit codes: 0 ok, 1 the run failed, 2 bad usage or input. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* True when argv[i] is -h or --help. */
int cli_is_help(const char *arg);

#endif

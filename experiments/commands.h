/* commands.h: the subcommands of the doppler command. Each takes (argc, argv) with argv[0] the
 * subcommand name and returns the exit status (0, 1 runtime error, 2 usage). */
#ifndef DP_COMMANDS_H
#define DP_COMMANDS_H

#include "config.h"

typedef struct dp_command {
    const char *name;
    const char *summary;
    int (*fn)(int argc, char **argv);
} dp_command;

int cmd_graph(int argc, char **argv);
int cmd_place(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_topology(int argc, char **argv);
int cmd_config(int argc, char **argv);

#endif

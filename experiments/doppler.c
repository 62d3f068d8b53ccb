/* doppler: the command. Subcommands live in cmd_*.c; this file only dispatches. */
#include "commands.h"
#include "dp_error.h"
#include "dp_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const dp_command commands[] = {
    {"graph", "inspect, generate and convert dataflow graphs (graph info FILE)", cmd_graph},
    {"place", "compute an assignment with a placement method and print its makespan", cmd_place},
    {"simulate", "simulate an assignment (from a file or a method) and print the makespan", cmd_simulate},
    {"calibrate", "profile the real executor and fit the cost model (calibrate profile|fit)", cmd_calibrate},
    {"validate", "run assignments for real and in the simulator; error, rank correlation, plot", cmd_validate},
    {"train", "train the DOPPLER policies (imitation, simulator RL), with checkpoints and resume", cmd_train},
    {"topology", "show a machine topology: devices, links, routes (topology show NAME|FILE)", cmd_topology},
    {"sweep", "run a sweep config over a process pool or MPI ranks, resumable HDF5 + CSV results", cmd_sweep},
    {"report", "tables (md, csv, tex) and gnuplot plots from sweep results", cmd_report},
    {"config", "the keys of each JSON config (train, searches, improve), from the readers' tables", cmd_config},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: doppler COMMAND [OPTIONS]\n\n"
               "Device assignment for asynchronous dataflow graphs: simulator, placement methods,\n"
               "and the DOPPLER dual policy (Yao et al., ICLR 2026).\n\nCommands:\n");
    for (const dp_command *c = commands; c->name; c++) fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "\nRun 'doppler COMMAND --help' for the options of one command.\n");
}

/* The command's exit status, or 1 when what it printed did not all reach standard output (a full
 * disk, /dev/full): a script that runs `doppler place --json > out.json` must not get an empty
 * file and status 0 (coreutils' close_stdout; until 2026-12-06 such a write failed silently) */
static int finish(int status)
{
    errno = 0;
    const int flushed = fflush(stdout) == 0;
    const int e = errno;
    /* a command that failed has said why (graph convert --out - into /dev/full did, and this
     * added a second, wrong reason) */
    if (status != 0 || (flushed && !ferror(stdout))) return status;
    if (!flushed && e) fprintf(stderr, "doppler: write failed: standard output: %s\n", strerror(e));
    else fprintf(stderr, "doppler: write failed: standard output (an earlier write did not reach it)\n");
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return finish(0);
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("doppler %s\n", PACKAGE_VERSION);
        return finish(0);
    }
    for (const dp_command *c = commands; c->name; c++)
        if (strcmp(argv[1], c->name) == 0) {
            /* a malformed DOPPLER_MEM_LIMIT is refused whatever the command allocates */
            dp_error err;
            if (dp_file_mem_env_check(&err) != DP_OK) {
                fprintf(stderr, "doppler %s: %s\n", c->name, err.msg);
                return finish(1);
            }
            return finish(c->fn(argc - 1, argv + 1));
        }
    fprintf(stderr, "doppler: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}

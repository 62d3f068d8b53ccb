/* exec_cli.h: what the commands that run the real executor share (calibrate, validate, train
 * --stage real). */
#ifndef DP_EXEC_CLI_H
#define DP_EXEC_CLI_H

#include <stddef.h>

/* Op kinds profiled when none are given: the kinds the generators emit, plus the synthetic
 * kernels of abstract-cost graphs. */
#define DP_CLI_DEFAULT_KINDS "input,matmul,add,mul,relu,gelu,silu,softmax,reduce,synthetic"

/* "HOST: CPU MODEL, N cores" from gethostname and /proc/cpuinfo (what is known). */
void dp_cli_machine_name(char *buf, size_t cap);

#endif

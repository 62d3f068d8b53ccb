/* exec_cli.c: helpers of the commands that run the real executor. */
#include "exec_cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void dp_cli_machine_name(char *buf, size_t cap)
{
    char host[128] = "unknown host", model[256] = "unknown CPU";
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown host");
    host[sizeof host - 1] = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) != 0) continue;
            char *c = strchr(line, ':');
            if (!c) continue;
            c++;
            while (*c == ' ' || *c == '\t') c++;
            c[strcspn(c, "\n")] = 0;
            snprintf(model, sizeof model, "%s", c);
            break;
        }
        fclose(f);
    }
    snprintf(buf, cap, "%s: %s, %ld cores", host, model, sysconf(_SC_NPROCESSORS_ONLN));
}

/* cmd_config.c: doppler config: the keys of each JSON config, printed from the tables the
 * readers use (dp_schema.h), as help text or as the man page's CONFIG KEYS section. */
#include "cli.h"
#include "commands.h"
#include "dp_improve.h"
#include "dp_place.h"
#include "dp_search.h"
#include "dp_train.h"
#include "sweep.h"

#include <stdio.h>
#include <string.h>

/* The configs: the trainer's two, then the placement methods' (from the method table; methods
 * sharing one config are named together). */
typedef struct config_entry {
    const char *name;                      /* what doppler config NAME takes */
    const char *used_by;                   /* where the config is given */
    const dp_schema_section *(*sections)(void);
} config_entry;

static const config_entry trainer_configs[] = {
    {"train", "doppler train --config (methods doppler, placeto, gdp); place --method placeto|gdp --config",
     dp_train_config_sections},
    {"train-improve", "doppler train --method improve --config", dp_improve_config_sections},
    {NULL, NULL, NULL},
};

/* the configs that are no method's: the machine's keys and the sweep config */
static const config_entry other_configs[] = {
    {"machine", "the machine keys of doppler place, train, graph info and validate (--KEY), of sweep configs' "
                "parameters and of doppler.Machine",
     dp_machine_sections},
    {"sweep", "doppler sweep CONFIG (doc/sweep-format.md)", dp_sweep_config_sections},
    {NULL, NULL, NULL},
};

/* "anneal, local" for the methods whose config is sections (their place --method names) */
static void methods_of(const dp_schema_section *(*sections)(void), char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (const dp_place_method *m = dp_place_methods(); m->name; m++)
        if (m->config == sections && len < cap) len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? "|" : "", m->name);
}

/* 1 if the config sections is a trainer's (its methods are named there) */
static int trainer_config(const dp_schema_section *(*sections)(void))
{
    for (const config_entry *c = trainer_configs; c->name; c++)
        if (c->sections == sections) return 1;
    return 0;
}

static void print_one(FILE *f, const char *name, const char *used_by, const dp_schema_section *s, int man)
{
    if (man) {
        fprintf(f, ".SS %s\n", name);
        for (const char *p = used_by; *p; p++) fputs(*p == '-' ? "\\-" : (char[2]){*p, 0}, f);
        fputs(".\n", f);
    } else {
        fprintf(f, "%s: %s\n", name, used_by);
    }
    dp_cli_print_config(f, s, man);
    if (!man) fputc('\n', f);
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: doppler config [NAME] [--man]\n\n"
               "The keys of each JSON config (--config FILE of train and place), from the tables the\n"
               "readers use: name, kind and range, default, meaning. An object's keys are named with it\n"
               "(\"adam.eps\"; stages.S: each stage S of il, sim, real). Unknown keys and values out of range\n"
               "are refused, naming the file and the key.\n\n"
               "  NAME     one config: train, train-improve, machine, sweep, or a placement method with a\n"
               "           config:");
    for (const dp_place_method *m = dp_place_methods(); m->name; m++)
        if (m->config) fprintf(f, " %s", m->name);
    /* the search method without a config: its one default (stated nowhere but the man page: a
     * review) */
    dp_search_exact_config ecfg;
    dp_search_exact_config_init(&ecfg);
    fprintf(f, "\n           (exact has none: place --budget N, its search nodes, default %ld)\n", ecfg.max_nodes);
    fprintf(f, "  --man    as the man page's troff (doc/doppler.1, CONFIG KEYS)\n"
               "  -h, --help  this help\n");
}

int cmd_config(int argc, char **argv)
{
    int man = 0;
    const char *want = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--man") == 0) man = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] != '-' && !want) want = argv[i];
        else return dp_cli_usage_error("config", "unexpected argument '%s'", argv[i]);
    }
    int found = 0;
    for (const config_entry *c = trainer_configs; c->name; c++)
        if (!want || strcmp(want, c->name) == 0) {
            print_one(stdout, c->name, c->used_by, c->sections(), man);
            found = 1;
        }
    for (const dp_place_method *m = dp_place_methods(); m->name; m++) {
        if (!m->config) continue;
        if (want ? strcmp(want, m->name) != 0 : trainer_config(m->config)) continue;
        /* each config once, under its first method's name */
        const dp_place_method *first = dp_place_methods();
        while (first->config != m->config) first++;
        if (!want && first != m) continue;
        char names[256], used_by[320];
        methods_of(m->config, names, sizeof names);
        snprintf(used_by, sizeof used_by, "doppler place --method %s --config", names);
        print_one(stdout, want ? want : names, used_by, m->config(), man);
        found = 1;
    }
    for (const config_entry *c = other_configs; c->name; c++)
        if (!want || strcmp(want, c->name) == 0) {
            print_one(stdout, c->name, c->used_by, c->sections(), man);
            found = 1;
        }
    if (!found) return dp_cli_usage_error("config", "no config called '%s' (doppler config --help lists them)", want);
    return 0;
}

#include "cli.h"
#include "dp_costmodel.h"
#include "dp_file.h"
#include "dp_h5io.h"
#include "dp_json.h"
#include "dp_train.h"

#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int dp_cli_fail(const dp_error *err)
{
    fprintf(stderr, "doppler: %s\n", err && err->msg[0] ? err->msg : "error");
    return DP_EXIT_ERROR;
}

void dp_cli_help_option(FILE *f, const char *lead, const char *text)
{
    const int indent = (int)strlen(lead);
    int width = DP_CLI_HELP_WIDTH - indent;
    if (width < 20) width = 20;
    fputs(lead, f);
    const char *p = text;
    for (;;) {
        int n = (int)strlen(p);
        if (n <= width) { fprintf(f, "%s\n", p); return; }
        int cut = width;
        while (cut > 0 && p[cut] != ' ') cut--;
        if (cut == 0) { cut = width; while (p[cut] && p[cut] != ' ') cut++; } /* a word longer than the line */
        fprintf(f, "%.*s\n%*s", cut, p, indent, "");
        p += cut;
        while (*p == ' ') p++;
        if (!*p) { fputc('\n', f); return; }
    }
}

/* 1 if key is the first part of a section's name ("stages" of "stages.S") */
static int is_section(const dp_schema_section *sections, const char *key)
{
    const size_t n = strlen(key);
    for (const dp_schema_section *s = sections; s->name; s++)
        if (strncmp(s->name, key, n) == 0 && (s->name[n] == '\0' || s->name[n] == '.')) return 1;
    return 0;
}

void dp_cli_help_config_keys(FILE *f, const char *lead, const dp_schema_section *sections)
{
    char line[4096] = "";
    size_t len = 0;
    for (const dp_schema_section *s = sections; s->name && len < sizeof line; s++) {
        char keys[1024] = "";
        if (s->keys) dp_schema_keys_text(s->keys, keys, sizeof keys);
        /* the object's keys outside its table, besides the objects listed as sections */
        for (const char *const *o = s->others; o && *o; o++)
            if (!is_section(sections, *o)) {
                const size_t k = strlen(keys);
                snprintf(keys + k, sizeof keys - k, "%s%s", k ? ", " : "", *o);
            }
        if (!keys[0]) continue;
        if (s->name[0])
            len += (size_t)snprintf(line + len, sizeof line - len, "%s%s.{%s}", len ? "; " : "", s->name, keys);
        else
            len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", len ? ", " : "", keys);
    }
    dp_cli_help_option(f, lead, line);
}

/* text for troff: '-' as "\-", a leading '.' or '\'' guarded */
static void man_text(FILE *f, const char *s)
{
    if (*s == '.' || *s == '\'') fputs("\\&", f);
    for (; *s; s++) {
        if (*s == '-') fputs("\\-", f);
        else if (*s == '\\') fputs("\\e", f);
        else fputc(*s, f);
    }
}

void dp_cli_print_config(FILE *f, const dp_schema_section *sections, int man)
{
    for (const dp_schema_section *s = sections; s->name; s++) {
        if (man) {
            fputs(".PP\n", f);
            if (s->name[0]) {
                fputs("\\fB", f);
                man_text(f, s->name);
                fputs("\\fR: ", f);
            }
            man_text(f, s->help);
            fputs(".\n", f);
        } else {
            char lead[160];
            snprintf(lead, sizeof lead, "  %s%s", s->name, s->name[0] ? ": " : "");
            dp_cli_help_option(f, lead, s->help);
        }
        for (const dp_schema_key *k = s->keys; k && k->key; k++) {
            char name[128], kind[256], lead[160];
            snprintf(name, sizeof name, "%s%s%s", s->name, s->name[0] ? "." : "", k->key);
            dp_schema_kind_text(k, kind, sizeof kind);
            if (man) {
                fputs(".TP\n.B ", f);
                man_text(f, name);
                fputs(" \"", f);
                man_text(f, kind);
                fputs("\"\n", f);
                char def[160];
                dp_schema_default_text(k, def, sizeof def);
                man_text(f, k->help);
                man_text(f, def);
                fputs("\n", f);
            } else {
                char text[2048], def[160];
                dp_schema_default_text(k, def, sizeof def);
                snprintf(text, sizeof text, "%s%s: %s", kind, def, k->help);
                snprintf(lead, sizeof lead, "  %-26s ", name);
                if (strlen(name) > 26) {
                    fprintf(f, "  %s\n", name);
                    snprintf(lead, sizeof lead, "  %-26s ", "");
                }
                dp_cli_help_option(f, lead, text);
            }
        }
    }
}

void dp_cli_print_machine_help(FILE *f)
{
    fputs("Machine (doppler config machine: kinds and ranges; as sweep parameters and Python keywords\n"
          "with '_' for '-', transfer for --transfer-model):\n", f);
    for (const dp_schema_key *k = dp_machine_keys(); k->key; k++) {
        char option[64], value[64], lead[160], def[160], text[2048];
        dp_schema_option_text(k, option, sizeof option);
        dp_schema_metavar(k, value, sizeof value);
        dp_schema_default_text(k, def, sizeof def);
        snprintf(text, sizeof text, "%s%s", k->help, def);
        snprintf(lead, sizeof lead, "  --%s %s", option, value);
        if (strlen(lead) > 22) {
            fprintf(f, "%s\n", lead);
            snprintf(lead, sizeof lead, "%23s", "");
        } else {
            snprintf(lead, sizeof lead, "  --%s %-*s", option, (int)(18 - strlen(option)), value);
        }
        dp_cli_help_option(f, lead, text);
    }
}

int dp_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    /* the whole message in one write: MPI ranks refusing at once interleaved their three pieces
     * ("doppler train: doppler train: --method improve ...", a review) */
    char msg[2048];
    int k = snprintf(msg, sizeof msg, "doppler %s: ", cmd);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < sizeof msg) k += vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
    va_end(ap);
    if (k >= 0 && (size_t)k < sizeof msg) snprintf(msg + k, sizeof msg - (size_t)k, "\nTry 'doppler %s --help'.\n", cmd);
    else snprintf(msg + sizeof msg - 96, 96, "...\nTry 'doppler %.40s --help'.\n", cmd); /* a message cut short */
    fputs(msg, stderr);
    fflush(stderr);
    return DP_EXIT_USAGE;
}

int dp_cli_check_machine(const char *cmd, const dp_machine *m)
{
    dp_error e;
    return dp_machine_check_keys(m, m->topology, &e) == DP_OK ? 0 : dp_cli_usage_error(cmd, "%s", e.msg);
}

int dp_cli_check_format(const char *cmd, const char *format)
{
    dp_error e;
    return dp_graph_format_check(format, &e) == DP_OK ? 0 : dp_cli_usage_error(cmd, "--format: %s", e.msg);
}

int dp_cli_check_write_format(const char *cmd, const char *to, const char *out)
{
    dp_error e;
    dp_error_clear(&e);
    if (to) return dp_graph_write_format_check(to, &e) == DP_OK ? 0 : dp_cli_usage_error(cmd, "--to: %s", e.msg);
    /* an output name of no format: the command's own option (graph gen named graph convert's
     * --to, as the library's message does); a directory is the write's to refuse */
    if (!out || dp_graph_write_format(out, NULL, &e) || e.code != DP_EINVAL) return 0;
    return dp_cli_usage_error(cmd, "%s: give --to json, dot or doppler", e.msg);
}

int dp_cli_files_distinct(const char *cmd, const dp_cli_file *outs, int n_outs, const dp_cli_file *ins, int n_ins)
{
    for (int i = 0; i < n_outs; i++) {
        const char *o = outs[i].path;
        if (o && !*o) return dp_cli_usage_error(cmd, "%s '': name a file", outs[i].option);
        if (!o || strcmp(o, "-") == 0) continue;
        for (int j = 0; j < i; j++)
            if (outs[j].path && strcmp(outs[j].path, "-") != 0 && dp_file_same_output(o, outs[j].path))
                return dp_cli_usage_error(cmd, "%s and %s name the same file (%s): one would replace the other",
                                          outs[j].option, outs[i].option, o);
        for (int j = 0; j < n_ins; j++)
            if (ins[j].path && strcmp(ins[j].path, "-") != 0 && dp_file_same_output(o, ins[j].path))
                return dp_cli_usage_error(cmd, "%s names the file of %s (%s): it would replace that input", outs[i].option,
                                          ins[j].option, o);
    }
    /* each output can be made, said before the work that ends in writing it (place --out into a
     * folder that takes no file searched to its budget, then failed: a review); a descriptor, a
     * character device or a FIFO is written in place (dp_file_atomic_open), and opening a FIFO
     * to try it would wait for its reader: left to the write (a writer that cannot write in
     * place, HDF5's, refuses a descriptor itself) */
    for (int i = 0; i < n_outs; i++) {
        const char *o = outs[i].path;
        struct stat st;
        if (!o || strcmp(o, "-") == 0 || dp_file_is_descriptor(o) ||
            (stat(o, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))))
            continue;
        char target[4096];
        dp_error e;
        if (dp_file_output_target(o, target, sizeof target, &e) != DP_OK) return dp_cli_fail(&e);
    }
    return 0;
}

/* dp_cli_note_checkpoint_coarsen's note from the checkpoint's info */
static void note_coarsen(const char *cmd, const char *what, const char *ckpt, const dp_h5io_ckpt_info *info, int coarsen,
                         dp_coarse_rule rule)
{
    dp_error e;
    dp_error_clear(&e);
    dp_train_config k;
    dp_train_config_default(&k);
    if (dp_train_config_from_json_text(&k, info->config_json, &e) == DP_OK &&
        (k.coarsen != coarsen || (coarsen > 0 && k.coarsen_rule != (int)rule))) {
        char a[64], b[64];
        dp_coarse_options_text(k.coarsen, (dp_coarse_rule)k.coarsen_rule, a, sizeof a);
        fprintf(stderr, "doppler %s: note: %s was trained on %s%s%s; %s has %s (doc/coarsen.md)\n", cmd, ckpt,
                k.coarsen > 0 ? "group graphs (" : "the graphs themselves (", a, ")", what,
                dp_coarse_options_text(coarsen, rule, b, sizeof b));
    }
}

void dp_cli_note_checkpoint_coarsen(const char *cmd, const char *what, const char *ckpt, int coarsen, dp_coarse_rule rule)
{
    dp_h5io_ckpt_info info;
    dp_error e;
    if (dp_h5io_ckpt_read_info(ckpt, &info, &e) != DP_OK) return;
    note_coarsen(cmd, what, ckpt, &info, coarsen, rule);
    dp_h5io_ckpt_info_free(&info);
}

/* dp_cli_note_checkpoint_place's note of the machine, from the checkpoint's info */
static void note_machine(const char *cmd, const char *ckpt, const dp_h5io_ckpt_info *info, const dp_graph *g,
                         const dp_cost *c, const dp_engine *e)
{
    json_t *on = info->trained_on ? json_loads(info->trained_on, 0, NULL) : NULL;
    char cfp[24], efp[24];
    snprintf(cfp, sizeof cfp, "%016llx", (unsigned long long)dp_cost_fingerprint(c));
    snprintf(efp, sizeof efp, "%016llx", (unsigned long long)(e ? dp_engine_fingerprint(e) : 0));
    int same_graph = 0, same_machine = 0;
    long devices = -1;
    const char *lists[2] = {"train", "validation"};
    for (int l = 0; l < 2; l++) {
        json_t *x;
        size_t i;
        json_array_foreach(json_object_get(on, lists[l]), i, x) {
            const char *name = json_string_value(json_object_get(x, "graph"));
            if (!name || strcmp(name, g->name ? g->name : "") != 0 ||
                json_integer_value(json_object_get(x, "n_ops")) != g->n_ops)
                continue;
            same_graph = 1;
            if (devices < 0) devices = (long)json_integer_value(json_object_get(x, "n_devices"));
            const char *xc = json_string_value(json_object_get(x, "costs")), *xe = json_string_value(json_object_get(x, "engine"));
            if (json_integer_value(json_object_get(x, "n_devices")) == c->n_devices && (!xc || strcmp(xc, cfp) == 0) &&
                (!xe || !e || strcmp(xe, efp) == 0))
                same_machine = 1;
        }
    }
    if (same_graph && !same_machine && devices != c->n_devices)
        fprintf(stderr, "doppler %s: note: %s trained on graph %s on %ld devices, this placement is on %d: give train's machine "
                        "options (--devices, --comm-ratio, --bandwidth, --topology, ...) to place on its machine\n",
                cmd, ckpt, g->name, devices, c->n_devices);
    else if (same_graph && !same_machine)
        fprintf(stderr, "doppler %s: note: %s trained on graph %s on %ld devices with other costs or simulator options: this "
                        "placement is on the machine these options give; give train's (--comm-ratio, --bandwidth, --topology, "
                        "--streams, --scale, --target-flops, ...) to place on its machine\n", cmd, ckpt, g->name, devices);
    json_decref(on);
}

void dp_cli_note_checkpoint_place(const char *cmd, const char *ckpt, int coarsen, dp_coarse_rule rule, const dp_graph *g,
                                  const dp_cost *c, const dp_engine *e)
{
    dp_h5io_ckpt_info info;
    dp_error err;
    if (dp_h5io_ckpt_read_info(ckpt, &info, &err) != DP_OK) return;
    note_coarsen("place", "this placement", ckpt, &info, coarsen, rule); /* (as it always said, simulate too) */
    if (!coarsen) note_machine(cmd, ckpt, &info, g, c, e);
    dp_h5io_ckpt_info_free(&info);
}

const char *dp_cli_machine_args(const dp_machine *m, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    json_t *o = dp_machine_to_json(m);
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        if (strcmp(key, "devices") == 0 && (m->topology || !m->devices_given)) continue;
        const dp_schema_key *k = dp_schema_find(dp_machine_keys(), key);
        if (!k || len >= cap) continue;
        char opt[64], val[512];
        dp_schema_option_text(k, opt, sizeof opt);
        dp_schema_value_text(k, m, val, sizeof val);
        if (json_is_boolean(v)) snprintf(val, sizeof val, "%s", json_is_true(v) ? "on" : "off");
        char q[1100];
        len += (size_t)snprintf(buf + len, cap - len, " --%s %s", opt, dp_file_shell_word(val, q, sizeof q));
    }
    json_decref(o);
    if (len >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4);
    return buf;
}

int dp_cli_option_error(const char *cmd, const char *optstring, const struct option *longopts, char *const *argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "?";
    int missing = 0;
    if (optopt != 0) {
        if (strncmp(arg, "--", 2) == 0) missing = 1;   /* glibc: optopt 0 for an unknown long option */
        else {
            const char *o = strchr(optstring, optopt);
            missing = o && o[1] == ':';
        }
    }
    if (missing) return dp_cli_usage_error(cmd, "option '%s' needs a value", arg);
    if (strncmp(arg, "--", 2) == 0 && arg[2] && arg[2] != '=' && longopts) {
        /* a prefix of several options (getopt_long says '?' for it as for an unknown one; it was
         * called unknown: a review) */
        const char *name = arg + 2, *eq = strchr(name, '=');
        const size_t len = eq ? (size_t)(eq - name) : strlen(name);
        char names[512];
        size_t at = 0;
        int n = 0;
        for (const struct option *o = longopts; o->name; o++)
            if (strncmp(o->name, name, len) == 0 && strlen(o->name) > len) {
                if (at < sizeof names)
                    at += (size_t)snprintf(names + at, sizeof names - at, "%s--%s", n ? ", " : "", o->name);
                n++;
            }
        if (n > 1) return dp_cli_usage_error(cmd, "ambiguous option '%.*s' (%s)", (int)(len + 2), arg, names);
    }
    return dp_cli_usage_error(cmd, "unknown option '%s'", arg);
}

int dp_cli_parse_int(const char *s, long lo, long hi, int *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

int dp_cli_parse_double(const char *s, double *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int dp_cli_parse_u64(const char *s, unsigned long long *out)
{
    if (!s || !*s || *s == '-') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

const char *dp_cli_fmt(double x, char *buf, size_t cap)
{
    for (int p = 6; p <= 10; p++) {
        snprintf(buf, cap, "%.*g", p, x);
        if (strtod(buf, NULL) == x) break;
    }
    return buf;
}

int dp_cli_read_assignment(const char *path, const char *graph_name, int n_ops, int n_devices, int *out,
                           double *priority, int *has_priority, dp_error *err)
{
    if (has_priority) *has_priority = 0;
    size_t size;
    /* the text reader, as every other: a NUL byte refused (what followed one was ignored: "0,1,1\n
     * <NUL>9,9,9,9" was the assignment 0,1,1), a UTF-8 byte order mark dropped (a JSON one was
     * refused) */
    char *text = dp_file_read_text(path, &size, err);
    if (!text) return err ? err->code : DP_EIO;
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    int rc = DP_OK;
    if (*p == '{' || *p == '[') {
        /* {"devices": [...], "graph": ...} (place --out), or the bare array of device ids (it said
         * "entry 0: not a device id" until 2026-12-06) */
        json_error_t je;
        json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
        if (!root) { rc = dp_error_set(err, DP_EINVAL, "%s:%d:%d: %s", path, je.line, je.column, je.text); goto done; }
        json_t *a = json_is_array(root) ? root : json_object_get(root, "devices");
        const char *field = json_is_array(root) ? "the array" : "\"devices\"";
        if (!json_is_array(a)) { rc = dp_error_set(err, DP_EINVAL, "%s: field \"devices\" must be an array of device ids", path); json_decref(root); goto done; }
        if ((int)json_array_size(a) != n_ops) {
            rc = dp_error_set(err, DP_EINVAL, "%s: %s has %zu entries, the graph has %d ops", path, field, json_array_size(a), n_ops);
            json_decref(root); goto done;
        }
        for (int i = 0; i < n_ops; i++) {
            json_t *x = json_array_get(a, i);
            if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= n_devices) {
                rc = dp_error_set(err, DP_EINVAL, "%s: devices[%d]: must be a device id in 0..%d", path, i, n_devices - 1);
                json_decref(root); goto done;
            }
            out[i] = (int)json_integer_value(x);
        }
        /* the priorities its makespan was simulated with (a priority queue's: place --out writes
         * them, so that simulate gives place's makespan back) */
        json_t *pr = json_is_object(root) ? json_object_get(root, "priority") : NULL;
        if (pr && priority) {
            if (!json_is_array(pr) || (int)json_array_size(pr) != n_ops) {
                rc = dp_error_set(err, DP_EINVAL, "%s: field \"priority\" must be an array of %d numbers (one per op)", path, n_ops);
                json_decref(root); goto done;
            }
            for (int i = 0; i < n_ops; i++) {
                json_t *x = json_array_get(pr, i);
                if (!json_is_number(x) || !isfinite(json_number_value(x))) {
                    rc = dp_error_set(err, DP_EINVAL, "%s: priority[%d]: must be a finite number", path, i);
                    json_decref(root); goto done;
                }
                priority[i] = json_number_value(x);
            }
            if (has_priority) *has_priority = 1;
        }
        /* an assignment written for another graph of the same op count matches ops by index
         * only: say so (it was simulated without a word) */
        json_t *gname = json_object_get(root, "graph");
        if (graph_name && json_is_string(gname) && strcmp(json_string_value(gname), graph_name) != 0)
            fprintf(stderr, "doppler: warning: %s is an assignment of graph \"%s\", used for \"%s\" (ops matched by index)\n",
                    path, json_string_value(gname), graph_name);
        json_decref(root);
    } else {
        int k = 0;
        const char *q = p;
        while (*q) {
            while (*q == ' ' || *q == '\t' || *q == ',' || *q == '\n' || *q == '\r') q++;
            if (!*q) break;
            char *end;
            errno = 0;
            long v = strtol(q, &end, 10);
            if (end == q || errno) { rc = dp_error_set(err, DP_EINVAL, "%s: entry %d: not a device id", path, k); goto done; }
            if (k >= n_ops) { rc = dp_error_set(err, DP_EINVAL, "%s: more than %d device ids (the graph's op count)", path, n_ops); goto done; }
            if (v < 0 || v >= n_devices) { rc = dp_error_set(err, DP_EINVAL, "%s: entry %d: device %ld outside 0..%d", path, k, v, n_devices - 1); goto done; }
            out[k++] = (int)v;
            q = end;
            if (*q && *q != ',' && *q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') {
                rc = dp_error_set(err, DP_EINVAL, "%s: entry %d: unexpected '%c'", path, k - 1, *q);
                goto done;
            }
        }
        if (k != n_ops) rc = dp_error_set(err, DP_EINVAL, "%s: %d device ids, the graph has %d ops", path, k, n_ops);
    }
done:
    free(text);
    return rc;
}

int dp_cli_write_assignment(const char *path, const dp_graph *g, const char *method, int n_devices,
                            const int *assignment, const double *priority, double makespan_printed, dp_error *err)
{
    json_t *root = json_object();
    json_object_set_new(root, "graph", json_string(g->name));
    json_object_set_new(root, "method", json_string(method));
    json_object_set_new(root, "n_devices", json_integer(n_devices));
    json_object_set_new(root, "makespan", dp_json_number(makespan_printed));
    json_object_set_new(root, "units", json_string(g->time_unit));
    json_t *a = json_array();
    for (int i = 0; i < g->n_ops; i++) json_array_append_new(a, json_integer(assignment[i]));
    json_object_set_new(root, "devices", a);
    if (priority) {
        json_t *pr = json_array();
        for (int i = 0; i < g->n_ops; i++) json_array_append_new(pr, dp_json_number(priority[i]));
        json_object_set_new(root, "priority", pr);
    }
    int rc = dp_json_dump_atomic(root, path, JSON_COMPACT, err);
    json_decref(root);
    return rc;
}

const char *dp_cli_data_path(const char *rel)
{
    static char buf[PATH_MAX];
    const char *p = dp_machine_data_file(rel, buf, sizeof buf);
    return p ? p : rel;
}

int dp_cli_machine_option(dp_machine *m, int opt, const char *arg, const char *cmd)
{
    int k = opt - DP_OPT_MACHINE, n = 0;
    while (dp_machine_keys()[n].key) n++;
    if (k < 0 || k >= n) return 0;
    dp_error err;
    dp_error_clear(&err);
    char key[64], option[60];
    snprintf(key, sizeof key, "--%s", dp_schema_option_text(&dp_machine_keys()[k], option, sizeof option));
    if (dp_machine_set(m, key, arg, &err) != DP_OK) {
        dp_cli_usage_error(cmd, "%s", err.msg);
        return -1;
    }
    return 1;
}

void dp_cli_warn_machine(const dp_machine *m, const dp_graph *g)
{
    int want = dp_machine_devices_differ(m, g);
    if (want)
        fprintf(stderr, "doppler: warning: graph %s was made for %d devices; placing it on %d (%s)\n", g->name, want,
                m->topo ? m->topo->n_devices : m->n_devices,
                m->topo ? "the topology's" : m->devices_given ? "--devices" : "train --devices-range's draw");
    char fixed[4096], *lines = fixed;
    const size_t len = dp_machine_warnings(m, g, fixed, sizeof fixed);
    if (len >= sizeof fixed && (lines = malloc(len + 1)) != NULL) dp_machine_warnings(m, g, lines, len + 1);
    if (!lines) lines = fixed; /* out of memory: the first 4 kB */
    for (const char *l = lines; *l;) {
        const char *eol = strchr(l, '\n');
        int n = eol ? (int)(eol - l) : (int)strlen(l);
        fprintf(stderr, "doppler: warning: %.*s\n", n, l);
        l += n + (eol != NULL);
    }
    if (lines != fixed) free(lines);
}

const char *dp_cli_volume_unit(const dp_graph *g, const dp_machine *m, const char *time_units)
{
    if (g->cost_kind != DP_GRAPH_COST_PHYSICAL) return time_units;
    return !m->topo && m->comm_ratio > 0 ? "s of transfer" : "bytes";
}

const char *dp_cli_topology_path(const char *name)
{
    static char buf[PATH_MAX];
    return name ? dp_machine_topology_path(name, buf, sizeof buf) : NULL;
}

int dp_cli_machine_done(dp_machine *m, int status)
{
    dp_machine_free(m);
    return status;
}

/* dp_calib.c: the calibration (see dp_calib.h): its file (the reader and
 * the writer side by side, one schema) and its lookups. */
#include "dp_calib.h"
#include "dp_alloc.h"
#include "dp_file.h"
#include "dp_json.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the type ---- */

void dp_calib_free(dp_calib *c)
{
    if (!c) return;
    for (int d = 0; d < c->n_devices && c->dev; d++) {
        dp_calib_device *dv = &c->dev[d];
        free(dv->name);
        for (int k = 0; k < dv->n_ops; k++) free(dv->op_kind[k]);
        free(dv->op_kind);
        free(dv->op);
        free(dv->op_info);
        for (int k = 0; k < dv->n_measured; k++) free(dv->measured[k].kind);
        free(dv->measured);
    }
    for (int r = 0; r < c->n_routes && c->route; r++) { free(c->route[r].src); free(c->route[r].dst); }
    free(c->dev); free(c->route); free(c->machine); free(c->path);
    free(c);
}

dp_calib *dp_calib_alloc(const char *machine, int n_devices, int n_routes)
{
    dp_calib *c = dp_alloc_calloc(1, sizeof *c);
    if (!c) return NULL;
    c->machine = dp_alloc_strdup(machine ? machine : "");
    c->n_devices = n_devices;
    c->dev = dp_alloc_calloc((size_t)(n_devices > 0 ? n_devices : 1), sizeof *c->dev);
    c->n_routes = n_routes;
    c->route = dp_alloc_calloc((size_t)(n_routes > 0 ? n_routes : 1), sizeof *c->route);
    if (!c->machine || !c->dev || !c->route) { dp_calib_free(c); return NULL; }
    return c;
}

static int measured_cmp(const void *pa, const void *pb)
{
    const dp_calib_measured *a = pa, *b = pb;
    int k = strcmp(a->kind, b->kind);
    if (k) return k;
    if (a->flops != b->flops) return a->flops < b->flops ? -1 : 1;
    if (a->bytes != b->bytes) return a->bytes < b->bytes ? -1 : 1;
    return 0;
}

void dp_calib_sort_measured(dp_calib_device *dv)
{
    qsort(dv->measured, (size_t)dv->n_measured, sizeof *dv->measured, measured_cmp);
}

/* ---- failed fits ---- */

static int fit_stats_failed(const dp_calib_fit_info *in, char *why, size_t size)
{
    if (isnan(in->r2)) {
        if (why) snprintf(why, size, "R^2 is NaN (%d samples)", in->n);
        return 1;
    }
    if (in->r2 < DP_CALIB_MIN_R2) {
        if (why) snprintf(why, size, "R^2 %.4g below %g (%d samples)", in->r2, DP_CALIB_MIN_R2, in->n);
        return 1;
    }
    return 0;
}

int dp_calib_op_fit_failed(const dp_calib_affine *co, const dp_calib_fit_info *in, char *why, size_t size)
{
    if (!in || in->n == 0) return 0;
    const double c[3] = {co->a_s, co->b_s_per_flop, co->c_s_per_byte}, per[3] = {1, DP_CALIB_MAX_COUNT, DP_CALIB_MAX_COUNT};
    static const char *name[3] = {"a_s", "b_s_per_flop", "c_s_per_byte"};
    for (int k = 0; k < 3; k++)
        if (!(c[k] >= 0) || !(c[k] * per[k] <= DP_COST_TIME_MAX)) {
            if (why) snprintf(why, size, "%s %g out of range [0, %g]", name[k], c[k], DP_COST_TIME_MAX / per[k]);
            return 1;
        }
    return fit_stats_failed(in, why, size);
}

int dp_calib_route_fit_failed(const dp_calib_route *rt, char *why, size_t size)
{
    if (rt->info.n == 0) return 0;
    if (!(rt->latency_s >= 0) || !(rt->latency_s <= DP_COST_TIME_MAX)) {
        if (why) snprintf(why, size, "latency_s %g out of range [0, %g]", rt->latency_s, DP_COST_TIME_MAX);
        return 1;
    }
    if (!(rt->bandwidth_Bps < DP_CALIB_BANDWIDTH_CAP)) {
        if (why)
            snprintf(why, size, "bandwidth_Bps at its cap %g (the copy times do not grow with size: unmeasured)",
                     DP_CALIB_BANDWIDTH_CAP);
        return 1;
    }
    if (!(rt->bandwidth_Bps >= DP_CALIB_MAX_COUNT / DP_COST_TIME_MAX)) {
        if (why) snprintf(why, size, "bandwidth_Bps %g out of range", rt->bandwidth_Bps);
        return 1;
    }
    return fit_stats_failed(&rt->info, why, size);
}

int dp_calib_interference_fit_failed(const dp_calib *c, int d, char *why, size_t size)
{
    int any = 0;
    for (int e = 0; e < c->n_devices; e++) any |= c->dev[e].n_copy_in > 0 || c->dev[e].n_peer_busy > 0;
    const dp_calib_device *dv = &c->dev[d];
    if (!any || (dv->n_copy_in > 0 && dv->n_peer_busy > 0)) return 0;
    /* written as 0, which the simulator reads as measured: copies into the device, or busy peers,
     * that cost it nothing (copy_in is about 1.1 on the development host; a profile with small
     * --max-gemm gave no copy_in sample and the fit wrote 0 without a word: a review) */
    if (why)
        snprintf(why, size, "%s%s%s not measured (no sample; it would be written as 0, no slowdown)",
                 dv->n_copy_in ? "" : "copy_in", dv->n_copy_in || dv->n_peer_busy ? "" : " and ",
                 dv->n_peer_busy ? "" : "peer_busy");
    return 1;
}

/* ---- the file: the reader ---- */

static int coef(json_t *o, const char *key, double *out, const char *origin, const char *where, dp_error *err)
{
    json_t *x = json_object_get(o, key);
    if (!json_is_number(x) || !isfinite(json_number_value(x)))
        return dp_error_set(err, DP_EINVAL, "%s: %s.%s: must be a finite number", origin, where, key);
    *out = json_number_value(x);
    return DP_OK;
}

/* a coefficient that is >= 0 and, applied to per units (1 for a time, DP_CALIB_MAX_COUNT for a
 * rate per FLOP or byte), gives at most DP_COST_TIME_MAX seconds */
static int coef_range(json_t *o, const char *key, double per, double *out, const char *origin, const char *where,
                      dp_error *err)
{
    int rc = coef(o, key, out, origin, where, err);
    if (rc != DP_OK) return rc;
    if (!(*out >= 0) || !(*out * per <= DP_COST_TIME_MAX))
        return dp_error_set(err, DP_EINVAL, "%s: %s.%s: must lie in [0, %g]%s, got %g", origin, where, key,
                            DP_COST_TIME_MAX / per, per > 1 ? " (a time of at most 1e300 s for 2^64 FLOPs or bytes)" : "",
                            *out);
    return DP_OK;
}

static int affine(json_t *o, dp_calib_affine *a, const char *origin, const char *where, dp_error *err)
{
    if (!json_is_object(o)) return dp_error_set(err, DP_EINVAL, "%s: %s: must be an object {a_s, b_s_per_flop, c_s_per_byte}", origin, where);
    static const char *const keys[] = {"a_s", "b_s_per_flop", "c_s_per_byte", NULL};
    int rc = dp_json_known_keys(o, keys, origin, where, err);
    if (rc != DP_OK) return rc;
    if ((rc = coef_range(o, "a_s", 1, &a->a_s, origin, where, err)) != DP_OK) return rc;
    if ((rc = coef_range(o, "b_s_per_flop", DP_CALIB_MAX_COUNT, &a->b_s_per_flop, origin, where, err)) != DP_OK) return rc;
    return coef_range(o, "c_s_per_byte", DP_CALIB_MAX_COUNT, &a->c_s_per_byte, origin, where, err);
}

dp_calib *dp_calib_parse(const char *text, const char *origin, dp_error *err)
{
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        dp_error_set(err, DP_EINVAL, "%s:%d:%d: %s", origin, je.line, je.column, je.text);
        return NULL;
    }
    dp_calib *c = dp_alloc_calloc(1, sizeof *c);
    char where[512];
    if (!c) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
    c->path = dp_alloc_strdup(origin);
    json_t *fmt = json_object_get(root, "format");
    if (!json_is_object(root) || !json_is_string(fmt) || strcmp(json_string_value(fmt), "doppler-calibration") != 0) {
        dp_error_set(err, DP_EINVAL, "%s: format: expected \"doppler-calibration\"", origin);
        goto fail;
    }
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
        dp_error_set(err, DP_EINVAL, "%s: version: only version 1 is known", origin);
        goto fail;
    }
    /* every key known, at every level: a misspelt one ("rotues", "interferance", "a_sec") was
     * ignored and its default used, which changed makespans without a word (a review; the
     * topology reader refuses them too) */
    static const char *const root_keys[] = {"format", "version", "machine", "devices", "routes", NULL};
    static const char *const device_keys[] = {"ops", "default", "measured", "interference", NULL};
    static const char *const measured_keys[] = {"kind", "flops", "bytes", "seconds", NULL};
    static const char *const interference_keys[] = {"copy_in", "peer_busy", NULL};
    static const char *const route_keys[] = {"src", "dst", "latency_s", "bandwidth_Bps", NULL};
    if (dp_json_known_keys(root, root_keys, origin, "calibration", err) != DP_OK) goto fail;
    json_t *m = json_object_get(root, "machine");
    c->machine = dp_alloc_strdup(json_is_string(m) ? json_string_value(m) : "");
    json_t *devs = json_object_get(root, "devices");
    if (devs && !json_is_object(devs)) { dp_error_set(err, DP_EINVAL, "%s: devices: must be an object keyed by device name", origin); goto fail; }
    c->dev = dp_alloc_calloc(json_object_size(devs) + 1, sizeof *c->dev);
    if (!c->dev || !c->path || !c->machine) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
    const char *dname;
    json_t *dobj;
    json_object_foreach(devs, dname, dobj) {
        dp_calib_device *dv = &c->dev[c->n_devices++];
        dv->name = dp_alloc_strdup(dname);
        if (!json_is_object(dobj)) { dp_error_set(err, DP_EINVAL, "%s: devices.%s: must be an object", origin, dname); goto fail; }
        snprintf(where, sizeof where, "devices.%s", dname);
        if (dp_json_known_keys(dobj, device_keys, origin, where, err) != DP_OK) goto fail;
        json_t *ops = json_object_get(dobj, "ops"), *def = json_object_get(dobj, "default");
        if (ops && !json_is_object(ops)) { dp_error_set(err, DP_EINVAL, "%s: devices.%s.ops: must be an object keyed by op kind", origin, dname); goto fail; }
        dv->op_kind = dp_alloc_calloc(json_object_size(ops) + 1, sizeof(char *));
        dv->op = dp_alloc_calloc(json_object_size(ops) + 1, sizeof(dp_calib_affine));
        if (!dv->name || !dv->op_kind || !dv->op) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
        const char *kind;
        json_t *kobj;
        json_object_foreach(ops, kind, kobj) {
            snprintf(where, sizeof where, "devices.%s.ops.%s", dname, kind);
            dv->op_kind[dv->n_ops] = dp_alloc_strdup(kind);
            if (!dv->op_kind[dv->n_ops]) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
            if (affine(kobj, &dv->op[dv->n_ops], origin, where, err) != DP_OK) { dv->n_ops++; goto fail; }
            dv->n_ops++;
        }
        if (def) {
            snprintf(where, sizeof where, "devices.%s.default", dname);
            if (affine(def, &dv->def, origin, where, err) != DP_OK) goto fail;
            dv->has_default = 1;
        }
        json_t *meas = json_object_get(dobj, "measured");
        if (meas) {
            if (!json_is_array(meas)) {
                dp_error_set(err, DP_EINVAL, "%s: devices.%s.measured: must be an array", origin, dname);
                goto fail;
            }
            dv->measured = dp_alloc_calloc(json_array_size(meas) + 1, sizeof *dv->measured);
            if (!dv->measured) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
            size_t mi;
            json_t *mo;
            json_array_foreach(meas, mi, mo) {
                snprintf(where, sizeof where, "devices.%s.measured[%zu]", dname, mi);
                if (json_is_object(mo) && dp_json_known_keys(mo, measured_keys, origin, where, err) != DP_OK) goto fail;
                const char *mkind = NULL;
                double f = -1, by = -1, sec = -1;
                if (json_unpack(mo, "{s:s,s:F,s:F,s:F}", "kind", &mkind, "flops", &f, "bytes", &by, "seconds", &sec) != 0 ||
                    !(f >= 0 && by >= 0 && sec >= 0 && isfinite(f + by + sec))) {
                    dp_error_set(err, DP_EINVAL, "%s: devices.%s.measured[%zu]: needs kind and finite flops, bytes, seconds >= 0",
                                 origin, dname, mi);
                    goto fail;
                }
                dp_calib_measured *me = &dv->measured[dv->n_measured];
                if (!(me->kind = dp_alloc_strdup(mkind))) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
                me->flops = f;
                me->bytes = by;
                me->seconds = sec;
                dv->n_measured++;
            }
            dp_calib_sort_measured(dv);
            /* one op given twice: the lookup took either entry (qsort is not stable), so the op's
             * time was one of two numbers, which one unsaid (a review; calibrate fit writes each
             * op once, its median, and a route given twice is refused too) */
            for (int k = 1; k < dv->n_measured; k++)
                if (measured_cmp(&dv->measured[k - 1], &dv->measured[k]) == 0) {
                    const dp_calib_measured *a = &dv->measured[k - 1], *b = &dv->measured[k];
                    dp_error_set(err, DP_EINVAL, "%s: devices.%s.measured: the op (kind %s, flops %.17g, bytes %.17g) is "
                                 "given twice (%.10g and %.10g s): give each op once", origin, dname, a->kind, a->flops,
                                 a->bytes, a->seconds, b->seconds);
                    goto fail;
                }
        }
        json_t *itf = json_object_get(dobj, "interference");
        if (itf) {
            snprintf(where, sizeof where, "devices.%s.interference", dname);
            if (!json_is_object(itf)) {
                dp_error_set(err, DP_EINVAL, "%s: %s: must be an object {copy_in, peer_busy}", origin, where);
                goto fail;
            }
            if (dp_json_known_keys(itf, interference_keys, origin, where, err) != DP_OK) goto fail;
            dv->has_interference = 1;
            if (coef(itf, "copy_in", &dv->copy_in, origin, where, err) != DP_OK ||
                coef(itf, "peer_busy", &dv->peer_busy, origin, where, err) != DP_OK)
                goto fail;
            if (!(dv->copy_in >= 0 && dv->copy_in <= 100 && dv->peer_busy >= 0 && dv->peer_busy <= 100)) {
                dp_error_set(err, DP_EINVAL, "%s: %s: copy_in and peer_busy must lie in [0, 100], got %g and %g", origin,
                             where, dv->copy_in, dv->peer_busy);
                goto fail;
            }
        }
    }
    json_t *routes = json_object_get(root, "routes");
    if (routes && !json_is_array(routes)) { dp_error_set(err, DP_EINVAL, "%s: routes: must be an array", origin); goto fail; }
    c->route = dp_alloc_calloc(json_array_size(routes) + 1, sizeof *c->route);
    if (!c->route) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
    for (size_t i = 0; i < json_array_size(routes); i++) {
        json_t *o = json_array_get(routes, i);
        dp_calib_route *r = &c->route[c->n_routes++];
        snprintf(where, sizeof where, "routes[%zu]", i);
        if (!json_is_object(o)) { dp_error_set(err, DP_EINVAL, "%s: %s: must be an object {src, dst, latency_s, bandwidth_Bps}", origin, where); goto fail; }
        if (dp_json_known_keys(o, route_keys, origin, where, err) != DP_OK) goto fail;
        json_t *s = json_object_get(o, "src"), *d = json_object_get(o, "dst");
        if (!json_is_string(s) || !json_is_string(d)) { dp_error_set(err, DP_EINVAL, "%s: %s: src and dst must be device names", origin, where); goto fail; }
        /* a route from a device to itself, or a pair given twice, was accepted: the first entry
         * of a pair was used and the other silently ignored (a review of the eighteenth session) */
        if (strcmp(json_string_value(s), json_string_value(d)) == 0) {
            dp_error_set(err, DP_EINVAL, "%s: %s: src and dst are the same device \"%s\"", origin, where, json_string_value(s));
            goto fail;
        }
        for (int q = 0; q + 1 < c->n_routes; q++)
            if (strcmp(c->route[q].src, json_string_value(s)) == 0 && strcmp(c->route[q].dst, json_string_value(d)) == 0) {
                dp_error_set(err, DP_EINVAL, "%s: %s: the route %s -> %s is given twice (also routes[%d])", origin, where,
                             json_string_value(s), json_string_value(d), q);
                goto fail;
            }
        r->src = dp_alloc_strdup(json_string_value(s));
        r->dst = dp_alloc_strdup(json_string_value(d));
        if (!r->src || !r->dst) { dp_error_set(err, DP_ENOMEM, "%s: out of memory", origin); goto fail; }
        if (coef_range(o, "latency_s", 1, &r->latency_s, origin, where, err) != DP_OK) goto fail;
        if (coef(o, "bandwidth_Bps", &r->bandwidth_Bps, origin, where, err) != DP_OK) goto fail;
        if (!(r->bandwidth_Bps >= DP_CALIB_MAX_COUNT / DP_COST_TIME_MAX)) {
            dp_error_set(err, DP_EINVAL, "%s: %s.bandwidth_Bps: must be at least %g (2^64 bytes in at most 1e300 s), got %g",
                         origin, where, DP_CALIB_MAX_COUNT / DP_COST_TIME_MAX, r->bandwidth_Bps);
            goto fail;
        }
    }
    json_decref(root);
    return c;
fail:
    json_decref(root);
    dp_calib_free(c);
    return NULL;
}

dp_calib *dp_calib_load(const char *path, dp_error *err)
{
    size_t size;
    char *text = dp_json_read_text(path, &size, err);
    if (!text) return NULL;
    dp_calib *c = dp_calib_parse(text, path, err);
    free(text);
    return c;
}

/* ---- the file: the writer ---- */

static json_t *coef_json(const dp_calib_affine *c)
{
    return json_pack("{s:f,s:f,s:f}", "a_s", c->a_s, "b_s_per_flop", c->b_s_per_flop, "c_s_per_byte", c->c_s_per_byte);
}

int dp_calib_save(const dp_calib *c, const char *path, dp_error *err)
{
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string("doppler-calibration"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "machine", json_string(c->machine));
    json_t *devs = json_object();
    for (int d = 0; d < c->n_devices; d++) {
        const dp_calib_device *dv = &c->dev[d];
        json_t *ops = json_object();
        for (int k = 0; k < dv->n_ops; k++) json_object_set_new(ops, dv->op_kind[k], coef_json(&dv->op[k]));
        json_t *o = json_object();
        json_object_set_new(o, "ops", ops);
        json_object_set_new(o, "default", coef_json(&dv->def));
        if (dv->n_measured > 0) {
            json_t *ms = json_array();
            for (int k = 0; k < dv->n_measured; k++)
                json_array_append_new(ms, json_pack("{s:s,s:f,s:f,s:f}", "kind", dv->measured[k].kind, "flops", dv->measured[k].flops,
                                                    "bytes", dv->measured[k].bytes, "seconds", dv->measured[k].seconds));
            json_object_set_new(o, "measured", ms);
        }
        if (dv->has_interference)
            json_object_set_new(o, "interference", json_pack("{s:f,s:f}", "copy_in", dv->copy_in, "peer_busy", dv->peer_busy));
        json_object_set_new(devs, dv->name, o);
    }
    json_object_set_new(root, "devices", devs);
    json_t *routes = json_array();
    for (int r = 0; r < c->n_routes; r++) {
        const dp_calib_route *rt = &c->route[r];
        json_array_append_new(routes, json_pack("{s:s,s:s,s:f,s:f}", "src", rt->src, "dst", rt->dst, "latency_s",
                                                rt->latency_s, "bandwidth_Bps", rt->bandwidth_Bps));
    }
    json_object_set_new(root, "routes", routes);
    int rc = dp_json_dump_atomic(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10), err);
    json_decref(root);
    return rc;
}

/* ---- lookups ---- */

const dp_calib_device *dp_calib_find_device(const dp_calib *c, const char *device)
{
    if (!c) return NULL;
    for (int d = 0; d < c->n_devices; d++)
        if (strcmp(c->dev[d].name, device) == 0) return &c->dev[d];
    return NULL;
}

const dp_calib_affine *dp_calib_find(const dp_calib *c, const char *device, const char *kind)
{
    if (!c) return NULL;
    const dp_calib_device *dv = dp_calib_find_device(c, device);
    if (!dv) return NULL;
    for (int k = 0; k < dv->n_ops; k++)
        if (strcmp(dv->op_kind[k], kind) == 0) return &dv->op[k];
    return dv->has_default ? &dv->def : NULL;
}

static int near_rel(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

double dp_calib_find_measured(const dp_calib *c, const char *device, const char *kind, double flops, double bytes)
{
    if (!c) return -1;
    const dp_calib_device *dv = dp_calib_find_device(c, device);
    if (!dv || dv->n_measured == 0) return -1;
    /* first entry not below (kind, flops (1 - 1e-9)) */
    int lo = 0, hi = dv->n_measured;
    const double fl = flops - 1e-9 * fabs(flops);
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        const dp_calib_measured *m = &dv->measured[mid];
        int k = strcmp(m->kind, kind);
        if (k < 0 || (k == 0 && m->flops < fl)) lo = mid + 1;
        else hi = mid;
    }
    for (int i = lo; i < dv->n_measured; i++) {
        const dp_calib_measured *m = &dv->measured[i];
        if (strcmp(m->kind, kind) != 0 || !(m->flops <= flops + 1e-9 * fabs(flops))) break;
        if (near_rel(m->flops, flops) && near_rel(m->bytes, bytes)) return m->seconds;
    }
    return -1;
}

const dp_calib_route *dp_calib_find_route(const dp_calib *c, const char *src, const char *dst)
{
    if (!c) return NULL;
    for (int r = 0; r < c->n_routes; r++)
        if (strcmp(c->route[r].src, src) == 0 && strcmp(c->route[r].dst, dst) == 0) return &c->route[r];
    return NULL;
}

double dp_calib_op_time(const dp_calib *c, int d, const char *kind, double flops, double bytes)
{
    const dp_calib_device *dv = &c->dev[d];
    double s = dp_calib_find_measured(c, dv->name, kind, flops, bytes);
    if (s >= 0) return s;
    const dp_calib_affine *co = dp_calib_find(c, dv->name, kind);
    return co ? co->a_s + co->b_s_per_flop * flops + co->c_s_per_byte * bytes : 0;
}

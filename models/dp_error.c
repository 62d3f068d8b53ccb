#include "dp_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dp_error_clear(dp_error *err)
{
    if (!err) return;
    err->code = DP_OK;
    err->msg[0] = '\0';
}

int dp_error_set(dp_error *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

void dp_error_prefix(dp_error *err, const char *fmt, ...)
{
    if (!err) return;
    char pre[DP_ERROR_MSG_MAX];
    char old[DP_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t lp = strlen(pre);
    if (lp > sizeof err->msg - 3) lp = sizeof err->msg - 3;
    memcpy(err->msg, pre, lp);
    err->msg[lp] = ':';
    err->msg[lp + 1] = ' ';
    size_t room = sizeof err->msg - lp - 3;
    size_t lo = strlen(old);
    if (lo > room) lo = room;
    memcpy(err->msg + lp + 2, old, lo);
    err->msg[lp + 2 + lo] = '\0';
}

const char *dp_error_visible(const char *s, char *buf, size_t cap)
{
    if (!buf || cap == 0) return "";
    if (!s) s = "(null)";
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char e[16];
        int c = *p;
        if (c == '\\') snprintf(e, sizeof e, "\\\\");
        else if (c == '\n') snprintf(e, sizeof e, "\\n");
        else if (c == '\r') snprintf(e, sizeof e, "\\r");
        else if (c == '\t') snprintf(e, sizeof e, "\\t");
        else if (c < 0x20 || c == 0x7f) snprintf(e, sizeof e, "\\x%02x", (unsigned)c);
        else if (c == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) { snprintf(e, sizeof e, "\\xc2\\x%02x", (unsigned)p[1]); p++; }
        else { e[0] = (char)c; e[1] = '\0'; }
        size_t m = strlen(e);
        if (k + m >= cap) { /* does not fit: end with "..." where it does */
            if (cap >= 4) { if (k > cap - 4) k = cap - 4; memcpy(buf + k, "...", 3); k += 3; }
            break;
        }
        memcpy(buf + k, e, m);
        k += m;
    }
    buf[k] = '\0';
    return buf;
}

const char *dp_error_string(int code)
{
    switch (code) {
    case DP_OK: return "success";
    case DP_EINVAL: return "invalid input";
    case DP_EIO: return "input/output error";
    case DP_ENOMEM: return "out of memory";
    case DP_ECYCLE: return "cycle in graph";
    case DP_ERANGE: return "resource limit exceeded";
    case DP_EUNSUPPORTED: return "unsupported";
    default: return "unknown error";
    }
}

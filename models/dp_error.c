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

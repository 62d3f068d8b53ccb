/* report_impl.h: what report.c and report_plot.c share (private to them). */
#ifndef DP_REPORT_IMPL_H
#define DP_REPORT_IMPL_H

#include <stddef.h>

#include "report.h"

/* A malloc'd copy of s ("" for NULL); NULL when out of memory. */
char *dp_report_strdup(const char *s);
/* Free n strings of l and l. */
void dp_report_list_free(char **l, int n);
/* The index of s among labels[0..n-1], or -1. */
int dp_report_list_find(char **labels, int n, const char *s);
/* x with `digits` significant digits ("%.*g"), "-" for NAN. */
void dp_report_fmt_g(double x, int digits, char *buf, size_t cap);
/* a / b, NaN (printed "-") where it is undefined: b 0 (a best baseline whose mean is 0, as a
 * memory_excess can be: it printed "inf (+inf%)", and 0 / 0 "-") or either NaN */
double dp_report_ratio(double a, double b);
/* 1 when the table has baseline columns (and so ratio columns). */
int dp_report_has_ratios(const dp_report_table *t);

#endif

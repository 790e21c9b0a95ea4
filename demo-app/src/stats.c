/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats.h"

int stats_collect(const json_t *array, const char *key, struct stats_list *out)
{
	size_t i, cap = json_array_size(array);
	json_t *o;

	out->n = 0;
	out->v = cap ? calloc(cap, sizeof(double)) : NULL;
	if (cap && !out->v)
		return -ENOMEM;
	json_array_foreach (array, i, o) {
		json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

		if (json_is_number(v))
			out->v[out->n++] = json_number_value(v);
	}
	return 0;
}

void stats_free(struct stats_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double stats_median(struct stats_list *l)
{
	if (l->n == 0)
		return NAN;
	qsort(l->v, l->n, sizeof(double), cmp_double);
	if (l->n % 2)
		return l->v[l->n / 2];
	return (l->v[l->n / 2 - 1] + l->v[l->n / 2]) / 2;
}

double stats_max(const struct stats_list *l)
{
	double m = NAN;

	for (size_t i = 0; i < l->n; i++)
		if (isnan(m) || l->v[i] > m)
			m = l->v[i];
	return m;
}

double stats_min(const struct stats_list *l)
{
	double m = NAN;

	for (size_t i = 0; i < l->n; i++)
		if (isnan(m) || l->v[i] < m)
			m = l->v[i];
	return m;
}

double stats_sum(const struct stats_list *l)
{
	double s = 0;

	if (l->n == 0)
		return NAN;
	for (size_t i = 0; i < l->n; i++)
		s += l->v[i];
	return s;
}

double round1(double v)
{
	return round(v * 10) / 10;
}

double round0(double v)
{
	return round(v);
}

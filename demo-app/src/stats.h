/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Medians, maxima and sums of one member over the workers' JSON lines, as
 * jq computes them (the host's tables compare runs made either way):
 * members that are not numbers are left out, and a list with no numbers
 * gives NAN (null in the record).
 */

#include <jansson.h>
#include <stddef.h>

struct stats_list {
	double *v;
	size_t n;
};

/* The numbers of member key of each object in the array. 0 or -ENOMEM. */
int stats_collect(const json_t *array, const char *key, struct stats_list *out);
void stats_free(struct stats_list *l);

/* The middle value, or the mean of the two middle ones. Sorts the list. */
double stats_median(struct stats_list *l);
double stats_max(const struct stats_list *l);
double stats_min(const struct stats_list *l);
double stats_sum(const struct stats_list *l);

/* Rounded to one decimal, and to a whole number (jq's round: half away from 0). */
double round1(double v);
double round0(double v);

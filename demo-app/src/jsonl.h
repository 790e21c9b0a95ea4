/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * JSON for the benchmark driver's records (demo-measure): numbers as jq
 * writes them, lines of JSON from files, and the NAME=VALUE arguments the
 * driver passes to fill a record in.
 */

#include <jansson.h>
#include <stdio.h>

#include "mshare-common/macro.h"

static inline void json_decref_p(json_t **j)
{
	json_decref(*j);
}
#define _cleanup_json_ _cleanup_(json_decref_p)

/* How every record is written: one line, reals with no noise digits. */
#define JSONL_DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))

/*
 * A number as jq writes it: an integer when it is whole (jq has no other
 * kind, and the host's tables compare 4095 with 4095), a real otherwise,
 * null for NAN (what stats.h returns for "no values").
 */
json_t *json_num(double v);

/* The value of a member as a double: NAN unless it is a number. */
double json_member_num(const json_t *o, const char *key);

/*
 * Appends to the array every line of the file that parses as a JSON object
 * whose "event" is event (any object if event is NULL). Lines that do not
 * parse (a worker that died halfway through its line) are skipped. A file
 * that does not exist adds nothing. 0 or -errno.
 */
int jsonl_read(const char *path, const char *event, json_t *array);

/* jsonl_read() for every file matching a glob(3) pattern. 0 or -errno. */
int jsonl_read_glob(const char *pattern, const char *event, json_t *array);

/*
 * One argument of the driver into an object: NAME=STRING sets a string,
 * NAME:=JSON any JSON value (an empty one is null). A dotted NAME
 * (launch_by_backing.mshare=processes) sets a member of a member, made as
 * needed. 0, or -EINVAL for an argument that is neither.
 */
int json_set_arg(json_t *o, const char *arg);

/* "PREFIX JSON\n" on f: a record for the host. 0 or -errno. */
int jsonl_print(FILE *f, const char *prefix, const json_t *j);

/*
 * A number as jq's tostring writes it (integers without a point, reals as
 * short as they go), "?" for null or no number, into buf.
 */
const char *json_num_text(const json_t *v, char *buf, size_t size);

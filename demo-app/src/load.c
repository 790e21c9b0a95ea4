/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * demo-load: format the buffer pool on a backing and fill it with records
 * for keys 0 .. N-1, then mark it loaded. For shm and hugetlb it creates
 * and sizes the file; an mshare region is the daemon's, already sized and
 * mapped. Prints one JSON line: what it built, how long it took, the pages
 * it touched. See README.md.
 */
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <time.h>

#include "backing.h"
#include "mshare-common/log.h"
#include "mshare-common/procstat.h"
#include "mshare-common/size.h"
#include "pool.h"
#include "util.h"

#define EXIT_USAGE 2
#define DEFAULT_RECORD_SIZE 256

struct options {
	struct backing_spec backing;
	uint64_t size;
	uint64_t records;	/* 0: as many as fit */
	uint64_t record_size;
	uint64_t seed;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: demo-load --backing=SPEC --size=SIZE [OPTIONS]\n"
		"Format the buffer pool on SPEC and fill it with records for keys 0..N-1.\n"
		"\n"
		"  -b, --backing=SPEC     mshare[:NAME]   an mshare region of mshare-owner: $MSHARE_FD,\n"
		"                                         or NAME ($MSHARE_FD_<NAME>, else mshare_request);\n"
		"                                         SIZE must not exceed the region's object (Size=)\n"
		"                         shm:PATH        a file on a tmpfs (/dev/shm/pool), created\n"
		"                         hugetlb:PATH    a file on a hugetlbfs mount, created\n"
		"  -S, --size=SIZE        the pool's size: bytes, or with K, M, G, T (256M, 1G)\n"
		"  -n, --records=N        how many records (default: as many as fit)\n"
		"  -r, --record-size=B    bytes per record, a power of two from %u to %u (default %u)\n"
		"      --seed=N           seed of the payloads (default 1)\n"
		"  -h, --help             show this help\n"
		"\n"
		"Exit status: 0 on success, 1 on failure, 2 on a usage error.\n",
		RECORD_MIN_SIZE, RECORD_MAX_SIZE, DEFAULT_RECORD_SIZE);
}

_printf_(1, 2) static int usage_error(const char *format, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", program_invocation_short_name);
	return -EINVAL;
}

enum { OPT_SEED = 0x100 };

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "backing", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 'S' },
		{ "records", required_argument, NULL, 'n' },
		{ "record-size", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	bool have_backing = false;
	int c;

	*o = (struct options){ .record_size = DEFAULT_RECORD_SIZE, .seed = 1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:S:n:r:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (backing_parse(optarg, &o->backing) < 0)
				return usage_error("--backing=%s: expected mshare[:NAME], shm:/PATH or "
						   "hugetlb:/PATH", optarg);
			have_backing = true;
			break;
		case 'S':
			if (parse_size(optarg, &o->size) < 0 || !o->size)
				return usage_error("--size=%s: expected a size such as 4096, 256M or 1G",
						   optarg);
			break;
		case 'n':
			if (parse_u64(optarg, &o->records) < 0 || !o->records)
				return usage_error("--records=%s: expected a number, 1 or more", optarg);
			break;
		case 'r':
			if (parse_u64(optarg, &o->record_size) < 0 || o->record_size < RECORD_MIN_SIZE ||
			    o->record_size > RECORD_MAX_SIZE || (o->record_size & (o->record_size - 1)))
				return usage_error("--record-size=%s: expected a power of two from %u to %u",
						   optarg, RECORD_MIN_SIZE, RECORD_MAX_SIZE);
			break;
		case OPT_SEED:
			if (parse_u64(optarg, &o->seed) < 0)
				return usage_error("--seed=%s: expected an unsigned number", optarg);
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!have_backing)
		return usage_error("--backing=SPEC is required");
	if (!o->size)
		return usage_error("--size=SIZE is required");
	return 0;
}

static json_t *ms(uint64_t ns)
{
	return json_real(round((double)ns / 1e3) / 1e3);
}

static int print_result(const struct backing_map *m, const struct pool *p, uint64_t format_ns,
			uint64_t insert_ns, const struct proc_sample *before,
			const struct proc_sample *after)
{
	const struct pool_header *h = p->hdr;
	json_t *j;
	char *line;

	j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:I, s:I, s:o}",
		      "program", "demo-load",
		      "backing", backing_kind_name(m->kind),
		      "backing_spec", m->what,
		      "pool_bytes", (json_int_t)h->pool_size,
		      "record_bytes", (json_int_t)h->record_size,
		      "records", (json_int_t)pool_nrecords(p),
		      "slots", (json_int_t)h->nslots,
		      "buckets", (json_int_t)h->nbuckets,
		      "page_bytes", m->page_size ? json_integer((json_int_t)m->page_size) : json_null(),
		      "load_ms", ms(format_ns + insert_ns),
		      "format_ms", ms(format_ns),
		      "insert_ms", ms(insert_ns),
		      "pages_touched", (json_int_t)((h->pool_size + (uint64_t)getpagesize() - 1) /
						    (uint64_t)getpagesize()),
		      "minflt", (json_int_t)(after->minflt - before->minflt),
		      "vmpte_kb", after->vmpte_kb < 0 ? json_null() : json_integer(after->vmpte_kb));
	if (!j)
		return log_error_errno(-ENOMEM, "result line: %m");
	line = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
	json_decref(j);
	if (!line)
		return log_error_errno(-ENOMEM, "result line: %m");
	puts(line);
	free(line);
	if (fflush(stdout) != 0)
		return log_error_errno(negative_errno(), "writing the result: %m");
	return 0;
}

static int load(const struct options *o)
{
	struct backing_map map;
	struct pool pool;
	struct proc_sample before, after;
	uint64_t t0, t1, t2, key, n;
	int r;

	r = backing_create(&o->backing, o->size, &map);
	if (r < 0)
		return r;
	proc_sample(&before);
	t0 = clock_ns(CLOCK_MONOTONIC);
	r = pool_format(map.addr, o->size, o->record_size, o->seed, &pool);
	if (r < 0)
		goto out;
	t1 = clock_ns(CLOCK_MONOTONIC);
	n = o->records ? o->records : pool.nslots;
	if (n > pool.nslots) {
		log_error("--records=%" PRIu64 ": a pool of %" PRIu64 " bytes holds at most %" PRIu64
			  " records of %" PRIu64 " bytes",
			  n, o->size, pool.nslots, o->record_size);
		r = -ENOSPC;
		goto out;
	}
	for (key = 0; key < n; key++) {
		r = pool_insert(&pool, key);
		if (r < 0) {
			log_error_errno(r, "inserting key %" PRIu64 ": %m", key);
			goto out;
		}
	}
	pool_set_loaded(&pool);
	t2 = clock_ns(CLOCK_MONOTONIC);
	proc_sample(&after);
	r = print_result(&map, &pool, t1 - t0, t2 - t1, &before, &after);
out:
	backing_close(&map);
	return r;
}

int main(int argc, char **argv)
{
	struct options o;
	int r;

	r = parse_options(argc, argv, &o);
	if (r < 0)
		return EXIT_USAGE;
	if (r > 0)
		return EXIT_SUCCESS;
	return load(&o) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

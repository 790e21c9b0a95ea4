/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * demo-worker: a database worker on the shared buffer pool. It maps the
 * pool, touches every page of it once (as a real worker ends up doing),
 * says it is ready, waits for the go signal if asked to, runs a YCSB-like
 * mix for a time or a number of operations, and prints one JSON line of
 * what it did and what it cost. See README.md.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <time.h>

#include "backing.h"
#include "barrier.h"
#include "mshare-common/log.h"
#include "mshare-common/procstat.h"
#include "pool.h"
#include "report.h"
#include "util.h"
#include "workload.h"

#define EXIT_USAGE 2

/* How the warm-up touches each page. */
enum warmup {
	WARMUP_READ,	/* load a byte: read faults (with fault-around on a file) */
	WARMUP_WRITE,	/* an atomic OR of 0 into a byte: write faults, no change */
	WARMUP_NONE,
};

static const char *const warmup_names[] = {
	[WARMUP_READ] = "read",
	[WARMUP_WRITE] = "write",
	[WARMUP_NONE] = "none",
};

struct options {
	struct backing_spec backing;
	struct workload_opts work;
	struct barrier barrier;
	const char *id;
	enum warmup warmup;
	bool verify;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: demo-worker --backing=SPEC [OPTIONS]\n"
		"Map the buffer pool that demo-load filled, touch every page of it, run a\n"
		"YCSB-like mix on it, and print one JSON line of the results.\n"
		"\n"
		"  -b, --backing=SPEC     mshare[:NAME]   an mshare region: $MSHARE_FD, or NAME\n"
		"                                         ($MSHARE_FD_<NAME>, else mshare_request)\n"
		"                         shm:PATH        a file on a tmpfs (/dev/shm/pool)\n"
		"                         hugetlb:PATH    a file on a hugetlbfs mount\n"
		"  -m, --mix=MIX          read-mostly (95%% reads, default), update-heavy (50%%),\n"
		"                         read-only\n"
		"  -d, --dist=DIST        zipfian (default) or uniform keys\n"
		"      --theta=T          zipfian skew, above 0 and below 1 (default 0.99)\n"
		"  -s, --seconds=S        run for S seconds (default 10; 0: no run; SIGTERM ends it)\n"
		"  -n, --ops=N            stop after N operations (default: no limit)\n"
		"      --seed=N           random seed (default: from the clock and the pid)\n"
		"      --id=LABEL         a label copied into the JSON (for a driver)\n"
		"      --warmup=MODE      how to touch every page before the run: read (default;\n"
		"                         a load of one byte), write (an atomic OR of 0: write\n"
		"                         faults, nothing changes), none\n"
		"      --verify           after the run, look up every key and check it\n"
		"      --ready=PATH       when warmed up, append a JSON ready line to PATH (a FIFO\n"
		"                         or a file)\n"
		"      --ready-fd=N       ... or write it to descriptor N\n"
		"      --go=PATH          then wait until the FIFO PATH is written to or closed\n"
		"      --go-fd=N          ... or until descriptor N is readable or hung up\n"
		"  -h, --help             show this help\n"
		"\n"
		"Exit status: 0 on success, 1 on failure (or if any operation found a missing\n"
		"or torn record), 2 on a usage error.\n");
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

enum {
	OPT_THETA = 0x100,
	OPT_SEED,
	OPT_ID,
	OPT_WARMUP,
	OPT_VERIFY,
	OPT_READY,
	OPT_READY_FD,
	OPT_GO,
	OPT_GO_FD,
};

/* 1: --help shown; 0: run; -EINVAL: usage error (reported). */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "backing", required_argument, NULL, 'b' },
		{ "mix", required_argument, NULL, 'm' },
		{ "dist", required_argument, NULL, 'd' },
		{ "theta", required_argument, NULL, OPT_THETA },
		{ "seconds", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "id", required_argument, NULL, OPT_ID },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "ready", required_argument, NULL, OPT_READY },
		{ "ready-fd", required_argument, NULL, OPT_READY_FD },
		{ "go", required_argument, NULL, OPT_GO },
		{ "go-fd", required_argument, NULL, OPT_GO_FD },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	bool have_backing = false, have_seed = false;
	int c;

	*o = (struct options){
		.work = { .mix = MIX_READ_MOSTLY, .dist = DIST_ZIPFIAN, .theta = 0.99, .seconds = 10 },
		.barrier = BARRIER_INIT,
		.warmup = WARMUP_READ,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:m:d:s:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (backing_parse(optarg, &o->backing) < 0)
				return usage_error("--backing=%s: expected mshare[:NAME], shm:/PATH or "
						   "hugetlb:/PATH", optarg);
			have_backing = true;
			break;
		case 'm':
			if (mix_parse(optarg, &o->work.mix) < 0)
				return usage_error("--mix=%s: expected read-mostly, update-heavy or "
						   "read-only", optarg);
			break;
		case 'd':
			if (dist_parse(optarg, &o->work.dist) < 0)
				return usage_error("--dist=%s: expected zipfian or uniform", optarg);
			break;
		case OPT_THETA:
			if (parse_double(optarg, &o->work.theta) < 0 || !(o->work.theta > 0) ||
			    !(o->work.theta < 1))
				return usage_error("--theta=%s: expected a number above 0 and below 1",
						   optarg);
			break;
		case 's':
			if (parse_double(optarg, &o->work.seconds) < 0 || o->work.seconds > 1e7)
				return usage_error("--seconds=%s: expected a number of seconds, 0 or more",
						   optarg);
			break;
		case 'n':
			if (parse_u64(optarg, &o->work.max_ops) < 0 || !o->work.max_ops)
				return usage_error("--ops=%s: expected a number of operations, 1 or more",
						   optarg);
			break;
		case OPT_SEED:
			if (parse_u64(optarg, &o->work.seed) < 0)
				return usage_error("--seed=%s: expected an unsigned number", optarg);
			have_seed = true;
			break;
		case OPT_ID:
			o->id = optarg;
			break;
		case OPT_WARMUP: {
			size_t i;

			for (i = 0; i < ARRAY_SIZE(warmup_names); i++)
				if (streq(optarg, warmup_names[i]))
					break;
			if (i == ARRAY_SIZE(warmup_names))
				return usage_error("--warmup=%s: expected read, write or none", optarg);
			o->warmup = (enum warmup)i;
			break;
		}
		case OPT_VERIFY:
			o->verify = true;
			break;
		case OPT_READY:
			o->barrier.ready_path = optarg;
			break;
		case OPT_READY_FD:
			if (parse_fd(optarg, &o->barrier.ready_fd) < 0)
				return usage_error("--ready-fd=%s: expected a descriptor number", optarg);
			break;
		case OPT_GO:
			o->barrier.go_path = optarg;
			break;
		case OPT_GO_FD:
			if (parse_fd(optarg, &o->barrier.go_fd) < 0)
				return usage_error("--go-fd=%s: expected a descriptor number", optarg);
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
		return usage_error("%s", "--backing=SPEC is required");
	if (o->barrier.ready_path && o->barrier.ready_fd >= 0)
		return usage_error("%s", "--ready and --ready-fd exclude each other");
	if (o->barrier.go_path && o->barrier.go_fd >= 0)
		return usage_error("%s", "--go and --go-fd exclude each other");
	if (!have_seed)
		o->work.seed = clock_ns(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 32);
	return 0;
}

/* Touch one byte of every page of the pool; returns the pages touched. */
static uint64_t warm_up(void *base, uint64_t size, enum warmup mode)
{
	unsigned char *p = base;
	uint64_t off, page = (uint64_t)getpagesize(), pages = 0;
	unsigned char sink = 0;

	if (mode == WARMUP_NONE)
		return 0;
	for (off = 0; off < size; off += page, pages++)
		if (mode == WARMUP_WRITE)
			/* Other workers may be updating this byte: change nothing, atomically. */
			__atomic_fetch_or(&p[off], 0, __ATOMIC_RELAXED);
		else
			sink ^= *(volatile unsigned char *)&p[off];
	__asm__ volatile("" : : "r"(sink));
	return pages;
}

static int run(struct options *o, struct worker_report *w)
{
	struct backing_map map;
	struct pool pool;
	struct workload_result res;
	struct pool_verify verify;
	_cleanup_free_ char *ready = NULL, *final = NULL;
	int r;

	r = barrier_prepare(&o->barrier);
	if (r < 0)
		return r;
	r = backing_open(&o->backing, &map);
	if (r < 0)
		return r;
	r = pool_open(map.addr, map.size, map.what, &pool);
	if (r == 0)
		r = backing_check(&map, pool.hdr->pool_size);
	if (r < 0)
		goto out;

	w->backing = backing_kind_name(map.kind);
	w->backing_spec = map.what;
	w->pool_bytes = pool.hdr->pool_size;
	w->record_bytes = pool.record_size;
	w->records = pool_nrecords(&pool);
	w->page_bytes = map.page_size;
	w->latch = &pool.stats;
	w->t_mapped = clock_ns(CLOCK_MONOTONIC);
	proc_sample(&w->at_mapped);

	w->warmup = warmup_names[o->warmup];
	w->warmup_pages = warm_up(map.addr, w->pool_bytes, o->warmup);
	proc_sample(&w->at_ready);
	w->t_ready = clock_ns(CLOCK_MONOTONIC);
	w->boot_ready = clock_ns(CLOCK_BOOTTIME);

	ready = report_ready_line(w);
	if (!ready) {
		r = log_error_errno(-ENOMEM, "ready line: %m");
		goto out;
	}
	r = barrier_ready(&o->barrier, ready);
	if (r == 0)
		r = barrier_wait_go(&o->barrier);
	if (r < 0)
		goto out;
	w->t_go = clock_ns(CLOCK_MONOTONIC);

	r = workload_run(&pool, &o->work, &res);
	if (r < 0)
		goto out;
	w->run = &res;
	proc_sample(&w->at_end);
	if (o->verify) {
		r = pool_verify(&pool, &verify);
		if (r < 0)
			goto out;
		w->verify = &verify;
	}

	final = report_final_line(w);
	if (!final) {
		r = log_error_errno(-ENOMEM, "result line: %m");
		goto out;
	}
	puts(final);
	if (fflush(stdout) != 0) {
		r = log_error_errno(negative_errno(), "writing the result: %m");
		goto out;
	}
	if (res.not_found || res.bad_checksum) {
		log_error("%" PRIu64 " operations found a missing record, %" PRIu64 " a torn one",
			  res.not_found, res.bad_checksum);
		r = -EBADMSG;
	} else if (o->verify && (verify.missing || verify.bad)) {
		log_error("verify: %" PRIu64 " keys missing, %" PRIu64 " records with a wrong checksum",
			  verify.missing, verify.bad);
		r = -EBADMSG;
	}
out:
	backing_close(&map);
	barrier_close(&o->barrier);
	return r;
}

static void on_stop(int sig)
{
	(void)sig;
	workload_stop = 1;
}

/* SIGTERM and SIGINT end the run early; the worker still verifies (with
 * --verify) and reports. A handler also makes SIGTERM reach a worker that
 * is PID 1 of a container. */
static void catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

int main(int argc, char **argv)
{
	struct worker_report w = {
		.t_main = clock_ns(CLOCK_MONOTONIC),
		.boot_main = clock_ns(CLOCK_BOOTTIME),
	};
	struct options o;
	int r;

	proc_sample(&w.at_main);
	w.boot_proc_start = proc_start_boottime_ns();
	w.pid = getpid();

	r = parse_options(argc, argv, &o);
	if (r < 0)
		return EXIT_USAGE;
	if (r > 0)
		return EXIT_SUCCESS;
	w.id = o.id;
	w.opts = &o.work;
	catch_stop_signals();
	return run(&o, &w) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

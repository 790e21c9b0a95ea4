/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * demo-measure: what bench-guest.sh measures and decides, one subcommand
 * per step of the driver: sample the system at a point, build the records
 * for the host (MSHARE-BENCH-* lines), estimate whether more workers fit,
 * check the CI bound. The driver keeps the gluing (pools, workers, the
 * barrier); the numbers and the JSON are made here. See bench/README.md.
 */
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sys/utsname.h>

#include "bound.h"
#include "estimate.h"
#include "jsonl.h"
#include "mshare-common/log.h"
#include "mshare-common/size.h"
#include "mshare-common/strprintf.h"
#include "point.h"
#include "mshare-common/procstat.h"
#include "sample.h"
#include "util.h"

#define EXIT_USAGE 2
#define MEMINFO "/proc/meminfo"
#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

static void usage(FILE *f)
{
	fputs("Usage: demo-measure COMMAND [ARGS]\n"
	      "The numbers and records of bench-guest.sh (demo-app/bench/README.md).\n"
	      "\n"
	      "  size SIZE                 BYTES and the label (1G, 256M) of a pool size\n"
	      "  meminfo KEY...            the values of /proc/meminfo keys, one a line\n"
	      "  sample [--owner-cgroup DIR] [--cgroups DIR --prefix P]\n"
	      "                            the system now, as JSON (for point)\n"
	      "  fits BACKING BYTES N LAUNCH\n"
	      "                            exit 0 if N workers are expected to fit, else 1 and why\n"
	      "  sweep BYTES LIST MAX      the worker counts of LIST (1,16,64+) for a pool\n"
	      "  begin NAME=VALUE...       the BEGIN record (with the kernel's and memory's)\n"
	      "  pool BACKING BYTES LABEL  the POOL record from demo-load's output on stdin\n"
	      "  point --key KEY --before F --at-ready F --ready F --done GLOB\n"
	      "        --times T0,LAUNCHED,READY,GO,DONE [--regions F --region NAME]\n"
	      "        [--status ok|failed] [--reason TEXT] [--save F] [--verdict F] NAME=VALUE...\n"
	      "                            the POINT and WORKERS records; exit 1 if the point failed\n"
	      "  bound [--mshare F] [--shm F] --context TEXT\n"
	      "                            the CI bound's checks as \"ok - ...\" or \"not ok - ...\"\n"
	      "  record TYPE NAME=VALUE... a record: NAME=STRING, NAME:=JSON, dotted names nest\n"
	      "\n"
	      "Exit status: 0, 1 (does not fit, failed point), 2 on a usage error or failure.\n",
	      f);
}

static int usage_error(const char *what)
{
	fprintf(stderr, "demo-measure: %s (see --help)\n", what);
	return EXIT_USAGE;
}

static int fail(int r, const char *what)
{
	log_error_errno(r, "%s: %m", what);
	return EXIT_USAGE;
}

static int record_type(const char *type, char *prefix, size_t size)
{
	size_t i, n = (size_t)snprintf(prefix, size, "MSHARE-BENCH-%s", type);

	if (n >= size)
		return -EINVAL;
	for (i = strlen("MSHARE-BENCH-"); prefix[i]; i++)
		prefix[i] = (char)toupper((unsigned char)prefix[i]);
	return 0;
}

/* The record of type with the NAME=VALUE arguments, as a line for the host. */
static int print_record(const char *type, json_t *o)
{
	char prefix[64];
	int r = record_type(type, prefix, sizeof(prefix));

	return r < 0 ? r : jsonl_print(stdout, prefix, o);
}

static int set_args(json_t *o, int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (json_set_arg(o, argv[i]) < 0) {
			fprintf(stderr, "demo-measure: bad argument '%s': expected NAME=STRING or NAME:=JSON\n",
				argv[i]);
			return -EINVAL;
		}
	return 0;
}

static int parse_bytes(const char *s, uint64_t *ret)
{
	return parse_size(s, ret) < 0 || *ret == 0 ? -EINVAL : 0;
}

static void size_label(uint64_t bytes, char *buf, size_t size)
{
	if (bytes % GIB == 0)
		snprintf(buf, size, "%" PRIu64 "G", bytes / GIB);
	else
		snprintf(buf, size, "%" PRIu64 "M", bytes / MIB);
}

static int cmd_size(int argc, char **argv)
{
	uint64_t bytes;
	char label[32];

	if (argc != 2 || parse_bytes(argv[1], &bytes) < 0)
		return usage_error("size: expected one size such as 1G or 256M");
	size_label(bytes, label, sizeof(label));
	printf("%" PRIu64 " %s\n", bytes, label);
	return 0;
}

static int cmd_meminfo(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		int64_t v;
		int r = proc_field(MEMINFO, argv[i], &v);

		if (r < 0)
			return fail(r, argv[i]);
		printf("%" PRId64 "\n", v);
	}
	return 0;
}

static int cmd_sample(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "owner-cgroup", required_argument, NULL, 'o' },
		{ "cgroups", required_argument, NULL, 'c' },
		{ "prefix", required_argument, NULL, 'p' },
		{},
	};
	struct sample_source src = { .meminfo = MEMINFO };
	_cleanup_free_ char *owner = NULL;
	_cleanup_json_ json_t *s = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0)
		switch (c) {
		case 'o':
			free(owner);
			owner = strprintf("%s/memory.stat", optarg);
			src.owner_stat = owner;
			break;
		case 'c': src.cgroups = optarg; break;
		case 'p': src.prefix = optarg; break;
		default: return EXIT_USAGE;
		}
	r = sample_take(&src, &s);
	if (r < 0)
		return fail(r, "sampling /proc/meminfo");
	r = jsonl_print(stdout, NULL, s);
	return r < 0 ? fail(r, "writing") : 0;
}

static int mem_available(int64_t *avail, int64_t *reserve)
{
	static const char *const keys[] = { "MemAvailable", "MemTotal" };
	int64_t v[2];
	int r = proc_fields(MEMINFO, keys, v, 2);

	if (r < 0)
		return r;
	if (v[0] < 0 || v[1] < 0)
		return -ENOENT;
	*avail = v[0];
	*reserve = estimate_reserve_kb(v[1]);
	return *reserve < 0 ? (int)*reserve : 0;
}

static int cmd_fits(int argc, char **argv)
{
	uint64_t bytes, n;
	int64_t pt, over, avail, reserve;
	_cleanup_free_ char *why = NULL;
	int r;

	if (argc != 5 || parse_bytes(argv[2], &bytes) < 0 || parse_u64(argv[3], &n) < 0)
		return usage_error("fits: expected BACKING BYTES N LAUNCH");
	pt = estimate_pagetables_kb(argv[1], bytes);
	if (pt < 0)
		return usage_error("fits: BACKING is mshare, shm or hugetlb");
	over = estimate_env_kb("BENCH_OVERHEAD_KB", streq(argv[4], "containers")
							    ? ESTIMATE_OVERHEAD_CONTAINER_KB
							    : ESTIMATE_OVERHEAD_PROCESS_KB);
	if (over < 0)
		return usage_error("BENCH_OVERHEAD_KB: expected a number of kB");
	r = mem_available(&avail, &reserve);
	if (r < 0)
		return fail(r, "reading MemAvailable and MemTotal (or BENCH_RESERVE_KB)");
	if (estimate_fits(n, pt, over, avail, reserve, &why))
		return 0;
	printf("%s\n", strna(why));
	return 1;
}

static int cmd_sweep(int argc, char **argv)
{
	uint64_t bytes, max;
	int64_t avail, reserve, over;
	_cleanup_free_ uint64_t *counts = NULL;
	size_t n;
	int r;

	if (argc != 4 || parse_bytes(argv[1], &bytes) < 0 || parse_u64(argv[3], &max) < 0)
		return usage_error("sweep: expected BYTES LIST MAX");
	over = estimate_env_kb("BENCH_OVERHEAD_KB", ESTIMATE_OVERHEAD_CONTAINER_KB);
	if (over < 0)
		return usage_error("BENCH_OVERHEAD_KB: expected a number of kB");
	r = mem_available(&avail, &reserve);
	if (r < 0)
		return fail(r, "reading MemAvailable and MemTotal (or BENCH_RESERVE_KB)");
	r = estimate_sweep(argv[2], bytes, avail, reserve, over, max, &counts, &n);
	if (r == -EINVAL)
		return usage_error("sweep: LIST is worker counts such as 1,16,64 or 1,16,64+");
	if (r < 0)
		return fail(r, "sweep");
	for (size_t i = 0; i < n; i++)
		printf("%s%" PRIu64, i ? " " : "", counts[i]);
	printf("\n");
	return 0;
}

/* The first line of a file without its newline, "" if it cannot be read. */
static char *first_line(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t size = 0;

	if (!f || getline(&line, &size, f) < 0) {
		free(line);
		return strdup("");
	}
	line[strcspn(line, "\n")] = '\0';
	return line;
}

static int cmd_begin(int argc, char **argv)
{
	_cleanup_json_ json_t *o = json_pack("{s:s}", "type", "begin");
	_cleanup_free_ char *cmdline = first_line("/proc/cmdline");
	_cleanup_free_ char *thp = first_line("/sys/kernel/mm/transparent_hugepage/enabled");
	_cleanup_free_ char *fa = first_line("/sys/kernel/debug/fault_around_bytes");
	int64_t mem_total = -1, hpsize = -1;
	uint64_t fault_around;
	struct utsname u;
	char b[4][64];
	int r = 0;

	if (!o || set_args(o, argc - 1, argv + 1) < 0)
		return EXIT_USAGE;
	if (uname(&u) < 0)
		return fail(-errno, "uname");
	/* Left at -1 (null) where meminfo lacks them. */
	(void)proc_field(MEMINFO, "MemTotal", &mem_total);
	(void)proc_field(MEMINFO, "Hugepagesize", &hpsize);
	r |= json_object_set_new(o, "warmup", json_string("read"));
	r |= json_object_set_new(o, "kernel", json_string(u.release));
	r |= json_object_set_new(o, "kernel_version", json_string(u.version));
	r |= json_object_set_new(o, "cmdline", json_string(cmdline ?: ""));
	r |= json_object_set_new(o, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	r |= json_object_set_new(o, "mem_total_kb", json_num(mem_total < 0 ? NAN : (double)mem_total));
	r |= json_object_set_new(o, "reserve_kb", json_num((double)estimate_reserve_kb(mem_total)));
	r |= json_object_set_new(o, "thp", json_string(thp ?: ""));
	r |= json_object_set_new(o, "fault_around_bytes",
				 fa && parse_u64(fa, &fault_around) == 0 ? json_integer((json_int_t)fault_around)
									  : json_null());
	r |= json_object_set_new(o, "hugepagesize_kb", json_num(hpsize < 0 ? NAN : (double)hpsize));
	if (r)
		return fail(-ENOMEM, "begin");
	r = print_record("begin", o);
	if (r < 0)
		return fail(r, "writing");
#define S(key) strempty(json_string_value(json_object_get(o, key)))
	printf("[bench] mode %s: pools %s, workers %s, backings %s, %s s %s runs; kernel %s, %s CPUs, %" PRId64
	       " MiB\n",
	       S("mode"), S("sizes"), S("workers"), S("backings"),
	       json_num_text(json_object_get(o, "seconds"), b[0], sizeof(b[0])), S("mix"), u.release,
	       json_num_text(json_object_get(o, "cpus"), b[1], sizeof(b[1])), mem_total / 1024);
#undef S
	return 0;
}

static int cmd_pool(int argc, char **argv)
{
	_cleanup_json_ json_t *o = NULL, *load = NULL;
	_cleanup_free_ char *line = NULL;
	size_t size = 0;
	uint64_t bytes;
	char b[2][64];
	double ms;
	int r;

	if (argc != 4 || parse_bytes(argv[2], &bytes) < 0)
		return usage_error("pool: expected BACKING BYTES LABEL, and demo-load's output on stdin");
	/* demo-load's JSON line is its last line that starts with '{'. */
	while (getline(&line, &size, stdin) >= 0)
		if (line[0] == '{') {
			json_decref(load);
			load = json_loads(line, 0, NULL);
		}
	o = json_pack("{s:s, s:s, s:I, s:O?}", "type", "pool", "backing", argv[1], "pool_bytes",
		      (json_int_t)bytes, "load", load);
	if (!o)
		return fail(-ENOMEM, "pool");
	r = print_record("pool", o);
	if (r < 0)
		return fail(r, "writing");
	ms = json_member_num(load, "load_ms");
	if (isnan(ms))
		printf("[bench] %s %s: pool loaded (?)\n", argv[1], argv[3]);
	else {
		_cleanup_json_ json_t *s = json_num(round(ms / 100) / 10);

		printf("[bench] %s %s: pool loaded (%s records in %s s)\n", argv[1], argv[3],
		       json_num_text(json_object_get(load, "records"), b[0], sizeof(b[0])),
		       json_num_text(s, b[1], sizeof(b[1])));
	}
	return 0;
}

static json_t *load_file(const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, JSON_DECODE_ANY, &e);

	if (!j)
		log_error("%s: %s", path, e.text);
	return j;
}

static int write_file(const char *path, const char *text)
{
	_cleanup_fclose_ FILE *f = fopen(path, "we");

	if (!f || fputs(text, f) < 0 || fflush(f) != 0)
		return negative_errno();
	return 0;
}

static int cmd_point(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "before", required_argument, NULL, 'b' },
		{ "at-ready", required_argument, NULL, 'a' },
		{ "ready", required_argument, NULL, 'r' },
		{ "done", required_argument, NULL, 'd' },
		{ "times", required_argument, NULL, 't' },
		{ "regions", required_argument, NULL, 'R' },
		{ "region", required_argument, NULL, 'n' },
		{ "status", required_argument, NULL, 's' },
		{ "reason", required_argument, NULL, 'w' },
		{ "save", required_argument, NULL, 'S' },
		{ "verdict", required_argument, NULL, 'v' },
		{},
	};
	const char *key = NULL, *before = NULL, *at_ready = NULL, *ready = NULL, *done = NULL;
	const char *times = NULL, *regions = NULL, *region = NULL, *save = NULL, *verdict = NULL;
	struct point_input in = { .status = "ok" };
	_cleanup_json_ json_t *named = json_object(), *b = NULL, *a = NULL, *rl = json_array(),
			      *dl = json_array(), *list = NULL, *p = NULL, *w = NULL;
	_cleanup_free_ char *summary = NULL, *text = NULL, *saved = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0)
		switch (c) {
		case 'k': key = optarg; break;
		case 'b': before = optarg; break;
		case 'a': at_ready = optarg; break;
		case 'r': ready = optarg; break;
		case 'd': done = optarg; break;
		case 't': times = optarg; break;
		case 'R': regions = optarg; break;
		case 'n': region = optarg; break;
		case 's': in.status = optarg; break;
		case 'w': in.reason = optarg; break;
		case 'S': save = optarg; break;
		case 'v': verdict = optarg; break;
		default: return EXIT_USAGE;
		}
	if (!key || !before || !at_ready || !ready || !done || !times)
		return usage_error("point: --key, --before, --at-ready, --ready, --done and --times are needed");
	if (sscanf(times, "%" SCNd64 ",%" SCNd64 ",%" SCNd64 ",%" SCNd64 ",%" SCNd64, &in.t0,
		   &in.t_launched, &in.t_ready, &in.t_go, &in.t_done) != 5)
		return usage_error("point: --times is five times in ms, comma-separated");
	if (!named || !rl || !dl || set_args(named, argc - optind, argv + optind) < 0)
		return EXIT_USAGE;
	b = load_file(before);
	a = load_file(at_ready);
	if (!b || !a)
		return EXIT_USAGE;
	r = jsonl_read(ready, "ready", rl);
	if (r >= 0)
		r = jsonl_read_glob(done, "done", dl);
	if (r < 0)
		return fail(r, "reading the workers' lines");
	/* The region's numbers are extra: a list that does not parse leaves them null. */
	if (regions && region) {
		list = json_load_file(regions, JSON_DECODE_ANY, NULL);
		in.region = point_region(list, region);
	}
	in.named = named;
	in.before = b;
	in.at_ready = a;
	in.ready = rl;
	in.done = dl;
	r = point_build(&in, &p);
	if (r >= 0)
		r = point_workers(key, rl, dl, json_object_get(a, "cg"), &w);
	if (r < 0)
		return fail(r, "building the point");
	r = print_record("point", p);
	if (r >= 0)
		r = print_record("workers", w);
	if (r < 0)
		return fail(r, "writing");
	if (save) {
		saved = json_dumps(p, JSONL_DUMP_FLAGS);
		r = saved ? write_file(save, saved) : -ENOMEM;
		if (r < 0)
			return fail(r, save);
	}
	summary = point_summary(p);
	if (verdict) {
		text = strprintf("%s\n%s\n", strna(summary),
				 strempty(json_string_value(json_object_get(p, "reason"))));
		r = text ? write_file(verdict, text) : -ENOMEM;
		if (r < 0)
			return fail(r, verdict);
	}
	return streq(json_string_value(json_object_get(p, "status")), "ok") ? 0 : 1;
}

static int cmd_bound(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mshare", required_argument, NULL, 'm' },
		{ "shm", required_argument, NULL, 's' },
		{ "context", required_argument, NULL, 'c' },
		{},
	};
	_cleanup_json_ json_t *m = NULL, *s = NULL;
	const char *context = "";
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0)
		switch (c) {
		/* A point that did not run has no file: the check says so. */
		case 'm': m = json_load_file(optarg, 0, NULL); break;
		case 's': s = json_load_file(optarg, 0, NULL); break;
		case 'c': context = optarg; break;
		default: return EXIT_USAGE;
		}
	for (size_t i = 0; i < ARRAY_SIZE(bound_ci); i++) {
		_cleanup_free_ char *text = NULL;
		bool ok = bound_check(&bound_ci[i], m, s, context, &text);

		if (!text)
			return fail(-ENOMEM, "bound");
		printf("%s - %s\n", ok ? "ok" : "not ok", text);
	}
	return 0;
}

static int cmd_record(int argc, char **argv)
{
	_cleanup_json_ json_t *o = NULL;
	int r;

	if (argc < 2 || !*argv[1])
		return usage_error("record: expected TYPE NAME=VALUE...");
	o = json_pack("{s:s}", "type", argv[1]);
	if (!o || set_args(o, argc - 2, argv + 2) < 0)
		return EXIT_USAGE;
	r = print_record(argv[1], o);
	return r < 0 ? fail(r, "writing") : 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv);
	} cmds[] = {
		{ "size", cmd_size },	{ "meminfo", cmd_meminfo }, { "sample", cmd_sample },
		{ "fits", cmd_fits },	{ "sweep", cmd_sweep },	    { "begin", cmd_begin },
		{ "pool", cmd_pool },	{ "point", cmd_point },	    { "bound", cmd_bound },
		{ "record", cmd_record },
	};

	log_open("demo-measure");
	if (argc < 2)
		return usage_error("expected a command");
	if (streq(argv[1], "-h") || streq(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (streq(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	return usage_error("unknown command");
}

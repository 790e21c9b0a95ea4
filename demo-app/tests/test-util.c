/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parsers (numbers, --backing, --mix; sizes are the common library's,
 * tested there), the random number and zipfian generators (zeta's closed
 * form against the plain sum, the distribution's head), and the latency
 * histogram's buckets and quantiles.
 */
#include <inttypes.h>
#include <math.h>

#include "backing.h"
#include "hist.h"
#include "mshare-common/macro.h"
#include "mshare-common/tap.h"
#include "util.h"
#include "workload.h"
#include "zipf.h"

static void test_numbers(void)
{
	uint64_t u;
	double d;
	int fd;

	ok(parse_u64("18446744073709551615", &u) == 0 && u == UINT64_MAX &&
		   parse_u64("18446744073709551616", &u) == -ERANGE && parse_u64("-1", &u) < 0 &&
		   parse_u64("1x", &u) < 0 && parse_u64("", &u) < 0,
	   "unsigned numbers: the whole range, nothing else");
	ok(parse_double("0.5", &d) == 0 && d == 0.5 && parse_double("10", &d) == 0 && d == 10 &&
		   parse_double("-1", &d) < 0 && parse_double("nan", &d) < 0 &&
		   parse_double("1s", &d) < 0 && parse_double("inf", &d) < 0,
	   "seconds: non-negative finite decimals only");
	ok(parse_fd("3", &fd) == 0 && fd == 3 && parse_fd("2147483648", &fd) < 0 &&
		   parse_fd("-1", &fd) < 0,
	   "descriptor numbers");
}

static void test_backing_parse(void)
{
	static const char *const bad[] = { "",	    "mshare:",	   "shm",	"shm:",
					   "shm:pool", "hugetlb",	   "hugetlb:x", "nfs:/x",
					   "msharex",  "SHM:/dev/shm/x" };
	struct backing_spec s;
	unsigned bad_ok = 0;

	ok(backing_parse("mshare", &s) == 0 && s.kind == BACKING_MSHARE && !s.arg,
	   "mshare: the region in $MSHARE_FD");
	ok(backing_parse("mshare:db-pool", &s) == 0 && s.kind == BACKING_MSHARE &&
		   streq(s.arg, "db-pool"),
	   "mshare:NAME");
	ok(backing_parse("shm:/dev/shm/pool", &s) == 0 && s.kind == BACKING_SHM &&
		   streq(s.arg, "/dev/shm/pool"),
	   "shm:PATH");
	ok(backing_parse("hugetlb:/dev/hugepages/pool", &s) == 0 && s.kind == BACKING_HUGETLB &&
		   streq(s.arg, "/dev/hugepages/pool"),
	   "hugetlb:PATH");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		bad_ok += backing_parse(bad[i], &s) == -EINVAL;
	ok(bad_ok == ARRAY_SIZE(bad), "bad backings are refused (%u of %zu)", bad_ok, ARRAY_SIZE(bad));
}

static void test_mix_parse(void)
{
	enum mix m;
	enum dist d;

	ok(mix_parse("read-mostly", &m) == 0 && m == MIX_READ_MOSTLY &&
		   mix_parse("update-heavy", &m) == 0 && m == MIX_UPDATE_HEAVY &&
		   mix_parse("read-only", &m) == 0 && m == MIX_READ_ONLY && mix_parse("ro", &m) < 0,
	   "mixes by name");
	ok(mix_read_fraction(MIX_READ_MOSTLY) == 0.95 && mix_read_fraction(MIX_UPDATE_HEAVY) == 0.5,
	   "read-mostly reads 95 %%, update-heavy 50 %%");
	ok(dist_parse("zipfian", &d) == 0 && d == DIST_ZIPFIAN && dist_parse("uniform", &d) == 0 &&
		   d == DIST_UNIFORM && dist_parse("zipf", &d) < 0,
	   "distributions by name");
}

static void test_rng(void)
{
	struct rng a, b;
	unsigned same = 0, below = 0;
	double sum = 0;

	rng_seed(&a, 5);
	rng_seed(&b, 5);
	for (int i = 0; i < 1000; i++)
		same += rng_next(&a) == rng_next(&b);
	ok(same == 1000, "one seed, one sequence");
	rng_seed(&b, 6);
	ok(rng_next(&a) != rng_next(&b), "another seed, another sequence");
	for (int i = 0; i < 100000; i++) {
		uint64_t v = rng_below(&a, 1000);

		below += v < 1000;
		sum += (double)v;
	}
	ok(below == 100000 && fabs(sum / 100000 - 499.5) < 5, "uniform below n, mean %.1f",
	   sum / 100000);
}

static void test_zeta(void)
{
	static const uint64_t ns[] = { 1001, 20000, 1000000, 16000000 };
	static const double thetas[] = { 0.5, 0.99 };
	double worst = 0;

	for (size_t i = 0; i < ARRAY_SIZE(ns); i++)
		for (size_t j = 0; j < ARRAY_SIZE(thetas); j++) {
			double exact = 0;

			for (uint64_t k = ns[i]; k >= 1; k--) /* small terms first */
				exact += pow((double)k, -thetas[j]);
			worst = fmax(worst, fabs(zeta(ns[i], thetas[j]) - exact) / exact);
		}
	ok(worst < 1e-12, "zeta's closed form matches the sum up to 16 million (relative error %.1e)",
	   worst);
	ok(fabs(zeta(3, 0.5) - (1 + 1 / sqrt(2) + 1 / sqrt(3))) < 1e-15, "zeta of few terms is the sum");
}

static void test_zipf(void)
{
	enum { N = 1000, SAMPLES = 1000000 };
	static uint64_t count[N];
	struct zipf z;
	struct rng r;
	uint64_t out = 0, distinct = 0;
	double p0, p1;

	ok(zipf_init(&z, N, 1.0) < 0 && zipf_init(&z, 0, 0.5) < 0 && zipf_init(&z, N, 0) < 0,
	   "zipfian needs 0 < theta < 1 and keys");
	zipf_init(&z, N, 0.99);
	rng_seed(&r, 1);
	for (int i = 0; i < SAMPLES; i++) {
		uint64_t k = zipf_rank(&z, &r);

		if (k >= N)
			out++;
		else
			count[k]++;
	}
	p0 = 1 / zeta(N, 0.99);
	p1 = pow(2, -0.99) / zeta(N, 0.99);
	ok(out == 0, "every rank below n");
	ok(fabs((double)count[0] / SAMPLES - p0) < 0.01 * p0 + 0.002 &&
		   fabs((double)count[1] / SAMPLES - p1) < 0.01 * p1 + 0.002,
	   "ranks 0 and 1 come %.4f and %.4f of the time (expected %.4f, %.4f)",
	   (double)count[0] / SAMPLES, (double)count[1] / SAMPLES, p0, p1);
	ok(count[0] > count[10] && count[10] > count[100] && count[100] > count[999] / 2,
	   "popularity falls with rank");
	memset(count, 0, sizeof(count));
	for (int i = 0; i < SAMPLES; i++) {
		uint64_t k = zipf_key(&z, &r);

		if (k < N && !count[k]++)
			distinct++;
	}
	ok(distinct > 500, "scrambled keys stay below n and spread (%" PRIu64 " distinct)", distinct);
}

static void test_hist(void)
{
	struct hist h;
	unsigned bad = 0;
	uint64_t p50, p99;

	for (uint64_t v = 0; v < 5000000; v += v < 1000 ? 1 : v / 100) {
		unsigned i = hist_index(v);
		uint64_t low = hist_bucket_low(i), next = hist_bucket_low(i + 1);

		if (!(low <= v && v < next) || (v >= 64 && (double)(next - low) > (double)low / 31))
			bad++;
	}
	ok(bad == 0 && hist_index(UINT64_MAX) == HIST_BUCKETS - 1,
	   "every value falls in a bucket at most 1/32 of itself wide");
	hist_init(&h);
	ok(hist_quantile(&h, 0.5) == 0, "an empty histogram says 0");
	for (uint64_t v = 1; v <= 100000; v++)
		hist_add(&h, v);
	p50 = hist_quantile(&h, 0.5);
	p99 = hist_quantile(&h, 0.99);
	ok(fabs((double)p50 - 50000) < 50000 / 32.0 && fabs((double)p99 - 99000) < 99000 / 32.0,
	   "quantiles of 1..100000 within 1/32: p50 %" PRIu64 ", p99 %" PRIu64, p50, p99);
	ok(hist_quantile(&h, 1.0) == 100000 && h.count == 100000 && h.min == 1,
	   "the top quantile is the maximum");
}

int main(void)
{
	test_numbers();
	test_backing_parse();
	test_mix_parse();
	test_rng();
	test_zeta();
	test_zipf();
	test_hist();
	return tap_finish();
}

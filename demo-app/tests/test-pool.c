/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pool layout: its geometry for many sizes, format and insert, reads
 * and updates, checksums that catch a corrupt record, the refusal of a
 * pool with a wrong magic, version, size, geometry or loaded flag (and the
 * message naming what is wrong), and position independence: a pool
 * formatted through one mapping is used through another at another address.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>

#include "mshare-common/macro.h"
#include "mshare-common/tap.h"
#include "pool.h"

#define SIZE (4u << 20)

/* Run fn with stderr captured into buf; returns fn's result. */
static int capture_stderr(int (*fn)(void *), void *arg, char *buf, size_t len)
{
	int saved = dup(STDERR_FILENO), fd = memfd_create("stderr", MFD_CLOEXEC), r;
	ssize_t n;

	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	r = fn(arg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return r;
}

/*
 * fn must fail with error and print a message holding want; the check
 * shows the message's first line.
 */
static void expect_refusal(int (*fn)(void *), void *arg, int error, const char *want,
			   const char *what)
{
	char msg[512], *nl;
	int r = capture_stderr(fn, arg, msg, sizeof(msg));
	bool has = strstr(msg, want) != NULL;

	nl = strchr(msg, '\n');
	if (nl)
		*nl = '\0';
	ok(r == error && has, "%s: \"%s\"", what, msg);
}

static void test_geometry(void)
{
	static const uint64_t sizes[] = { 64 << 10, 1 << 20, 3 << 20, 256 << 20, 1ull << 30,
					  (4ull << 30) + 4096, 64ull << 30 };
	static const size_t rsizes[] = { 64, 256, 1024, 4096, 65536 };
	struct pool_geometry g;
	unsigned bad = 0, tried = 0;
	double worst = 1;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
		for (size_t j = 0; j < ARRAY_SIZE(rsizes); j++) {
			uint64_t size = sizes[i], rs = rsizes[j];

			if (size < 16 * rs)
				continue;
			tried++;
			if (pool_geometry(size, rs, &g) < 0 || !g.nbuckets ||
			    (g.nbuckets & (g.nbuckets - 1)) || g.buckets_off != POOL_HEADER_SIZE ||
			    g.buckets_off + g.nbuckets * sizeof(struct bucket) > g.records_off ||
			    g.records_off % POOL_ALIGN || g.records_off + g.nslots * rs > size ||
			    g.nslots < g.nbuckets || g.nslots > 2 * g.nbuckets + 2) {
				bad++;
				continue;
			}
			if (size >= (256 << 20) && rs >= 256 && (double)(g.nslots * rs) / (double)size < worst)
				worst = (double)(g.nslots * rs) / (double)size;
		}
	ok(bad == 0, "geometry of %u pools: power-of-two buckets after the header, page-aligned "
		     "records inside the size, 1 to 2 records per bucket", tried);
	ok(worst > 0.9, "records of 256 bytes or more fill at least 90%% of pools of 256 MiB or more "
	   "(worst %.3f)", worst);
}

static int geometry_small(void *arg)
{
	struct pool_geometry g;

	(void)arg;
	return pool_geometry(8192, 256, &g);
}

static int geometry_odd(void *arg)
{
	struct pool_geometry g;

	(void)arg;
	return pool_geometry(1 << 20, 300, &g);
}

static void test_geometry_errors(void)
{
	expect_refusal(geometry_small, NULL, -EINVAL, "holds no record",
		       "a pool too small for a record is refused");
	expect_refusal(geometry_odd, NULL, -EINVAL, "power of two",
		       "a record size that is not a power of two is refused");
}

static void bump(struct record *r, size_t record_size, void *arg)
{
	(void)record_size;
	r->payload[0] += *(uint64_t *)arg;
}

static void test_records(void)
{
	void *base = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct record *copy = malloc(512);
	struct pool p;
	struct pool_verify v;
	uint64_t n = 5000, found = 0, before, add = 5;
	int r;

	r = pool_format(base, SIZE, 512, 9, &p);
	ok(r == 0 && p.nslots > n, "formatted a 4 MiB pool of 512-byte records (%" PRIu64
	   " slots, %" PRIu64 " buckets)", p.nslots, p.bucket_mask + 1);
	for (uint64_t k = 0; k < n; k++)
		if (pool_insert(&p, k) < 0)
			break;
	ok(pool_nrecords(&p) == n, "inserted %" PRIu64 " keys", n);
	for (uint64_t k = 0; k < n; k++)
		found += pool_read(&p, k, copy) == 0 && copy->key == k && copy->version == 1;
	ok(found == n, "every key reads back with version 1 and a valid checksum");
	ok(pool_read(&p, n + 1, copy) == -ENOENT, "a key never inserted is not found");
	ok(pool_insert(&p, 17) == -EEXIST, "inserting a key again is refused");

	r = pool_read(&p, 17, copy);
	before = copy->payload[0];
	ok(r == 0 && pool_update(&p, 17, bump, &add) == 0 && pool_read(&p, 17, copy) == 0 &&
		   copy->version == 2 && copy->payload[0] == before + 5,
	   "an update changes the payload, bumps the version, and reseals the record");
	ok(pool_update(&p, n + 2, NULL, NULL) == -ENOENT, "updating a missing key says so");

	pool_slot(&p, 3)->payload[4] ^= 1;
	ok(pool_read(&p, 3, copy) == -EBADMSG, "a flipped bit in a record fails its checksum");
	ok(pool_update(&p, 3, NULL, NULL) == -EBADMSG && pool_slot(&p, 3)->version == 1,
	   "an update of a corrupt record is refused and changes nothing");
	pool_slot(&p, 3)->payload[4] ^= 1;

	r = pool_verify(&p, &v);
	ok(r == 0 && v.found == n && !v.missing && !v.bad && v.updates == 1,
	   "verify finds %" PRIu64 " keys, none missing or bad, 1 update", v.found);

	while ((r = pool_insert(&p, n++)) == 0)
		;
	ok(r == -ENOSPC && pool_nrecords(&p) == p.nslots, "a full pool refuses another key");
	munmap(base, SIZE);
	free(copy);
}

struct open_case {
	void *base;
	uint64_t mapped;
};

static int open_it(void *arg)
{
	struct open_case *c = arg;
	struct pool p;

	return pool_open(c->base, c->mapped, "shm:/dev/shm/test", &p);
}

static void test_open(void)
{
	int fd = memfd_create("pool", MFD_CLOEXEC);
	void *a, *b;
	struct pool pa, pb;
	struct pool_header *h;
	struct record *copy = malloc(256);
	struct open_case c;
	uint64_t good;
	bool opened;

	if (fd < 0 || ftruncate(fd, SIZE) < 0)
		exit(2);
	a = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	b = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	c = (struct open_case){ b, SIZE };
	h = b;

	pool_format(a, SIZE, 256, 1, &pa);
	for (uint64_t k = 0; k < 100; k++)
		pool_insert(&pa, k);
	expect_refusal(open_it, &c, -EPROTO, "not loaded", "a pool without the loaded flag is refused");
	pool_set_loaded(&pa);
	opened = pool_open(b, SIZE, "b", &pb) == 0;
	ok(opened && a != b, "the pool opens through a second mapping at another address (%p, %p)",
	   a, b);
	ok(pool_read(&pb, 42, copy) == 0 && copy->key == 42,
	   "a key inserted through the first mapping reads through the second");

	memcpy(h->magic, "NOTAPOOL", 8);
	expect_refusal(open_it, &c, -EPROTO, "wrong magic \"NOTAPOOL\"",
		       "a wrong magic is refused, named");
	memcpy(h->magic, POOL_MAGIC, 8);

	h->version = 7;
	expect_refusal(open_it, &c, -EPROTO, "layout version 7",
		       "a wrong layout version is refused, named");
	h->version = POOL_VERSION;

	c.mapped = SIZE / 2;
	expect_refusal(open_it, &c, -EPROTO, "truncated", "a mapping smaller than the pool is refused");
	c.mapped = 100;
	expect_refusal(open_it, &c, -EPROTO, "too small", "a mapping smaller than a header is refused");
	c.mapped = SIZE;

	good = h->nbuckets;
	h->nbuckets = good * 2;
	expect_refusal(open_it, &c, -EPROTO, "corrupt header",
		       "a geometry that does not follow from the size is refused");
	h->nbuckets = good;
	h->nrecords = h->nslots + 1;
	expect_refusal(open_it, &c, -EPROTO, "corrupt header", "more records than slots is refused");
	h->nrecords = 100;
	ok(pool_open(b, SIZE, "b", &pb) == 0, "the repaired header opens again");
	munmap(a, SIZE);
	munmap(b, SIZE);
	free(copy);
	close(fd);
}

int main(void)
{
	test_geometry();
	test_geometry_errors();
	test_records();
	test_open();
	return tap_finish();
}

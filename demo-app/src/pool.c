/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <inttypes.h>

#include "mshare-common/log.h"
#include "pool.h"

_Static_assert(sizeof(struct pool_header) <= POOL_HEADER_SIZE, "header fits its page");
_Static_assert(sizeof(struct bucket) == 16, "buckets are 16 bytes");
_Static_assert(sizeof(POOL_MAGIC) == 8, "magic is 8 bytes");

static inline bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static inline uint64_t round_up(uint64_t x, uint64_t align)
{
	return (x + align - 1) / align * align;
}

int pool_geometry(uint64_t size, size_t record_size, struct pool_geometry *g)
{
	uint64_t fit, nbuckets = 1;

	if (!is_pow2(record_size) || record_size < RECORD_MIN_SIZE || record_size > RECORD_MAX_SIZE) {
		log_error("record size %zu: not a power of two from %u to %u bytes", record_size,
			  RECORD_MIN_SIZE, RECORD_MAX_SIZE);
		return -EINVAL;
	}
	if (size <= POOL_HEADER_SIZE + 2 * POOL_ALIGN + record_size)
		goto too_small;
	/* As many records as fit with a bucket each; then the power of two below. */
	fit = (size - POOL_HEADER_SIZE - POOL_ALIGN) / (record_size + sizeof(struct bucket));
	if (!fit)
		goto too_small;
	while (nbuckets <= fit / 2)
		nbuckets *= 2;
	g->nbuckets = nbuckets;
	g->buckets_off = POOL_HEADER_SIZE;
	g->records_off = round_up(g->buckets_off + nbuckets * sizeof(struct bucket), POOL_ALIGN);
	g->nslots = (size - g->records_off) / record_size;
	if (!g->nslots)
		goto too_small;
	return 0;

too_small:
	log_error("a pool of %" PRIu64 " bytes holds no record of %zu bytes", size, record_size);
	return -EINVAL;
}

static void attach(void *base, struct pool *p)
{
	struct pool_header *h = base;

	*p = (struct pool){
		.hdr = h,
		.buckets = (struct bucket *)((unsigned char *)base + h->buckets_off),
		.records = (unsigned char *)base + h->records_off,
		.bucket_mask = h->nbuckets - 1,
		.record_size = h->record_size,
		.nslots = h->nslots,
	};
}

int pool_format(void *base, uint64_t size, size_t record_size, uint64_t salt, struct pool *p)
{
	struct pool_geometry g;
	struct pool_header *h = base;
	int r;

	r = pool_geometry(size, record_size, &g);
	if (r < 0)
		return r;
	/* Unpublish first: a reader that opens it while we work sees no pool. */
	__atomic_store_n(&h->loaded, 0, __ATOMIC_RELEASE);
	memset(h->magic, 0, sizeof(h->magic));
	memset((unsigned char *)base + POOL_HEADER_SIZE, 0, size - POOL_HEADER_SIZE);
	memset(base, 0, POOL_HEADER_SIZE);
	*h = (struct pool_header){
		.version = POOL_VERSION,
		.header_size = POOL_HEADER_SIZE,
		.pool_size = size,
		.record_size = (uint32_t)record_size,
		.bucket_size = sizeof(struct bucket),
		.nbuckets = g.nbuckets,
		.nslots = g.nslots,
		.buckets_off = g.buckets_off,
		.records_off = g.records_off,
		.salt = salt,
	};
	memcpy(h->magic, POOL_MAGIC, sizeof(h->magic));
	attach(base, p);
	return 0;
}

/* The magic as text for a message: printable characters, others as '.'. */
static void magic_text(const char *magic, char out[9])
{
	for (int i = 0; i < 8; i++)
		out[i] = isprint((unsigned char)magic[i]) ? magic[i] : '.';
	out[8] = '\0';
}

int pool_open(void *base, uint64_t mapped, const char *what, struct pool *p)
{
	const struct pool_header *h = base;
	struct pool_geometry g;
	char text[9];

	if (mapped < POOL_HEADER_SIZE) {
		log_error("%s: %" PRIu64 " bytes, too small to hold a pool", what, mapped);
		return -EPROTO;
	}
	if (memcmp(h->magic, POOL_MAGIC, sizeof(h->magic))) {
		magic_text(h->magic, text);
		log_error("%s: not a pool: wrong magic \"%s\" (expected \"%s\"); load it with demo-load",
			  what, text, POOL_MAGIC);
		return -EPROTO;
	}
	if (h->version != POOL_VERSION) {
		log_error("%s: pool layout version %" PRIu32 ", but this program reads version %u; "
			  "load it again with this version's demo-load",
			  what, h->version, POOL_VERSION);
		return -EPROTO;
	}
	if (h->header_size != POOL_HEADER_SIZE || h->bucket_size != sizeof(struct bucket)) {
		log_error("%s: pool header size %" PRIu32 " or bucket size %" PRIu32
			  " is not %u and %zu: corrupt header",
			  what, h->header_size, h->bucket_size, POOL_HEADER_SIZE, sizeof(struct bucket));
		return -EPROTO;
	}
	if (h->pool_size > mapped) {
		log_error("%s: the pool header says %" PRIu64 " bytes, but only %" PRIu64
			  " are mapped: truncated backing",
			  what, h->pool_size, mapped);
		return -EPROTO;
	}
	if (pool_geometry(h->pool_size, h->record_size, &g) < 0 || g.nbuckets != h->nbuckets ||
	    g.nslots != h->nslots || g.buckets_off != h->buckets_off ||
	    g.records_off != h->records_off || h->nrecords > h->nslots) {
		log_error("%s: pool geometry (%" PRIu64 " buckets, %" PRIu64 " slots, %" PRIu64
			  " records) does not match its size and record size: corrupt header",
			  what, h->nbuckets, h->nslots, h->nrecords);
		return -EPROTO;
	}
	if (__atomic_load_n(&h->loaded, __ATOMIC_ACQUIRE) != 1) {
		log_error("%s: the pool is not loaded (demo-load has not finished, or failed)", what);
		return -EPROTO;
	}
	attach(base, p);
	return 0;
}

static inline struct bucket *bucket_of(const struct pool *p, uint64_t key)
{
	return &p->buckets[mix64(key) & p->bucket_mask];
}

/* The record of key in b's chain, or NULL; under b's latch. */
static struct record *find(const struct pool *p, const struct bucket *b, uint64_t key)
{
	uint64_t link = b->head;
	unsigned steps = 0;

	while (link && link <= p->nslots) {
		struct record *r = pool_slot(p, link - 1);

		if (r->key == key)
			return r;
		link = r->next;
		if (++steps > p->nslots) /* a corrupt chain that loops */
			break;
	}
	return NULL;
}

int pool_insert(struct pool *p, uint64_t key)
{
	struct bucket *b = bucket_of(p, key);
	struct record *r;
	uint64_t slot;

	latch_write_lock(&b->latch, &p->stats);
	if (find(p, b, key)) {
		latch_write_unlock(&b->latch);
		return -EEXIST;
	}
	slot = __atomic_fetch_add(&p->hdr->nrecords, 1, __ATOMIC_RELAXED);
	if (slot >= p->nslots) {
		__atomic_fetch_sub(&p->hdr->nrecords, 1, __ATOMIC_RELAXED);
		latch_write_unlock(&b->latch);
		return -ENOSPC;
	}
	r = pool_slot(p, slot);
	r->key = key;
	r->version = 1;
	record_fill(r, p->record_size, p->hdr->salt);
	record_seal(r, p->record_size);
	r->next = b->head;
	b->head = slot + 1;
	latch_write_unlock(&b->latch);
	return 0;
}

void pool_set_loaded(struct pool *p)
{
	__atomic_store_n(&p->hdr->loaded, 1, __ATOMIC_RELEASE);
}

int pool_read(struct pool *p, uint64_t key, struct record *out)
{
	struct bucket *b = bucket_of(p, key);
	struct record *r;

	latch_read_lock(&b->latch, &p->stats);
	r = find(p, b, key);
	if (r)
		memcpy(out, r, p->record_size);
	latch_read_unlock(&b->latch);
	if (!r)
		return -ENOENT;
	return record_valid(out, p->record_size) ? 0 : -EBADMSG;
}

int pool_update(struct pool *p, uint64_t key, record_change_fn change, void *arg)
{
	struct bucket *b = bucket_of(p, key);
	struct record *r;
	int ret = 0;

	latch_write_lock(&b->latch, &p->stats);
	r = find(p, b, key);
	if (!r)
		ret = -ENOENT;
	else if (!record_valid(r, p->record_size))
		ret = -EBADMSG;
	else {
		r->version++;
		if (change)
			change(r, p->record_size, arg);
		record_seal(r, p->record_size);
	}
	latch_write_unlock(&b->latch);
	return ret;
}

int pool_verify(struct pool *p, struct pool_verify *v)
{
	_cleanup_free_ struct record *copy = malloc(p->record_size);
	uint64_t key, n = pool_nrecords(p);

	if (!copy)
		return log_error_errno(-ENOMEM, "verifying the pool: %m");
	*v = (struct pool_verify){ 0 };
	for (key = 0; key < n; key++) {
		int r = pool_read(p, key, copy);

		if (r == -ENOENT)
			v->missing++;
		else if (r < 0)
			v->bad++;
		else {
			v->found++;
			v->updates += copy->version - 1;
		}
	}
	return 0;
}

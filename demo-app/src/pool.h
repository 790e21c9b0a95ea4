/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The buffer pool: a keyed table in one shared region, laid out with
 * offsets only, so that every process may map it at another address.
 *
 *   offset 0             header (one 4 KiB page): magic, layout version,
 *                        sizes, geometry, record count, loaded flag
 *   buckets_off (4096)   nbuckets buckets of 16 bytes: a latch and the
 *                        head of the bucket's chain (open hashing)
 *   records_off          nslots records of record_size bytes (page aligned)
 *
 * nbuckets is the largest power of two not above the number of records
 * that fit, so a full pool has one to two records per bucket. A key goes
 * to bucket mix64(key) & (nbuckets - 1); the chain links records by slot
 * number plus one (0 ends it). Every bucket has its own latch: readers of
 * a key share it, an update holds it alone; there is no lock over the whole
 * pool. The loader inserts keys 0 .. nrecords-1 into slots 0 .. nrecords-1
 * and sets loaded last.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "latch.h"
#include "record.h"

#define POOL_MAGIC "MSHPOOL"	/* 7 characters and a NUL: 8 bytes */
#define POOL_VERSION 1u
#define POOL_HEADER_SIZE 4096u
#define POOL_ALIGN 4096u

struct pool_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;	/* POOL_HEADER_SIZE */
	uint64_t pool_size;	/* bytes from offset 0 that the pool spans */
	uint32_t record_size;	/* a power of two, RECORD_MIN_SIZE..RECORD_MAX_SIZE */
	uint32_t bucket_size;	/* sizeof(struct bucket) */
	uint64_t nbuckets;
	uint64_t nslots;
	uint64_t buckets_off;
	uint64_t records_off;
	uint64_t nrecords;	/* slots in use; keys 0 .. nrecords-1 */
	uint32_t loaded;	/* 1 once the loader has finished */
	uint32_t reserved;
	uint64_t salt;		/* the loader's seed for the payloads */
};

struct bucket {
	struct latch latch;
	uint32_t reserved;
	uint64_t head;		/* first slot of the chain, plus one; 0: empty */
};

struct pool_geometry {
	uint64_t nbuckets;
	uint64_t nslots;
	uint64_t buckets_off;
	uint64_t records_off;
};

/* A process's handle on a mapped pool. */
struct pool {
	struct pool_header *hdr;
	struct bucket *buckets;
	unsigned char *records;
	uint64_t bucket_mask;
	size_t record_size;
	uint64_t nslots;
	struct latch_stats stats;
};

/*
 * Where things go in a pool of size bytes with records of record_size:
 * -EINVAL (logged) if record_size is not a power of two in range or the
 * size holds no record.
 */
int pool_geometry(uint64_t size, size_t record_size, struct pool_geometry *g);

/*
 * Lay out an empty pool in [base, base + size): zero everything past the
 * header (which writes every page of it once), then write the header with
 * loaded 0. Fills *p.
 */
int pool_format(void *base, uint64_t size, size_t record_size, uint64_t salt, struct pool *p);

/*
 * Check the header of the pool at base, of which mapped bytes are mapped,
 * and fill *p. what names the backing in the messages. -EPROTO (logged,
 * naming what is wrong) for a wrong magic, layout version, header or
 * geometry, a pool larger than the mapping, or one not loaded.
 */
int pool_open(void *base, uint64_t mapped, const char *what, struct pool *p);

/* Add key in the next free slot, with version 1. -ENOSPC, -EEXIST. */
int pool_insert(struct pool *p, uint64_t key);

/* Publish the pool: set loaded (release), after every insert. */
void pool_set_loaded(struct pool *p);

static inline uint64_t pool_nrecords(const struct pool *p)
{
	return __atomic_load_n(&p->hdr->nrecords, __ATOMIC_ACQUIRE);
}

/* The record in slot, which must be below nslots. */
static inline struct record *pool_slot(const struct pool *p, uint64_t slot)
{
	return (struct record *)(p->records + slot * p->record_size);
}

/*
 * Copy the record of key into out (record_size bytes) under the bucket's
 * latch, shared. -ENOENT if absent, -EBADMSG if the copy's checksum is
 * wrong (a torn or corrupt record).
 */
int pool_read(struct pool *p, uint64_t key, struct record *out);

/*
 * Change the record of key under the bucket's latch, held alone: call
 * change (if not NULL) on it, then increment its version and reseal it.
 * -ENOENT, or -EBADMSG (and nothing changed) if its checksum was wrong.
 */
typedef void (*record_change_fn)(struct record *r, size_t record_size, void *arg);
int pool_update(struct pool *p, uint64_t key, record_change_fn change, void *arg);

/* What pool_verify() found. */
struct pool_verify {
	uint64_t found;		/* keys found with a valid checksum */
	uint64_t missing;	/* keys 0 .. nrecords-1 not found */
	uint64_t bad;		/* found with a wrong checksum */
	uint64_t updates;	/* sum of (version - 1): updates the pool holds */
};

/* Look up every key 0 .. nrecords-1 (under the latches). -ENOMEM. */
int pool_verify(struct pool *p, struct pool_verify *v);

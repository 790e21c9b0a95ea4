/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A record of the table: a fixed-size row with a key, a version that every
 * update increments, the chain link of the hash index, a checksum, and a
 * payload. The payload is a function of (key, version, salt), so that a
 * reader can tell a whole record from a torn one by its checksum.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct record {
	uint64_t key;
	uint64_t version;	/* 1 when loaded, +1 per update */
	uint64_t next;		/* next slot in the bucket's chain, plus one; 0 ends it */
	uint64_t checksum;	/* of key, version and payload */
	uint64_t payload[];	/* record_size - 32 bytes */
};

#define RECORD_HEADER_SIZE ((size_t)offsetof(struct record, payload))
#define RECORD_MIN_SIZE 64
#define RECORD_MAX_SIZE 65536

static inline size_t record_payload_words(size_t record_size)
{
	return (record_size - RECORD_HEADER_SIZE) / sizeof(uint64_t);
}

/* The checksum a record of record_size bytes should carry. */
uint64_t record_checksum(const struct record *r, size_t record_size);

/* Whether its checksum matches. */
bool record_valid(const struct record *r, size_t record_size);

/*
 * Fill the payload from (key, version, salt); key and version must be set.
 * The checksum is left to record_seal(), next alone.
 */
void record_fill(struct record *r, size_t record_size, uint64_t salt);

/* Set the checksum after a change to the payload. */
void record_seal(struct record *r, size_t record_size);

/* A 64-bit mix (splitmix64's finaliser): hashing keys, seeding. */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

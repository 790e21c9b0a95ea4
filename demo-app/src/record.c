/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "record.h"

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t record_checksum(const struct record *r, size_t record_size)
{
	size_t i, n = record_payload_words(record_size);
	uint64_t h = 0x6d73686172652121ull ^ r->key;

	h = rotl(h ^ (r->version * 0x9e3779b97f4a7c15ull), 27) * 0xc2b2ae3d27d4eb4full;
	for (i = 0; i < n; i++)
		h = rotl(h ^ (r->payload[i] * 0x9e3779b97f4a7c15ull), 31) * 0xc2b2ae3d27d4eb4full;
	return mix64(h);
}

bool record_valid(const struct record *r, size_t record_size)
{
	return r->checksum == record_checksum(r, record_size);
}

void record_fill(struct record *r, size_t record_size, uint64_t salt)
{
	size_t i, n = record_payload_words(record_size);
	uint64_t x = mix64(r->key ^ mix64(r->version ^ mix64(salt)));

	for (i = 0; i < n; i++) {
		x += 0x9e3779b97f4a7c15ull;
		r->payload[i] = mix64(x);
	}
}

void record_seal(struct record *r, size_t record_size)
{
	r->checksum = record_checksum(r, record_size);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Random numbers and the key distributions of the workload.
 *
 * rng: xoshiro256** seeded through splitmix64.
 *
 * zipf: YCSB's zipfian generator (Gray et al., "Quickly generating
 * billion-record synthetic databases", SIGMOD 1994): rank i (0-based) of n
 * comes with probability proportional to 1 / (i + 1)^theta. Its constant
 * zeta(n, theta) = sum 1/i^theta, i = 1..n, is summed exactly up to
 * ZETA_EXACT terms and past that by the Euler-Maclaurin formula, so that
 * setting up a generator over 16 million keys costs microseconds, not a
 * pass over every key in every worker. As in YCSB's scrambled zipfian, the
 * rank is then hashed to a key, so that the popular keys are spread over
 * the pool rather than packed into its first pages.
 */

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);

/* Uniform in [0, n), n > 0. */
uint64_t rng_below(struct rng *r, uint64_t n);

/* Uniform in [0, 1). */
double rng_unit(struct rng *r);

#define ZETA_EXACT 1000u

/* zeta(n, theta) = sum over i = 1..n of i^-theta. */
double zeta(uint64_t n, double theta);

struct zipf {
	uint64_t n;
	double theta, alpha, zetan, eta, half_pow_theta;
};

/* theta in (0, 1) (YCSB's generator needs theta < 1); n > 0. -EINVAL. */
int zipf_init(struct zipf *z, uint64_t n, double theta);

/* A rank in [0, n): 0 the most popular. */
uint64_t zipf_rank(const struct zipf *z, struct rng *r);

/* A key in [0, n): the rank, scrambled. */
uint64_t zipf_key(const struct zipf *z, struct rng *r);

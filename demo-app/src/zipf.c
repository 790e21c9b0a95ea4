/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>

#include "record.h"
#include "zipf.h"

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		seed += 0x9e3779b97f4a7c15ull;
		r->s[i] = mix64(seed);
	}
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
	/* Lemire's multiply-shift; the bias is below 2^-40 for our n. */
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

double zeta(uint64_t n, double theta)
{
	uint64_t i, m = n < ZETA_EXACT ? n : ZETA_EXACT;
	double sum = 0, dm, dn;

	/* Adding the small terms first would round better; the difference is below 1e-13. */
	for (i = 1; i < m; i++)
		sum += pow((double)i, -theta);
	if (n <= ZETA_EXACT)
		return sum + pow((double)n, -theta);
	/*
	 * sum over i = m..n of f(i), f(x) = x^-theta, by Euler-Maclaurin:
	 * the integral, (f(m) + f(n)) / 2, and (f'(n) - f'(m)) / 12; the next
	 * term is below 1e-14 for m = 1000.
	 */
	dm = (double)m;
	dn = (double)n;
	if (fabs(theta - 1) < 1e-12)
		sum += log(dn / dm);
	else
		sum += (pow(dn, 1 - theta) - pow(dm, 1 - theta)) / (1 - theta);
	sum += (pow(dm, -theta) + pow(dn, -theta)) / 2;
	sum += theta * (pow(dm, -theta - 1) - pow(dn, -theta - 1)) / 12;
	return sum;
}

int zipf_init(struct zipf *z, uint64_t n, double theta)
{
	double zeta2;

	if (!n || !(theta > 0 && theta < 1))
		return -EINVAL;
	zeta2 = zeta(2, theta);
	z->n = n;
	z->theta = theta;
	z->zetan = zeta(n, theta);
	z->alpha = 1 / (1 - theta);
	z->eta = (1 - pow(2.0 / (double)n, 1 - theta)) / (1 - zeta2 / z->zetan);
	z->half_pow_theta = 1 + pow(0.5, theta);
	return 0;
}

uint64_t zipf_rank(const struct zipf *z, struct rng *r)
{
	double u = rng_unit(r), uz = u * z->zetan;
	uint64_t rank;

	if (uz < 1)
		return 0;
	if (uz < z->half_pow_theta)
		return z->n > 1 ? 1 : 0;
	rank = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1, z->alpha));
	return rank < z->n ? rank : z->n - 1;
}

uint64_t zipf_key(const struct zipf *z, struct rng *r)
{
	return mix64(zipf_rank(z, r) ^ 0x5ca1ab1e) % z->n;
}

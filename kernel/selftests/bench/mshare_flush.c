// SPDX-License-Identifier: GPL-2.0
/*
 * What a change to an mshare region costs its owner as the number of
 * attached processes grows, against the same change to plain shared memory
 * mapped by as many processes.
 *
 * Every point is one run of N sharers, forked by this process:
 *   mshare unmap:   the sharers attach the region and read a 2 MiB object
 *                   in it; the owner times mshare_unmap() of the object
 *                   (and maps it again, untimed, for the next repetition).
 *   mshare protect: the same sharers; the owner times mshare_protect() of
 *                   the object to read-only (and back, untimed).
 *   plain unmap:    the sharers map a 2 MiB memfd MAP_SHARED and read every
 *                   page; the owner times fallocate(PUNCH_HOLE) of it,
 *                   which unmaps it from every sharer.
 *   plain protect:  the sharers map the memfd; each times its own
 *                   mprotect() to read-only: plain shared memory has no
 *                   call that changes every process, so the cost is the
 *                   sum of theirs.
 * A repetition's time is the call's (CLOCK_MONOTONIC); a point reports the
 * median, 90th percentile and minimum over the repetitions. The sharers
 * sleep in read() while the owner works: what is measured is the work of
 * finding and flushing their TLBs, not of interrupting them.
 *
 * With --spin the sharers run instead: the owner stays on CPU 0 and sharer
 * i spins reading the memory on CPU 1 + i % (CPUs - 1), so a change must
 * interrupt every CPU that runs one. Only the protect points are run (a
 * spinning sharer would fault on an unmapped object).
 *
 * Usage: mshare_flush [--sharers 1,16,256,1024] [--reps N] [--ways LIST]
 *                     [--spin]
 * Prints TAP, one test a point, and each point's record as
 *   # MSHARE-BENCH-FLUSH {"op":..., "way":..., "sharers":..., ...}
 * for scripts/bench.sh --flush. Times under TCG are emulation figures:
 * compare the ways and the sharer counts with each other.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "mshare_util.h"

#define OBJ_SIZE	(2UL << 20)
#define MAX_POINTS	16
#define MAX_REPS	1000

enum way { WAY_MSHARE, WAY_PLAIN };
enum op { OP_UNMAP, OP_PROTECT };

static const char *const way_name[] = { "mshare", "plain" };
static const char *const op_name[] = { "unmap", "protect" };

/* What a sharer is told to do, one byte on its command pipe. */
enum { CMD_TOUCH = 't', CMD_PROTECT = 'p', CMD_EXIT = 'x' };

struct crowd {
	int n;
	pid_t *pids;
	int *cmd;	/* write end of each sharer's command pipe */
	int ack;	/* read end of the pipe every sharer answers on */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void touch(volatile const char *p, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += 4096)
		(void)p[off];
}

/*
 * A sharer: map the memory (a window onto the region, or the memfd), read
 * it, then obey commands until told to exit. Answers each command with a
 * uint64_t on the ack pipe: 0, or the ns its mprotect() took.
 */
static int sharer(enum way way, int fd, int cmd, int ack, int spin_cpu)
{
	size_t off = 0;
	ssize_t r;
	char *p;
	char c;

	if (way == WAY_MSHARE)
		p = sys_mshare_attach(fd, 0, 0, NULL, 0);
	else
		p = mmap(NULL, OBJ_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	touch(p, OBJ_SIZE);
	if (spin_cpu >= 0 && (pin_to_cpu(spin_cpu) ||
			      fcntl(cmd, F_SETFL, O_NONBLOCK)))
		return 1;
	for (;;) {
		uint64_t ns = 0, t;

		/* Spinning, read a page between polls of the command pipe. */
		while ((r = read(cmd, &c, 1)) < 0 && errno == EAGAIN) {
			(void)((volatile char *)p)[off];
			off = (off + 4096) % OBJ_SIZE;
		}
		if (r != 1 || c == CMD_EXIT)
			return 0;
		if (c == CMD_TOUCH) {
			touch(p, OBJ_SIZE);
		} else if (c == CMD_PROTECT) {
			t = now_ns();
			if (mprotect(p, OBJ_SIZE, PROT_READ))
				return 1;
			ns = now_ns() - t;
			if (mprotect(p, OBJ_SIZE, PROT_READ | PROT_WRITE))
				return 1;
		}
		if (write(ack, &ns, sizeof(ns)) != sizeof(ns))
			return 1;
	}
}

static void crowd_end(struct crowd *c)
{
	char x = CMD_EXIT;
	int i, status;

	for (i = 0; i < c->n; i++) {
		if (write(c->cmd[i], &x, 1) != 1)
			kill(c->pids[i], SIGKILL);
		close(c->cmd[i]);
	}
	for (i = 0; i < c->n; i++)
		waitpid(c->pids[i], &status, 0);
	if (c->ack >= 0)
		close(c->ack);
	free(c->pids);
	free(c->cmd);
	c->n = 0;
}

/*
 * Fork n sharers on fd; each has read the memory once it has answered the
 * first CMD_TOUCH. With ncpus > 1 they spin on CPUs 1 to ncpus - 1.
 * Returns 0, or -errno with the sharers gone.
 */
static int crowd_start(struct crowd *c, int n, enum way way, int fd,
		       int ncpus)
{
	int ackp[2] = { -1, -1 }, i, err;

	c->n = 0;
	c->pids = calloc(n, sizeof(*c->pids));
	c->cmd = calloc(n, sizeof(*c->cmd));
	c->ack = -1;
	if (!c->pids || !c->cmd || pipe2(ackp, O_CLOEXEC))
		goto fail;
	c->ack = ackp[0];
	for (i = 0; i < n; i++) {
		int p[2], j;
		pid_t pid;

		if (pipe2(p, O_CLOEXEC))
			goto fail;
		pid = fork();
		if (pid < 0) {
			close(p[0]);
			close(p[1]);
			goto fail;
		}
		if (pid == 0) {
			/* Only the owner may hold the others' command pipes. */
			for (j = 0; j < c->n; j++)
				close(c->cmd[j]);
			close(p[1]);
			_exit(sharer(way, fd, p[0], ackp[1],
				     ncpus > 1 ? 1 + i % (ncpus - 1) : -1));
		}
		close(p[0]);
		c->pids[i] = pid;
		c->cmd[i] = p[1];
		c->n++;
	}
	close(ackp[1]);
	return 0;
fail:
	err = -errno;
	if (ackp[1] >= 0)
		close(ackp[1]);
	crowd_end(c);
	return err;
}

/*
 * Send cmd to every sharer and wait for all answers; *sum is the sum of
 * what they answered. Returns 0 or -errno (EPIPE: a sharer died).
 */
static int crowd_round(struct crowd *c, char cmd, uint64_t *sum)
{
	uint64_t v;
	int i;

	*sum = 0;
	for (i = 0; i < c->n; i++)
		if (write(c->cmd[i], &cmd, 1) != 1)
			return -errno;
	for (i = 0; i < c->n; i++) {
		ssize_t r = read(c->ack, &v, sizeof(v));

		if (r != sizeof(v))
			return r < 0 ? -errno : -EPIPE;
		*sum += v;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The memory of a point: a region with the object, or a memfd. */
static int make_memory(enum way way, uint64_t align)
{
	int fd;

	if (way == WAY_PLAIN)
		return memfd_sized(OBJ_SIZE);
	fd = mshare_new(align, 0);
	if (fd < 0)
		return -1;
	if (sys_mshare_map_anon(fd, 0, OBJ_SIZE, MAP_POPULATE)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One repetition of op on the memory: *ns is what it took. 0 or -errno. */
static int one_rep(enum way way, enum op op, int fd, struct crowd *c, uint64_t *ns)
{
	uint64_t t, sum;
	int err;

	if (way == WAY_MSHARE && op == OP_UNMAP) {
		t = now_ns();
		if (sys_mshare_unmap(fd, 0, OBJ_SIZE))
			return -errno;
		*ns = now_ns() - t;
		return sys_mshare_map_anon(fd, 0, OBJ_SIZE, MAP_POPULATE) ? -errno : 0;
	}
	if (way == WAY_MSHARE) {
		t = now_ns();
		if (sys_mshare_protect(fd, 0, OBJ_SIZE, PROT_READ))
			return -errno;
		*ns = now_ns() - t;
		return sys_mshare_protect(fd, 0, OBJ_SIZE, PROT_READ | PROT_WRITE) ? -errno : 0;
	}
	if (op == OP_PROTECT)
		return crowd_round(c, CMD_PROTECT, ns);
	/* Every sharer maps every page again before the hole is punched. */
	err = crowd_round(c, CMD_TOUCH, &sum);
	if (err)
		return err;
	t = now_ns();
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, OBJ_SIZE))
		return -errno;
	*ns = now_ns() - t;
	return 0;
}

static void point(enum way way, enum op op, int n, int reps, uint64_t align,
		  int ncpus)
{
	uint64_t ns[MAX_REPS], sum;
	struct crowd c;
	int fd, i, err;

	fd = make_memory(way, align);
	if (fd < 0) {
		ksft_test_result_fail("%s %s, %d sharers: memory: %s\n",
				      way_name[way], op_name[op], n, strerror(errno));
		return;
	}
	err = crowd_start(&c, n, way, fd, ncpus);
	if (!err)
		err = crowd_round(&c, CMD_TOUCH, &sum);
	for (i = 0; !err && i < reps; i++)
		err = one_rep(way, op, fd, &c, &ns[i]);
	if (c.n)
		crowd_end(&c);
	close(fd);
	if (err) {
		ksft_test_result_fail("%s %s, %d sharers: %s\n", way_name[way],
				      op_name[op], n, strerror(-err));
		return;
	}
	qsort(ns, reps, sizeof(ns[0]), cmp_u64);
	ksft_print_msg("MSHARE-BENCH-FLUSH {\"op\":\"%s\",\"way\":\"%s\",\"sharers\":%d,"
		       "\"bytes\":%lu,\"reps\":%d,\"median_ns\":%llu,\"p90_ns\":%llu,"
		       "\"min_ns\":%llu,\"spin\":%s}\n", op_name[op], way_name[way], n,
		       OBJ_SIZE, reps, (unsigned long long)ns[reps / 2],
		       (unsigned long long)ns[reps * 9 / 10],
		       (unsigned long long)ns[0], ncpus > 1 ? "true" : "false");
	ksft_test_result_pass("%s %s of 2 MiB, %d sharers: median %llu us\n",
			      way_name[way], op_name[op], n,
			      (unsigned long long)ns[reps / 2] / 1000);
}

/* "1,16,256" into counts[]; returns how many, or -1. */
static int parse_counts(const char *s, int *counts)
{
	int n = 0;
	char *end;

	while (*s && n < MAX_POINTS) {
		long v = strtol(s, &end, 10);

		if (end == s || v < 1 || v > 100000 || (*end && *end != ','))
			return -1;
		counts[n++] = v;
		s = *end ? end + 1 : end;
	}
	return *s ? -1 : n;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sharers", required_argument, NULL, 's' },
		{ "reps", required_argument, NULL, 'r' },
		{ "ways", required_argument, NULL, 'w' },
		{ "spin", no_argument, NULL, 'S' },
		{}
	};
	int counts[MAX_POINTS] = { 1, 16, 256, 1024 }, ncounts = 4;
	int reps = 21, i, c, ways = 3, ncpus = 0, nops = 2;
	uint64_t align = 0;
	struct rlimit rl;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			ncounts = parse_counts(optarg, counts);
			if (ncounts < 1)
				ksft_exit_fail_msg("--sharers %s: expected counts such as 1,16,256\n",
						   optarg);
			break;
		case 'r':
			reps = atoi(optarg);
			if (reps < 1 || reps > MAX_REPS)
				ksft_exit_fail_msg("--reps %s: expected 1 to %d\n",
						   optarg, MAX_REPS);
			break;
		case 'w':
			ways = (strstr(optarg, "mshare") ? 1 : 0) |
			       (strstr(optarg, "plain") ? 2 : 0);
			if (!ways)
				ksft_exit_fail_msg("--ways %s: expected mshare, plain or both\n",
						   optarg);
			break;
		case 'S':
			ncpus = sysconf(_SC_NPROCESSORS_ONLN);
			if (ncpus < 2)
				ksft_exit_fail_msg("--spin: the sharers need a CPU besides the owner's\n");
			break;
		default:
			ksft_exit_fail_msg("usage: %s [--sharers 1,16,256,1024] [--reps N] [--ways mshare,plain] [--spin]\n",
					   argv[0]);
		}
	}
	/* A pipe to every sharer: the owner holds one descriptor each. */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	ksft_print_header();
	/* A region's size is a multiple of the alignment msharefs reports. */
	if ((ways & 1) && (mshare_ensure_mounted() || mshare_read_info(&align)))
		ksft_exit_fail_msg("msharefs: %s\n", strerror(errno));
	if (ncpus && pin_to_cpu(0))
		ksft_exit_fail_msg("sched_setaffinity: %s\n", strerror(errno));
	if (ncpus)
		nops = 1;
	ksft_set_plan(ncounts * nops * __builtin_popcount(ways));
	for (i = 0; i < ncounts; i++) {
		enum way w;

		for (w = WAY_MSHARE; w <= WAY_PLAIN; w++) {
			if (!(ways & (1 << w)))
				continue;
			if (!ncpus)
				point(w, OP_UNMAP, counts[i], reps, align, 0);
			point(w, OP_PROTECT, counts[i], reps, align, ncpus);
		}
	}
	ksft_finished();
}

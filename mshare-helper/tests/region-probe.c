/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * region-probe: a client of a region descriptor it was handed (by
 * `mshare-ctl run`, which names it in $MSHARE_FD), for the in-guest tests.
 * It maps the region with mshare_attach() and reports what that cost this
 * process, so that the tests can show what the daemon's clients get.
 *
 *   region-probe [--fd=N | --request=NAME [--ro]] --bytes=N COMMAND
 *
 * The descriptor is $MSHARE_FD or --fd; with --request, the probe asks for
 * region NAME itself with mshare_request() (read-only with --ro), as a
 * workload in a container does. It is linked statically, so that it runs
 * in a container whose root holds nothing else.
 *
 * Commands (the first N bytes of the region are used; N is the size of the
 * object the configuration maps at offset 0):
 *   write SEED   map read-write, store a value derived from SEED and the page
 *                number in every page
 *   verify SEED  map read-only and check every page's value
 *   readonly     check the descriptor is read-only: a read-write window is
 *                refused with EACCES, a read-only one works, and a store
 *                through it kills a child with SIGSEGV
 *   hold SEED    map read-only, check every page, print "ready", then keep
 *                reading every page until killed (by the tests, or by the
 *                kernel with SIGSEGV once the region's owner is gone)
 *   control      check that this process, not the region's owner, cannot
 *                change the region: mshare_map() and mshare_unmap() fail
 *                with EPERM
 *
 * write, verify and readonly print one line, "faults=F pte_kb=K pages=P":
 * the minor faults the process took and the growth of its VmPTE while it
 * mapped and walked the region. Exit status 0 on success, 1 if a check
 * failed, 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mshare-common/errno-name.h"
#include "mshare-common/procstat.h"
#include "mshare.h"

struct probe {
	int fd;
	size_t bytes;
	long page;
	uint64_t seed;
};

/* What mapping and walking the region cost since before (sampled first),
 * as the tests compare it with what plain shared memory costs. */
static void cost_print(const struct proc_sample *before, const struct probe *p)
{
	struct proc_sample now;

	proc_sample(&now);
	printf("faults=%" PRIu64 " pte_kb=%" PRId64 " pages=%zu\n", now.minflt - before->minflt,
	       now.vmpte_kb - before->vmpte_kb, p->bytes / (size_t)p->page);
}

static uint64_t page_value(const struct probe *p, size_t i)
{
	return p->seed * 0x9e3779b97f4a7c15ull + i;
}

static volatile uint64_t *map_region(const struct probe *p, unsigned int flags)
{
	void *addr = mshare_attach(p->fd, 0, 0, NULL, flags);

	if (addr == MAP_FAILED) {
		fprintf(stderr, "region-probe: mshare_attach(fd %d, %s): %m\n", p->fd,
			flags & MSHARE_ATTACH_RDONLY ? "read-only" : "read-write");
		return NULL;
	}
	return addr;
}

static volatile uint64_t *page_word(volatile uint64_t *base, const struct probe *p, size_t i)
{
	return (volatile uint64_t *)((volatile char *)base + i * (size_t)p->page);
}

/* Returns the number of pages whose value is not the expected one. */
static size_t check_pages(volatile uint64_t *base, const struct probe *p)
{
	size_t bad = 0;

	for (size_t i = 0; i < p->bytes / (size_t)p->page; i++) {
		uint64_t v = *page_word(base, p, i);

		if (v != page_value(p, i) && bad++ == 0)
			fprintf(stderr, "region-probe: page %zu holds %#" PRIx64 ", expected %#" PRIx64 "\n",
				i, v, page_value(p, i));
	}
	return bad;
}

static int cmd_write(const struct probe *p)
{
	struct proc_sample c;
	volatile uint64_t *base;

	proc_sample(&c);
	base = map_region(p, 0);
	if (!base)
		return 1;
	for (size_t i = 0; i < p->bytes / (size_t)p->page; i++)
		*page_word(base, p, i) = page_value(p, i);
	cost_print(&c, p);
	return 0;
}

static int cmd_verify(const struct probe *p)
{
	struct proc_sample c;
	volatile uint64_t *base;
	size_t bad;

	proc_sample(&c);
	base = map_region(p, MSHARE_ATTACH_RDONLY);
	if (!base)
		return 1;
	bad = check_pages(base, p);
	cost_print(&c, p);
	if (bad)
		fprintf(stderr, "region-probe: %zu of %zu pages differ\n", bad, p->bytes / (size_t)p->page);
	return bad ? 1 : 0;
}

static int cmd_readonly(const struct probe *p)
{
	struct proc_sample c;
	volatile uint64_t *base;
	int status;
	pid_t pid;

	proc_sample(&c);
	if (mshare_attach(p->fd, 0, 0, NULL, 0) != MAP_FAILED) {
		fprintf(stderr, "region-probe: a read-write window of a read-only descriptor was allowed\n");
		return 1;
	}
	if (errno != EACCES) {
		fprintf(stderr, "region-probe: read-write window refused with %m, expected EACCES\n");
		return 1;
	}
	base = map_region(p, MSHARE_ATTACH_RDONLY);
	if (!base)
		return 1;
	(void)*base;
	pid = fork();
	if (pid < 0) {
		perror("region-probe: fork");
		return 1;
	}
	if (pid == 0) {
		*page_word(base, p, 0) = 1;
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("region-probe: waitpid");
		return 1;
	}
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV) {
		fprintf(stderr, "region-probe: a store through the read-only window did not fault (wait status %#x)\n",
			status);
		return 1;
	}
	cost_print(&c, p);
	return 0;
}

static int cmd_control(const struct probe *p)
{
	int map, unmap;

	map = mshare_map_object(p->fd, 0, p->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				-1, 0) < 0 ? errno : 0;
	unmap = mshare_unmap(p->fd, 0, p->bytes) < 0 ? errno : 0;
	printf("map=%s unmap=%s\n", map ? errno_to_name(map) : "allowed",
	       unmap ? errno_to_name(unmap) : "allowed");
	return map == EPERM && unmap == EPERM ? 0 : 1;
}

static int cmd_hold(const struct probe *p)
{
	volatile uint64_t *base = map_region(p, MSHARE_ATTACH_RDONLY);

	if (!base)
		return 1;
	if (check_pages(base, p))
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		for (size_t i = 0; i < p->bytes / (size_t)p->page; i++)
			(void)*page_word(base, p, i);
		usleep(10000);
	}
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -EINVAL : 0;
}

static int usage(int status)
{
	fprintf(status ? stderr : stdout,
		"Usage: region-probe [--fd=N | --request=NAME [--ro]] --bytes=N\n"
		"                    write SEED | verify SEED | readonly | hold SEED | control\n");
	return status;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "fd", required_argument, NULL, 'f' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "request", required_argument, NULL, 'r' },
		{ "ro", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct probe p = { .fd = -1, .page = sysconf(_SC_PAGESIZE) };
	const char *env = getenv("MSHARE_FD");
	const char *cmd, *request = NULL;
	bool ro = false;
	uint64_t v;
	int c;

	if (env && parse_u64(env, &v) == 0 && v <= INT32_MAX)
		p.fd = (int)v;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (c) {
		case 'f':
			if (parse_u64(optarg, &v) < 0 || v > INT32_MAX)
				return fprintf(stderr, "region-probe: bad --fd '%s'\n", optarg), 2;
			p.fd = (int)v;
			break;
		case 'b':
			if (parse_u64(optarg, &v) < 0 || v == 0 || v % (uint64_t)p.page)
				return fprintf(stderr, "region-probe: --bytes '%s' is not a multiple of the page size\n",
					       optarg), 2;
			p.bytes = v;
			break;
		case 'r':
			request = optarg;
			break;
		case 'o':
			ro = true;
			break;
		case 'h':
			return usage(0);
		default:
			return usage(2);
		}
	}
	if (!p.bytes || optind >= argc || (ro && !request))
		return usage(2);
	if (request) {
		p.fd = mshare_request(request, ro ? MSHARE_REQUEST_RDONLY : 0);
		if (p.fd < 0) {
			fprintf(stderr, "region-probe: mshare_request(%s, %s): %s (%m)\n", request,
				ro ? "read-only" : "read-write", errno_to_name(errno));
			return 1;
		}
	}
	if (p.fd < 0)
		return usage(2);
	cmd = argv[optind++];
	if (!strcmp(cmd, "readonly"))
		return optind == argc ? cmd_readonly(&p) : usage(2);
	if (!strcmp(cmd, "control"))
		return optind == argc ? cmd_control(&p) : usage(2);
	if (optind + 1 != argc || parse_u64(argv[optind], &p.seed) < 0)
		return usage(2);
	if (!strcmp(cmd, "write"))
		return cmd_write(&p);
	if (!strcmp(cmd, "verify"))
		return cmd_verify(&p);
	if (!strcmp(cmd, "hold"))
		return cmd_hold(&p);
	return usage(2);
}

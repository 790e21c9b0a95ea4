// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mshare-run: runs a command with libmshare-preload.so preloaded, so that
 * its large shared memory comes from mshare regions. Sets the library's
 * environment from the options, puts the library first in LD_PRELOAD
 * (keeping what is there) and executes the command.
 */

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mshare-common/macro.h"
#include "mshare-common/region-name.h"
#include "mshare-common/size.h"
#include "paths.h"

#define PROG "mshare-run"
#define LIB_NAME "libmshare-preload.so"
/* Where mshare-owner serves the host, and where a container finds its
 * channel (libmshare's default, MSHARE_REQUEST_SOCKET). */
#define HOST_SOCKET "/run/mshare/owner.sock"
#define CONTAINER_SOCKET "/run/mshare/mshare.sock"

struct options {
	const char *region;
	const char *socket;
	const char *min_size;
	bool strict;
	bool quiet;
	char **command;
};

static void help(void)
{
	printf("Usage: %s [OPTIONS] [--] COMMAND [ARG...]\n"
	       "\n"
	       "Run COMMAND with %s preloaded: its shared anonymous mappings\n"
	       "(and System V segments) of at least the minimum size come from mshare\n"
	       "regions, whose page tables its processes share.\n"
	       "\n"
	       "Options:\n"
	       "  -r, --region=NAME     serve from region NAME of mshare-owner (default: a\n"
	       "                        region of the program's own for each mapping)\n"
	       "  -s, --socket=PATH     mshare-owner's socket, for --region (default: $MSHARE_SOCKET,\n"
	       "                        else %s if it exists, else %s)\n"
	       "  -m, --min-size=SIZE   serve mappings of at least SIZE bytes (32M, 1G, 1GiB;\n"
	       "                        default: 32M)\n"
	       "      --strict          fail the program's call where a region cannot serve it,\n"
	       "                        instead of falling back to plain shared memory\n"
	       "  -q, --quiet           no notice when a region is first used\n"
	       "  -h, --help            show this help and exit\n"
	       "      --version         show the version and exit\n"
	       "\n"
	       "The library: $MSHARE_PRELOAD_LIB, else %s next to %s, else\n"
	       "%s.\n"
	       "See mshare-run(1) and libmshare-preload(7).\n",
	       PROG, LIB_NAME, CONTAINER_SOCKET, HOST_SOCKET, LIB_NAME, PROG, PRELOAD_LIB_PATH);
}

_noreturn_ _printf_(1, 2) static void usage_error(const char *format, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", PROG);
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", PROG);
	exit(2);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_STRICT = 0x100, OPT_VERSION };
	static const struct option longopts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "socket", required_argument, NULL, 's' },
		{ "min-size", required_argument, NULL, 'm' },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{}
	};
	uint64_t size;
	int c;

	/* "+": the options end at COMMAND, whose own options are its own;
	 * ":": a missing argument is told from an unknown option. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:r:s:m:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (!region_name_is_valid(optarg))
				usage_error("invalid region name '%s' (1 to 64 of A-Z a-z 0-9 _ . -, starting with a letter or a digit)",
					    optarg);
			o->region = optarg;
			break;
		case 's':
			if (!*optarg)
				usage_error("--socket needs a path");
			o->socket = optarg;
			break;
		case 'm':
			if (parse_size(optarg, &size) < 0)
				usage_error("invalid size '%s' for --min-size (bytes, or with a suffix: 32M, 1G, 1GiB)",
					    optarg);
			o->min_size = optarg;
			break;
		case OPT_STRICT:
			o->strict = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			help();
			exit(0);
		case OPT_VERSION:
			printf("%s %s\n", PROG, MSHARE_PRELOAD_VERSION);
			exit(0);
		case ':':
			usage_error("option '%s' needs an argument", argv[optind - 1]);
		default: {
			const char *arg = argv[optind - 1], *eq = strchr(arg, '=');

			if (strncmp(arg, "--", 2)) /* a short one: optopt */
				usage_error("invalid option '-%c'", optopt);
			if (optopt && eq)
				usage_error("option '%.*s' takes no argument", (int)(eq - arg), arg);
			usage_error("invalid option '%s'", arg);
		}
		}
	}
	if (optind >= argc)
		usage_error("no command given");
	o->command = argv + optind;
}

static bool is_file(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The library: $MSHARE_PRELOAD_LIB, next to this program, or installed. */
static int find_library(char *buf, size_t len)
{
	const char *env = getenv("MSHARE_PRELOAD_LIB");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		if (!realpath(env, buf))
			return -errno;
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash && (size_t)(slash - self) + 1 + strlen(LIB_NAME) < len) {
			snprintf(buf, len, "%.*s/%s", (int)(slash - self), self, LIB_NAME);
			if (is_file(buf))
				return 0;
		}
	}
	if (!is_file(PRELOAD_LIB_PATH))
		return -ENOENT;
	snprintf(buf, len, "%s", PRELOAD_LIB_PATH);
	return 0;
}

/* Whether list (LD_PRELOAD: separated by spaces or colons) names lib. */
static bool list_has(const char *list, const char *lib)
{
	size_t n = strlen(lib);

	for (const char *p = list; *p;) {
		size_t k = strcspn(p, " :");

		if (k == n && !strncmp(p, lib, n))
			return true;
		p += k;
		p += strspn(p, " :");
	}
	return false;
}

static int set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	_cleanup_free_ char *value = NULL;

	if (!old || !*old)
		return setenv("LD_PRELOAD", lib, 1) < 0 ? -errno : 0;
	if (list_has(old, lib))
		return 0;
	if (asprintf(&value, "%s:%s", lib, old) < 0)
		return -ENOMEM;
	return setenv("LD_PRELOAD", value, 1) < 0 ? -errno : 0;
}

/* --socket, or for --region without $MSHARE_SOCKET: the container's
 * channel if there is one, else the host's socket. */
static const char *socket_for(const struct options *o)
{
	const char *env = getenv("MSHARE_SOCKET");

	if (o->socket)
		return o->socket;
	if (!o->region || (env && *env))
		return NULL;
	return access(CONTAINER_SOCKET, F_OK) == 0 ? CONTAINER_SOCKET : HOST_SOCKET;
}

static int set_environment(const struct options *o, const char *lib)
{
	const char *sock = socket_for(o);
	int r;

	if ((o->region && setenv("MSHARE_PRELOAD_REGION", o->region, 1) < 0) ||
	    (sock && setenv("MSHARE_SOCKET", sock, 1) < 0) ||
	    (o->min_size && setenv("MSHARE_PRELOAD_MIN_SIZE", o->min_size, 1) < 0) ||
	    (o->strict && setenv("MSHARE_PRELOAD_STRICT", "1", 1) < 0) ||
	    (o->quiet && setenv("MSHARE_PRELOAD_QUIET", "1", 1) < 0))
		return -errno;
	r = set_preload(lib);
	return r;
}

int main(int argc, char **argv)
{
	struct options o = {};
	char lib[PATH_MAX];
	int r;

	parse_options(argc, argv, &o);
	r = find_library(lib, sizeof(lib));
	if (r < 0) {
		fprintf(stderr, "%s: cannot find %s (%s; set MSHARE_PRELOAD_LIB): %s\n", PROG, LIB_NAME,
			getenv("MSHARE_PRELOAD_LIB") ? "$MSHARE_PRELOAD_LIB" : PRELOAD_LIB_PATH,
			strerror(-r));
		return 1;
	}
	/* The dynamic linker splits LD_PRELOAD at spaces and colons. */
	if (strpbrk(lib, " :")) {
		fprintf(stderr, "%s: cannot preload %s: LD_PRELOAD cannot hold a path with a space or a colon\n",
			PROG, lib);
		return 1;
	}
	r = set_environment(&o, lib);
	if (r < 0) {
		fprintf(stderr, "%s: cannot set the environment: %s\n", PROG, strerror(-r));
		return 1;
	}
	execvp(o.command[0], o.command);
	r = errno;
	fprintf(stderr, "%s: cannot run %s: %s\n", PROG, o.command[0], strerror(r));
	return r == ENOENT ? 127 : 126;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mshare-oci-hook: the OCI runtime hook that gives a container the mshare
 * regions its annotation asks for. See docs/mshare-oci-hook.1 and
 * crun-hook/README.md.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <mshare-client.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "channel.h"
#include "mshare-common/clock.h"
#include "mshare-common/macro.h"
#include "mshare-common/strprintf.h"
#include "oci.h"
#include "owner.h"
#include "regions.h"
#include "report.h"

#define TIMEOUT_DEFAULT_USEC (5 * USEC_PER_SEC)
#define TIMEOUT_MAX_SEC 3600

struct hook {
	struct owner owner;
	struct oci_state state;
	struct oci_config config;
	bool have_config;
	json_t *annotations;	/* the state's, or config.json's: borrowed */
};

static void hook_done(struct hook *h)
{
	oci_state_done(&h->state);
	oci_config_done(&h->config);
}

static void help(void)
{
	printf("Usage: %s [OPTIONS] [STAGE]\n"
	       "\n"
	       "OCI runtime hook: registers a container whose annotation io.mshare.regions\n"
	       "asks for mshare regions with mshare-owner, which then serves the container\n"
	       "on a socket of its own inside it. Reads the container's state (JSON) on\n"
	       "standard input, as OCI runtimes pass it to hooks.\n"
	       "\n"
	       "Stages:\n"
	       "  createRuntime       create the container's channel and register it\n"
	       "  poststop            drop the container's registration\n"
	       "Without STAGE, the state's status tells it: \"creating\" or \"created\" is\n"
	       "createRuntime, \"stopped\" is poststop.\n"
	       "\n"
	       "Options:\n"
	       "      --socket=PATH       mshare-owner's socket (default %s)\n"
	       "      --timeout=SECONDS   how long mshare-owner may take to answer, from the\n"
	       "                          connection on (default 5)\n"
	       "  -h, --help              show this help\n"
	       "      --version           show the version\n"
	       "\n"
	       "Annotations:\n"
	       "  io.mshare.regions=NAME[:ro|:rw][,...]  the regions to ask for (default mode ro)\n"
	       "  io.mshare.socket=PATH   where the channel goes in the container (default\n"
	       "                          %s)\n"
	       "\n"
	       "Exit status 0 on success or when the container asks for no region, 1 on failure\n"
	       "(the runtime then fails the container), 2 on a usage error.\n",
	       HOOK_NAME, MSHARE_CLIENT_SOCKET_DEFAULT, CHANNEL_PATH_DEFAULT);
}

/* "5", "2.5", "0.1": positive, at most TIMEOUT_MAX_SEC. */
static int parse_timeout(const char *s, usec_t *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > TIMEOUT_MAX_SEC ||
	    s[strspn(s, "0123456789.")])
		return -EINVAL;
	*ret = (usec_t)(v * (double)USEC_PER_SEC);
	return *ret ? 0 : -EINVAL;
}

static int read_stdin(char **ret, size_t *ret_len)
{
	_cleanup_free_ char *buf = malloc(OCI_STATE_MAX + 1);
	size_t len = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf + len, OCI_STATE_MAX + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > OCI_STATE_MAX)
			return -EFBIG;
	}
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

static int load_state(struct hook *h)
{
	_cleanup_free_ char *buf = NULL, *error = NULL;
	size_t len = 0;
	int r;

	r = read_stdin(&buf, &len);
	if (r < 0) {
		error = strprintf("cannot read the container state on standard input: %s",
				  r == -EFBIG ? "longer than 1 MiB" : strerror(-r));
		return report_failure(NULL, r, error);
	}
	r = oci_state_parse(buf, len, &h->state, &error);
	if (r < 0)
		return report_failure(NULL, r, error);
	return 0;
}

/* config.json, once; its annotations stand in for the state's if it has none. */
static int load_config(struct hook *h)
{
	_cleanup_free_ char *error = NULL;
	int r;

	if (h->have_config)
		return 0;
	r = oci_config_load(h->state.bundle, &h->config, &error);
	if (r < 0)
		return report_failure(h->state.id, r, error);
	h->have_config = true;
	if (!h->annotations)
		h->annotations = h->config.annotations;
	return 0;
}

static int stage_create_runtime(struct hook *h)
{
	_cleanup_(region_list_done) struct region_list regions = {};
	_cleanup_(channel_done) struct channel channel = CHANNEL_NULL;
	_cleanup_free_ char *error = NULL, *message = NULL;
	_cleanup_close_ int pidfd = -1;
	const char *value, *path, *id = h->state.id;
	int r;

	h->annotations = h->state.annotations;
	if (!h->annotations || !oci_annotation(h->annotations, ANNOTATION_REGIONS)) {
		/* No annotations in the state: config.json has them, if any. */
		if (!h->annotations && (r = load_config(h)) < 0)
			return r;
		if (!oci_annotation(h->annotations, ANNOTATION_REGIONS))
			return 0; /* the container asks for nothing */
	}
	/* A pod's sandbox carries the pod's annotations but runs no workload. */
	if (oci_is_sandbox(h->annotations))
		return 0;
	value = oci_annotation(h->annotations, ANNOTATION_REGIONS);
	r = regions_parse(value, &regions, &error);
	if (r < 0) {
		message = strprintf("bad annotation %s=\"%s\": %s", ANNOTATION_REGIONS, value, strna(error));
		return report_failure(id, r, message);
	}
	path = oci_annotation(h->annotations, ANNOTATION_SOCKET) ?: CHANNEL_PATH_DEFAULT;
	r = channel_path_check(path, &error);
	if (r < 0) {
		message = strprintf("bad annotation %s=\"%s\": %s", ANNOTATION_SOCKET, path, strna(error));
		return report_failure(id, r, message);
	}
	r = load_config(h);
	if (r < 0)
		return r;
	if (h->state.pid <= 0)
		return report_failure(id, EINVAL, "the container state has no process id: is this hook "
				      "installed for the createRuntime stage?");

	pidfd = (int)syscall(SYS_pidfd_open, h->state.pid, 0);
	if (pidfd < 0) {
		r = -errno;
		message = strprintf("cannot open a pidfd of the container's process %d: %s",
				    (int)h->state.pid, strerror(-r));
		return report_failure(id, r, message);
	}
	r = channel_create(h->state.pid, pidfd, &h->config, path, &channel, &error);
	if (r < 0) {
		message = strprintf("cannot create the channel %s in the container: %s", path,
				    strna(error));
		return report_failure(id, r, message);
	}
	r = owner_register(&h->owner, id, oci_container_name(h->annotations), h->annotations, &regions,
			   channel.listen_fd, pidfd, &error);
	if (r < 0) {
		/* Nobody serves it: no socket stays in the container (its directories may). */
		(void)channel_remove(&channel);
		return report_failure(id, r, error);
	}
	return 0;
}

static int stage_poststop(struct hook *h)
{
	_cleanup_free_ char *error = NULL;
	int r;

	h->annotations = h->state.annotations;
	/* The runtime may have removed the bundle by now: without annotations
	 * in the state and without config.json, ask the daemon anyway. */
	if (!h->annotations)
		(void)oci_config_load(h->state.bundle, &h->config, &error);
	if (!h->annotations && h->config.root_path)
		h->annotations = h->config.annotations;
	if (h->annotations &&
	    (!oci_annotation(h->annotations, ANNOTATION_REGIONS) || oci_is_sandbox(h->annotations)))
		return 0;
	free(error);
	error = NULL;
	r = owner_unregister(&h->owner, h->state.id, &error);
	if (r < 0)
		return report_failure(h->state.id, r, error);
	return 0;
}

/* One hooks.d file serves both stages with the same arguments: the state's
 * status tells them apart. */
static int stage_from_status(struct hook *h, const char **ret)
{
	_cleanup_free_ char *message = NULL;
	const char *status = h->state.status;

	if (status && (streq(status, "creating") || streq(status, "created")))
		*ret = "createRuntime";
	else if (status && streq(status, "stopped"))
		*ret = "poststop";
	else {
		message = strprintf("no stage given, and the state's status \"%s\" does not tell it "
				    "(give createRuntime or poststop as the argument)", strna(status));
		return report_failure(h->state.id, EINVAL, message);
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { ARG_SOCKET = 0x100, ARG_TIMEOUT, ARG_VERSION };
	static const struct option options[] = {
		{ "socket", required_argument, NULL, ARG_SOCKET },
		{ "timeout", required_argument, NULL, ARG_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{}
	};
	_cleanup_(hook_done) struct hook h = {};
	usec_t timeout = TIMEOUT_DEFAULT_USEC;
	const char *stage;
	int c, r;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (c) {
		case ARG_SOCKET:
			if (optarg[0] != '/') {
				fprintf(stderr, "%s: --socket=%s: not an absolute path\n", HOOK_NAME, optarg);
				return 2;
			}
			h.owner.socket = optarg;
			break;
		case ARG_TIMEOUT:
			if (parse_timeout(optarg, &timeout) < 0) {
				fprintf(stderr, "%s: --timeout=%s: not a number of seconds (more than 0, at most %d)\n",
					HOOK_NAME, optarg, TIMEOUT_MAX_SEC);
				return 2;
			}
			break;
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("%s %s\n", HOOK_NAME, MSHARE_HOOK_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try '%s --help'.\n", HOOK_NAME);
			return 2;
		}
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "%s: too many arguments; try '%s --help'\n", HOOK_NAME, HOOK_NAME);
		return 2;
	}
	stage = argv[optind];
	if (stage && !streq(stage, "createRuntime") && !streq(stage, "poststop")) {
		fprintf(stderr, "%s: unknown stage '%s' (createRuntime or poststop)\n", HOOK_NAME, stage);
		return 2;
	}
	h.owner.timeout = timeout;
	umask(0022);

	r = load_state(&h);
	if (r >= 0 && !stage)
		r = stage_from_status(&h, &stage);
	if (r >= 0)
		r = streq(stage, "createRuntime") ? stage_create_runtime(&h) : stage_poststop(&h);
	return r < 0 ? 1 : 0;
}

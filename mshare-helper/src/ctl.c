/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mshare-ctl: the operator's view of mshare-owner(8). See mshare-ctl(1).
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>

#include "client-internal.h"
#include "mshare-common/log.h"
#include "mshare-common/protocol.h"
#include "util.h"

#ifndef MSHARE_HELPER_VERSION
#define MSHARE_HELPER_VERSION "unknown"
#endif

#define EXIT_USAGE 2

struct options {
	const char *socket_path;
	bool json;
	bool rdonly;
	bool force;
};

static void help(void)
{
	printf("Usage: mshare-ctl [OPTIONS] COMMAND [ARGS...]\n"
	       "\n"
	       "Show and use the mshare regions that mshare-owner owns.\n"
	       "\n"
	       "Commands:\n"
	       "  list                         list the regions\n"
	       "  show NAME                    show one region, with its grants to root\n"
	       "  reload                       reload the daemon's configuration (root only)\n"
	       "  destroy NAME [--force]       destroy a region now, and create it anew if it is\n"
	       "                               still configured (root only)\n"
	       "  containers                   list the containers the OCI hook registered\n"
	       "                               (root only)\n"
	       "  run NAME [--ro] -- CMD [ARG...]\n"
	       "                               run CMD with a descriptor of region NAME, named\n"
	       "                               by $MSHARE_FD and $MSHARE_FD_<NAME>\n"
	       "\n"
	       "Options:\n"
	       "  -s, --socket=PATH            the daemon's socket (default: %s)\n"
	       "  -j, --json                   print JSON instead of tables (list, show,\n"
	       "                               containers)\n"
	       "      --ro                     ask for a read-only descriptor (run)\n"
	       "      --force                  destroy a region even if processes have it\n"
	       "                               attached: they get SIGSEGV (destroy)\n"
	       "  -h, --help                   show this help and exit\n"
	       "      --version                show the version and exit\n"
	       "\n"
	       "See mshare-ctl(1).\n",
	       MSHARE_CLIENT_SOCKET_DEFAULT);
}

_printf_(1, 2) static int usage_error(const char *format, ...)
{
	va_list ap;

	fputs("mshare-ctl: ", stderr);
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fputs("\nTry 'mshare-ctl --help'.\n", stderr);
	return -EINVAL;
}

/* An error of a request: the daemon's reason if it gave one. */
static int report(struct mshare_client *c, int error, const char *what)
{
	const char *m = c ? mshare_client_error_message(c) : NULL;

	if (m)
		return log_error_errno(error, "%s: %s (%s)", what, m, errno_to_name(error));
	return log_error_errno(error, "%s: %m", what);
}

static int connect_daemon(const struct options *o, struct mshare_client **ret)
{
	struct mshare_client *c = NULL;
	const char *path = o->socket_path ?: MSHARE_CLIENT_SOCKET_DEFAULT;
	int k;

	k = mshare_client_new(&c);
	if (k < 0)
		return log_error_errno(k, "%m");
	k = mshare_client_connect(c, path, "mshare-ctl " MSHARE_HELPER_VERSION);
	if (k < 0) {
		if (k == -ENOENT || k == -ECONNREFUSED)
			log_error_errno(k, "cannot connect to %s: %m (is mshare-owner running?)", path);
		else
			report(c, k, path);
		mshare_client_free(c);
		return k;
	}
	*ret = c;
	return 0;
}

static void print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s)
		puts(s);
	free(s);
}

/* The regions of all pages of "list": as the daemon sent them, for --json,
 * and decoded. */
struct region_list {
	json_t *json;
	struct proto_region_info *infos;
	size_t n;
};

static void region_list_done(struct region_list *l)
{
	json_decref(l->json);
	for (size_t i = 0; i < l->n; i++)
		proto_region_info_done(&l->infos[i]);
	free(l->infos);
}

/* Moves the regions of a reply to the end of l. */
static int region_list_take(struct region_list *l, struct proto_reply *reply)
{
	struct proto_region_info *t;

	if (json_array_extend(l->json, json_object_get(reply->object, "regions")) < 0)
		return -ENOMEM;
	t = reallocarray(l->infos, l->n + reply->list.n_regions ?: 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	l->infos = t;
	for (size_t i = 0; i < reply->list.n_regions; i++) {
		l->infos[l->n++] = reply->list.regions[i];
		reply->list.regions[i] = (struct proto_region_info){};
	}
	return 0;
}

static int fetch_regions(struct mshare_client *c, struct region_list *ret)
{
	_cleanup_(region_list_done) struct region_list l = { .json = json_array() };
	struct proto_request req = { .op = PROTO_OP_LIST };

	if (!l.json)
		return -ENOMEM;
	for (;;) {
		_cleanup_(proto_reply_done) struct proto_reply reply = {};
		int k;

		k = mshare_client_call(c, &req, &reply, NULL);
		if (k < 0)
			return report(c, k, "list");
		if (region_list_take(&l, &reply) < 0)
			return log_oom();
		if (!reply.list.has_next)
			break;
		if (reply.list.next <= req.start) {
			log_error("list: malformed reply");
			return -EPROTO;
		}
		req.start = reply.list.next;
	}
	*ret = l;
	l = (struct region_list){};
	return 0;
}

enum column { COL_NAME, COL_INODE, COL_SIZE, COL_BACKING, COL_RSS, COL_PGTABLES, COL_ATTACHED,
	      COL_OWNER, COL_ACCESS, COL_STATE, _COL_MAX };

static const struct {
	const char *title;
	bool right;
} columns[_COL_MAX] = {
	[COL_NAME] = { "NAME", false },	     [COL_INODE] = { "INODE", true },
	[COL_SIZE] = { "SIZE", true },
	[COL_BACKING] = { "BACKING", false }, [COL_RSS] = { "RSS", true },
	[COL_PGTABLES] = { "PGTABLES", true }, [COL_ATTACHED] = { "ATTACHED", true },
	[COL_OWNER] = { "OWNER", true },     [COL_ACCESS] = { "ACCESS", false },
	[COL_STATE] = { "STATE", false },
};

static void format_row(const struct proto_region_info *info, char cells[_COL_MAX][80])
{
	char b[FORMAT_BYTES_MAX];

	snprintf(cells[COL_NAME], 80, "%s", info->name);
	if (info->inode)
		snprintf(cells[COL_INODE], 80, "%" PRIu64, info->inode);
	else
		snprintf(cells[COL_INODE], 80, "-");
	snprintf(cells[COL_SIZE], 80, "%s", format_bytes(b, sizeof(b), info->size));
	snprintf(cells[COL_BACKING], 80, "%s", info->backing);
	snprintf(cells[COL_RSS], 80, "%s", format_bytes(b, sizeof(b), info->rss_bytes));
	snprintf(cells[COL_PGTABLES], 80, "%s", format_bytes(b, sizeof(b), info->pgtables_bytes));
	snprintf(cells[COL_ATTACHED], 80, "%" PRIu32, info->attached);
	if (info->owner_pid > 0)
		snprintf(cells[COL_OWNER], 80, "%" PRId64, info->owner_pid);
	else
		snprintf(cells[COL_OWNER], 80, "-");
	snprintf(cells[COL_ACCESS], 80, "%s", streq(info->access, "none") ? "-" : info->access);
	snprintf(cells[COL_STATE], 80, "%s", info->state);
}

static void print_row(char cells[_COL_MAX][80], const int widths[_COL_MAX])
{
	for (int i = 0; i < _COL_MAX; i++) {
		bool last = i == _COL_MAX - 1;

		if (columns[i].right)
			printf("%*s", widths[i], cells[i]);
		else if (last)
			printf("%s", cells[i]);
		else
			printf("%-*s", widths[i], cells[i]);
		fputs(last ? "\n" : "  ", stdout);
	}
}

static int verb_list(struct mshare_client *c, const struct options *o)
{
	_cleanup_(region_list_done) struct region_list l = {};
	char (*rows)[_COL_MAX][80] = NULL;
	char header[_COL_MAX][80];
	int widths[_COL_MAX];
	size_t i;
	int k;

	k = fetch_regions(c, &l);
	if (k < 0)
		return k;
	if (o->json) {
		print_json(l.json);
		return 0;
	}

	if (l.n == 0) {
		printf("No regions.\n");
		return 0;
	}
	rows = calloc(l.n, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (i = 0; i < _COL_MAX; i++) {
		snprintf(header[i], 80, "%s", columns[i].title);
		widths[i] = (int)strlen(columns[i].title);
	}
	for (i = 0; i < l.n; i++) {
		format_row(&l.infos[i], rows[i]);
		for (int j = 0; j < _COL_MAX; j++)
			if ((int)strlen(rows[i][j]) > widths[j])
				widths[j] = (int)strlen(rows[i][j]);
	}
	print_row(header, widths);
	for (i = 0; i < l.n; i++)
		print_row(rows[i], widths);
	free(rows);
	return 0;
}

/* containers: the containers registered by the OCI hook (root only). */
static int verb_containers(struct mshare_client *c, const struct options *o)
{
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	struct proto_request req = { .op = PROTO_OP_CONTAINERS };
	int k;

	k = mshare_client_call(c, &req, &reply, NULL);
	if (k < 0)
		return report(c, k, "containers");
	if (o->json) {
		print_json(json_object_get(reply.object, "containers"));
		return 0;
	}
	if (reply.containers.n_containers == 0) {
		printf("No containers.\n");
		return 0;
	}
	printf("%-16s %-20s %8s %5s  %s\n", "ID", "NAME", "PID", "CONNS", "REGIONS");
	for (size_t i = 0; i < reply.containers.n_containers; i++) {
		const struct proto_container_info *ct = &reply.containers.containers[i];

		printf("%-16.16s %-20.20s %8" PRId64 " %5" PRIu64 " ", ct->id, ct->name ?: "-", ct->pid,
		       ct->connections);
		for (size_t j = 0; j < ct->n_regions; j++)
			printf(" %s:%s", ct->regions[j].region, access_mode_to_string(ct->regions[j].mode));
		printf("\n");
	}
	return 0;
}

static void print_strings(const char *what, char *const *v)
{
	for (; v && *v; v++)
		printf(" %s %s", what, *v);
}

static void print_grant(const struct proto_grant *g)
{
	printf("%13s %s", "Grant:", access_mode_to_string(g->mode));
	for (size_t i = 0; i < g->n_users; i++)
		printf(" uid %u", g->users[i]);
	for (size_t i = 0; i < g->n_groups; i++)
		printf(" gid %u", g->groups[i]);
	print_strings("container", g->containers);
	print_strings("container-id", g->container_ids);
	for (size_t i = 0; i < g->n_annotations; i++)
		printf(" annotation %s=%s", g->annotations[i].key, g->annotations[i].value);
	printf(" (%s)\n", g->source);
}

static int verb_show(struct mshare_client *c, const struct options *o, const char *name)
{
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	struct proto_request req = { .op = PROTO_OP_SHOW, .region = (char *)name };
	const struct proto_region_info *info = &reply.region;
	char b[FORMAT_BYTES_MAX];
	int k;

	if (!region_name_is_valid(name)) {
		log_error("invalid region name: %s", name);
		return -EINVAL;
	}
	k = mshare_client_call(c, &req, &reply, NULL);
	if (k < 0)
		return report(c, k, name);
	if (o->json) {
		json_object_del(reply.object, "version");
		json_object_del(reply.object, "status");
		print_json(reply.object);
		return 0;
	}
	printf("%13s %s\n", "Name:", info->name);
	if (info->inode)
		printf("%13s %" PRIu64 " (stays the same across restarts of mshare-owner)\n", "Inode:", info->inode);
	printf("%13s %s", "State:", info->state);
	if (reply.show.error)
		printf(" (%s, see the journal)", reply.show.error);
	if (reply.show.pending_source)
		printf(" (new configuration in %s waits for the region to be released)", reply.show.pending_source);
	printf("\n%13s %s (%" PRIu64 " bytes)\n", "Size:", format_bytes(b, sizeof(b), info->size), info->size);
	printf("%13s %s (%" PRIu64 " bytes)\n", "Region size:",
	       format_bytes(b, sizeof(b), info->region_size), info->region_size);
	printf("%13s %s\n", "Backing:", info->backing);
	if (info->path)
		printf("%13s %s\n", "Path:", info->path);
	printf("%13s %s\n", "Protection:", info->protection);
	printf("%13s %s\n", "Populate:", info->populate ? "yes" : "no");
	printf("%13s %s\n", "Resident:", format_bytes(b, sizeof(b), info->rss_bytes));
	printf("%13s %s\n", "Page tables:", format_bytes(b, sizeof(b), info->pgtables_bytes));
	printf("%13s %" PRIu32 " process%s, %" PRIu32 " window%s\n", "Attached:", info->attached,
	       info->attached == 1 ? "" : "es", info->windows, info->windows == 1 ? "" : "s");
	if (info->owner_pid > 0)
		printf("%13s pid %" PRId64 " (mshare-owner, holding the owner file)\n", "Owner:", info->owner_pid);
	else
		printf("%13s -\n", "Owner:");
	printf("%13s %s\n", "Your access:", info->access);
	if (reply.show.source)
		printf("%13s %s\n", "Source:", reply.show.source);
	for (size_t i = 0; i < reply.show.n_grants; i++)
		print_grant(&reply.show.grants[i]);
	if (reply.show.has_grants && reply.show.n_grants == 0)
		printf("%13s none\n", "Grant:");
	return 0;
}

static int verb_reload(struct mshare_client *c)
{
	_cleanup_free_ char *message = NULL;
	int k;

	/* Creating and populating regions may take long. */
	mshare_client_set_timeout(c, 0);
	k = mshare_client_reload(c, &message);
	if (k < 0)
		return report(c, k, "reload");
	printf("Reloaded: %s.\n", message ?: "done");
	return 0;
}

/* destroy: the region ends now (root only); the daemon creates it anew if
 * it is still configured. */
static int verb_destroy(struct mshare_client *c, const struct options *o, const char *name)
{
	_cleanup_(proto_reply_done) struct proto_reply reply = {};
	struct proto_request req = { .op = PROTO_OP_DESTROY, .region = (char *)name, .force = o->force };
	int k;

	if (!region_name_is_valid(name)) {
		log_error("invalid region name: %s", name);
		return -EINVAL;
	}
	/* Creating the region anew may populate it: no deadline. */
	mshare_client_set_timeout(c, 0);
	k = mshare_client_call(c, &req, &reply, NULL);
	if (k < 0)
		return report(c, k, name);
	if (o->json) {
		json_object_del(reply.object, "version");
		json_object_del(reply.object, "status");
		print_json(reply.object);
		return 0;
	}
	printf("%s%s.\n", reply.message ? "Destroyed: " : "Destroyed", strempty(reply.message));
	return 0;
}

static int set_env_u64(const char *name, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return setenv(name, buf, 1) < 0 ? -errno : 0;
}

/* Does not return on success: CMD replaces us. */
static int verb_run(struct mshare_client **cp, const struct options *o, const char *name,
		    char **command)
{
	_cleanup_free_ char *env_name = NULL;
	uint64_t region_size = 0;
	int fd = -1, k;

	if (!region_name_is_valid(name)) {
		log_error("invalid region name: %s", name);
		return -EINVAL;
	}
	k = mshare_client_get(*cp, name, o->rdonly, NULL, &fd, &region_size);
	if (k < 0)
		return report(*cp, k, name);
	/* The daemon's socket must not leak into the command. */
	mshare_client_free(*cp);
	*cp = NULL;

	/* Keep clear of stdin, stdout and stderr, and let the fd be inherited. */
	if (fd < 3) {
		int n = fcntl(fd, F_DUPFD, 3);

		if (n < 0) {
			k = log_error_errno(errno, "cannot move the descriptor: %m");
			close(fd);
			return k;
		}
		close(fd);
		fd = n;
	} else if (fcntl(fd, F_SETFD, 0) < 0) {
		k = log_error_errno(errno, "cannot clear close-on-exec: %m");
		close(fd);
		return k;
	}

	env_name = region_env_name(name);
	if (!env_name || (k = set_env_u64("MSHARE_FD", (uint64_t)fd)) < 0 ||
	    (k = set_env_u64(env_name, (uint64_t)fd)) < 0 ||
	    (k = set_env_u64("MSHARE_REGION_SIZE", region_size)) < 0 ||
	    setenv("MSHARE_REGION", name, 1) < 0 ||
	    setenv("MSHARE_MODE", o->rdonly ? "ro" : "rw", 1) < 0) {
		log_error_errno(ENOMEM, "cannot set the environment: %m");
		close(fd);
		return -ENOMEM;
	}

	execvp(command[0], command);
	k = log_error_errno(errno, "cannot run %s: %m", command[0]);
	close(fd);
	return k;
}

static int parse_argv(int argc, char *argv[], struct options *o)
{
	enum { ARG_RO = 0x100, ARG_FORCE, ARG_VERSION };
	static const struct option options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "ro", no_argument, NULL, ARG_RO },
		{ "force", no_argument, NULL, ARG_FORCE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "s:jh", options, NULL)) >= 0) {
		switch (c) {
		case 's':
			o->socket_path = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case ARG_RO:
			o->rdonly = true;
			break;
		case ARG_FORCE:
			o->force = true;
			break;
		case 'h':
			help();
			return 1;
		case ARG_VERSION:
			printf("mshare-ctl %s\n", MSHARE_HELPER_VERSION);
			return 1;
		default:
			fprintf(stderr, "Try 'mshare-ctl --help'.\n");
			return -EINVAL;
		}
	}
	return 0;
}

int main(int argc, char *argv[])
{
	struct options o = {};
	struct mshare_client *c = NULL;
	char **command = NULL;
	const char *verb;
	int n_head = argc, n_args, k;
	char **args;

	log_open("mshare-ctl");
	/* "run NAME -- CMD ARGS": what follows the first "--" is the command,
	 * never our options. */
	for (int i = 1; i < argc; i++)
		if (streq(argv[i], "--")) {
			n_head = i;
			command = argv + i + 1;
			break;
		}

	k = parse_argv(n_head, argv, &o);
	if (k != 0)
		return k > 0 ? EXIT_SUCCESS : EXIT_USAGE;
	args = argv + optind;
	n_args = n_head - optind;
	if (n_args < 1) {
		usage_error("missing command");
		return EXIT_USAGE;
	}
	verb = args[0];

	if (streq(verb, "run")) {
		if (n_args != 2) {
			usage_error("run needs one region name");
			return EXIT_USAGE;
		}
		if (!command || !command[0]) {
			usage_error("run needs '-- COMMAND [ARG...]' after the region name");
			return EXIT_USAGE;
		}
	} else if (command) {
		usage_error("'--' and a command only go with run");
		return EXIT_USAGE;
	} else if (o.rdonly) {
		usage_error("--ro only goes with run");
		return EXIT_USAGE;
	}
	if (o.force && !streq(verb, "destroy")) {
		usage_error("--force only goes with destroy");
		return EXIT_USAGE;
	}
	if ((streq(verb, "list") || streq(verb, "reload") || streq(verb, "containers")) && n_args != 1) {
		usage_error("%s takes no arguments", verb);
		return EXIT_USAGE;
	}
	if ((streq(verb, "show") || streq(verb, "destroy")) && n_args != 2) {
		usage_error("%s needs one region name", verb);
		return EXIT_USAGE;
	}
	if (!streq(verb, "list") && !streq(verb, "show") && !streq(verb, "reload") &&
	    !streq(verb, "run") && !streq(verb, "containers") && !streq(verb, "destroy")) {
		usage_error("unknown command '%s'", verb);
		return EXIT_USAGE;
	}

	k = connect_daemon(&o, &c);
	if (k < 0)
		return EXIT_FAILURE;

	if (streq(verb, "list"))
		k = verb_list(c, &o);
	else if (streq(verb, "show"))
		k = verb_show(c, &o, args[1]);
	else if (streq(verb, "reload"))
		k = verb_reload(c);
	else if (streq(verb, "containers"))
		k = verb_containers(c, &o);
	else if (streq(verb, "destroy"))
		k = verb_destroy(c, &o, args[1]);
	else {
		k = verb_run(&c, &o, args[1], command);
		/* exec failed: 127 if the command is not there, like env(1) */
		if (k == -ENOENT && !c)
			k = 127;
		else if (!c)
			k = 126;
	}
	mshare_client_free(c);
	if (k > 0)
		return k;
	return k < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

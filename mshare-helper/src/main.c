/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mshare-owner: creates the configured mshare regions, owns them (the
 * kernel destroys a region when the last reference to its owner file goes),
 * and hands their descriptors to the clients the configuration grants them
 * to. The owner files, and the containers' channels, are kept in the
 * service manager's fd store too, so that a restart, a crash or an upgrade
 * of the daemon adopts them instead of losing them (persist.h). See
 * mshare-owner(8).
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "fdstore.h"
#include "log.h"
#include "manager.h"
#include "mshare-common/protocol.h"
#include "persist.h"
#include "server.h"

#ifndef MSHARE_HELPER_VERSION
#define MSHARE_HELPER_VERSION "unknown"
#endif

/* How often regions waiting to be retired or replaced are looked at. */
#define COLLECT_INTERVAL_USEC (10 * USEC_PER_SEC)
/* Descriptors kept free of connections: regions, reloads, the journal. */
#define FD_RESERVE 256
/* Each populate step gives systemd's start/reload timeout this much more. */
#define POPULATE_EXTEND_USEC (120 * USEC_PER_SEC)

struct options {
	const char *config_dir;
	const char *socket_path;
	size_t max_connections;
	size_t max_per_user;
	size_t max_per_container;
	usec_t timeout;
	size_t fdstore_max;
	bool check_config;
};

struct daemon {
	struct options opts;
	struct fdstore store;
	struct manager manager;
	struct server server;
	struct watch signals;
	int epoll_fd;
	bool exiting;
	bool from_store;	/* entries of the fd store were passed at start */
};

static void help(void)
{
	printf("Usage: mshare-owner [OPTIONS]\n"
	       "\n"
	       "Create the mshare regions configured in %s,\n"
	       "own them, and hand their descriptors to the clients the configuration\n"
	       "grants them to.\n"
	       "\n"
	       "Options:\n"
	       "  -c, --config-dir=DIR        read DIR/*.conf (default: %s)\n"
	       "  -s, --socket=PATH           listen on PATH instead of a socket passed by systemd\n"
	       "      --max-connections=N     serve at most N connections at once (default: %d)\n"
	       "      --max-connections-per-user=N\n"
	       "                              at most N of them for each user but root\n"
	       "                              (default: %d)\n"
	       "      --max-connections-per-container=N\n"
	       "                              at most N on each container's channel (default: %d)\n"
	       "      --timeout=SECONDS       close connections idle this long (default: %" PRIu64 ")\n"
	       "      --fdstore-max=N         create no region and register no container past N\n"
	       "                              entries in systemd's fd store, as the unit's\n"
	       "                              FileDescriptorStoreMax= (default: %d)\n"
	       "      --check-config          check the configuration, print what is wrong, and exit\n"
	       "      --log-level=LEVEL       debug, info, notice, warning or err (default: info)\n"
	       "  -h, --help                  show this help and exit\n"
	       "      --version               show the version and exit\n"
	       "\n"
	       "See mshare-owner(8) and mshare-regions.conf(5).\n",
	       CONFIG_DIR_DEFAULT, CONFIG_DIR_DEFAULT, SERVER_MAX_CONNECTIONS_DEFAULT,
	       SERVER_MAX_PER_USER_DEFAULT, SERVER_MAX_PER_CONTAINER_DEFAULT, SERVER_TIMEOUT_DEFAULT_USEC / USEC_PER_SEC,
	       FDSTORE_MAX_DEFAULT);
}

/* --OPTION=N, N a count above 0 that fits 32 bits. */
static int parse_count(const char *option, const char *s, size_t *ret, char **ret_error)
{
	uint32_t u;

	if (parse_u32(s, &u) < 0 || u == 0)
		return error_set(ret_error, -EINVAL, "invalid --%s: %s (a number above 0)", option, s);
	*ret = u;
	return 0;
}

/* 0 on success, 1 to exit successfully (--help), < 0 on a usage error,
 * which *ret_error names (to be freed). */
static int parse_argv(int argc, char *argv[], struct options *o, char **ret_error)
{
	enum {
		ARG_MAX_CONNECTIONS = 0x100,
		ARG_MAX_PER_USER,
		ARG_MAX_PER_CONTAINER,
		ARG_TIMEOUT,
		ARG_FDSTORE_MAX,
		ARG_CHECK_CONFIG,
		ARG_LOG_LEVEL,
		ARG_VERSION,
	};
	static const struct option options[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "max-connections", required_argument, NULL, ARG_MAX_CONNECTIONS },
		{ "max-connections-per-user", required_argument, NULL, ARG_MAX_PER_USER },
		{ "max-connections-per-container", required_argument, NULL, ARG_MAX_PER_CONTAINER },
		{ "timeout", required_argument, NULL, ARG_TIMEOUT },
		{ "fdstore-max", required_argument, NULL, ARG_FDSTORE_MAX },
		{ "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
		{ "log-level", required_argument, NULL, ARG_LOG_LEVEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{}
	};
	double d;
	char *end;
	int c, k;

	/* Ours say which option is wrong: the caller may have to log it. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:s:h", options, NULL)) >= 0) {
		switch (c) {
		case 'c':
			o->config_dir = optarg;
			break;
		case 's':
			if (strlen(optarg) >= sizeof(((struct sockaddr_un *)NULL)->sun_path))
				return error_set(ret_error, -EINVAL, "socket path too long: %s", optarg);
			o->socket_path = optarg;
			break;
		case ARG_MAX_CONNECTIONS:
			k = parse_count("max-connections", optarg, &o->max_connections, ret_error);
			if (k < 0)
				return k;
			break;
		case ARG_MAX_PER_USER:
			k = parse_count("max-connections-per-user", optarg, &o->max_per_user, ret_error);
			if (k < 0)
				return k;
			break;
		case ARG_MAX_PER_CONTAINER:
			k = parse_count("max-connections-per-container", optarg, &o->max_per_container, ret_error);
			if (k < 0)
				return k;
			break;
		case ARG_TIMEOUT:
			errno = 0;
			d = strtod(optarg, &end);
			if (errno || *end || !isfinite(d) || d <= 0 || d > 3600)
				return error_set(ret_error, -EINVAL, "invalid --timeout (seconds, at most 3600): %s",
						 optarg);
			o->timeout = (usec_t)(d * USEC_PER_SEC);
			break;
		case ARG_FDSTORE_MAX:
			k = parse_count("fdstore-max", optarg, &o->fdstore_max, ret_error);
			if (k < 0)
				return k;
			break;
		case ARG_CHECK_CONFIG:
			o->check_config = true;
			break;
		case ARG_LOG_LEVEL:
			k = log_level_from_string(optarg);
			if (k < 0)
				return error_set(ret_error, -EINVAL, "invalid --log-level: %s", optarg);
			log_set_max_level(k);
			break;
		case 'h':
			help();
			return 1;
		case ARG_VERSION:
			printf("mshare-owner %s\n", MSHARE_HELPER_VERSION);
			return 1;
		default:
			/* getopt_long() has moved optind past the culprit. */
			return error_set(ret_error, -EINVAL, "unknown option, or one without its argument: %s",
					 argv[optind - 1]);
		}
	}
	if (optind < argc)
		return error_set(ret_error, -EINVAL, "unexpected argument: %s", argv[optind]);
	return 0;
}

static int check_config(const char *dir)
{
	_cleanup_config_free_ struct config *c = NULL;
	_cleanup_strv_free_ char **errors = NULL;
	int k;

	k = config_load_dir(dir, &c, &errors);
	for (char **e = errors; e && *e; e++)
		fprintf(stderr, "%s\n", *e);
	if (k < 0) {
		fprintf(stderr, "%s: %zu error%s\n", dir, strv_length(errors),
			strv_length(errors) == 1 ? "" : "s");
		return k;
	}
	printf("%s: %zu region%s, %zu grant%s, no errors\n", dir, c->n_regions,
	       c->n_regions == 1 ? "" : "s", c->n_grants, c->n_grants == 1 ? "" : "s");
	return 0;
}

/* Connections need descriptors; hard limits are the administrator's word. */
static rlim_t raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t old = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			log_warning_errno(errno, "Cannot raise the descriptor limit from %llu to %llu: %m",
					  (unsigned long long)old, (unsigned long long)rl.rlim_max);
			return old;
		}
		log_debug("Raised the descriptor limit from %llu to %llu.", (unsigned long long)old,
			  (unsigned long long)rl.rlim_max);
	}
	return rl.rlim_cur;
}

/* --socket: our own listening socket, refusing to steal a live one. */
static int listen_on_path(const char *path)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old_umask;
	int k;

	strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return log_error_errno(errno, "Cannot create a socket: %m");

	if (lstat(path, &st) == 0) {
		_cleanup_close_ int probe = -1;

		if (!S_ISSOCK(st.st_mode))
			return log_error_errno(EEXIST, "%s exists and is not a socket.", path);
		probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return log_error_errno(EADDRINUSE, "%s is in use: is mshare-owner running already?",
					       path);
		if (unlink(path) < 0)
			return log_error_errno(errno, "Cannot remove the stale socket %s: %m", path);
	}

	/* Anyone may connect; the grants decide what they get. */
	old_umask = umask(0111);
	k = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_umask);
	if (k < 0)
		return log_error_errno(errno, "Cannot bind to %s: %m", path);
	if (listen(fd, SOMAXCONN) < 0)
		return log_error_errno(errno, "Cannot listen on %s: %m", path);
	return TAKE_FD(fd);
}

static void populate_progress(void *userdata, const struct region *r, uint64_t done)
{
	(void)userdata;
	sd_notifyf(false, "STATUS=Populating region '%s': %" PRIu64 " of %" PRIu64 " MiB\n"
		   "EXTEND_TIMEOUT_USEC=%" PRIu64,
		   r->config.name, done >> 20, r->config.size >> 20, POPULATE_EXTEND_USEC);
}

/* The state, for the next start: see persist.h for when. */
static void daemon_save(void *userdata)
{
	struct daemon *d = userdata;

	(void)persist_save(&d->store, &d->manager, &d->server);
}

static void notify_ready(struct daemon *d, const char *prefix)
{
	_cleanup_free_ char *summary = manager_summary(&d->manager);

	sd_notifyf(false, "READY=1\nSTATUS=%s%s", prefix, summary ?: "");
}

static int daemon_reload(void *userdata, char **ret_message)
{
	struct daemon *d = userdata;
	_cleanup_free_ char *message = NULL;
	int k;

	sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=Reloading the configuration",
		   now_usec());
	k = manager_load(&d->manager, &message);
	if (k < 0) {
		notify_ready(d, "Reload failed, previous configuration kept; ");
		*ret_message = TAKE_PTR(message);
		return k;
	}
	log_info("Configuration reloaded: %s.", strna(message));
	notify_ready(d, "Serving ");
	*ret_message = TAKE_PTR(message);
	return 0;
}

static void daemon_dispatch_signal(struct watch *w, uint32_t events)
{
	struct daemon *d = (struct daemon *)((char *)w - offsetof(struct daemon, signals));
	struct signalfd_siginfo si;
	_cleanup_free_ char *message = NULL;

	(void)events;
	while (read(w->fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGHUP:
			log_info("Reloading the configuration (SIGHUP from pid %u).", si.ssi_pid);
			free(message);
			message = NULL;
			(void)daemon_reload(d, &message);
			break;
		case SIGTERM:
		case SIGINT:
			log_info("Received SIG%s from pid %u, shutting down.",
				 sigabbrev_np((int)si.ssi_signo), si.ssi_pid);
			d->exiting = true;
			break;
		default:
			break;
		}
	}
}

/* The signals the daemon takes from a signalfd (or sigwaitinfo()). */
static sigset_t daemon_signals(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	return mask;
}

/*
 * Before anything else: by default SIGHUP (a reload racing the start)
 * kills the daemon, which systemd takes for a clean exit: no restart, the
 * fd store emptied, every region destroyed. Blocked, they wait for the
 * signalfd or degraded mode.
 */
static void block_signals(void)
{
	sigset_t mask = daemon_signals();

	/* MSG_NOSIGNAL covers our sends; this covers everything else. */
	signal(SIGPIPE, SIG_IGN);
	/* Fails only on a bad argument. */
	(void)sigprocmask(SIG_BLOCK, &mask, NULL);
}

static int setup_signals(struct daemon *d)
{
	sigset_t mask = daemon_signals();

	d->signals.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->signals.fd < 0)
		return log_error_errno(errno, "Cannot create a signalfd: %m");
	d->signals.dispatch = daemon_dispatch_signal;
	return watch_add(d->epoll_fd, &d->signals, EPOLLIN);
}

static int epoll_timeout_ms(usec_t when, usec_t now)
{
	usec_t ms;

	if (when == USEC_INFINITY)
		return -1;
	if (when <= now)
		return 0;
	/* Round up, so as not to wake up just before the deadline. */
	ms = (when - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

static int daemon_run(struct daemon *d)
{
	usec_t next_collect = USEC_INFINITY;

	while (!d->exiting) {
		struct epoll_event events[64];
		usec_t now = now_usec(), wakeup;
		int n;

		if (!manager_has_pending(&d->manager))
			next_collect = USEC_INFINITY;
		else if (next_collect == USEC_INFINITY)
			next_collect = now + COLLECT_INTERVAL_USEC;
		wakeup = server_next_wakeup(&d->server);
		if (next_collect < wakeup)
			wakeup = next_collect;

		n = epoll_wait(d->epoll_fd, events, (int)ARRAY_SIZE(events), epoll_timeout_ms(wakeup, now));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return log_error_errno(errno, "epoll_wait() failed: %m");
		}
		for (int i = 0; i < n; i++) {
			struct watch *w = events[i].data.ptr;

			w->dispatch(w, events[i].events);
		}

		now = now_usec();
		server_process_timeouts(&d->server, now);
		if (now >= next_collect) {
			manager_collect(&d->manager, now, false);
			next_collect = USEC_INFINITY;
		}
	}
	return 0;
}

/* The entries the daemon keeps in the fd store besides the state's: an
 * owner file per region, a socket and a pidfd per container. */
static size_t store_entries(const struct daemon *d)
{
	return manager_store_entries(&d->manager) + 2 * (d->server.n_channels + d->server.n_held_channels);
}

static size_t daemon_store_entries(void *userdata)
{
	return store_entries(userdata);
}

/* Whether exiting would lose regions: systemd 252 empties the fd store
 * when the daemon exits after it passed descriptors (and once restarts
 * reach StartLimitBurst=), which destroys every region in it. */
static bool daemon_holds_store(const struct daemon *d)
{
	return d->from_store || (d->store.enabled && store_entries(d) > 0);
}

/*
 * Instead of exiting on an error that stops the daemon while the fd store
 * holds regions (see above): holds every descriptor it was passed or made,
 * which keeps them in the store and the regions alive, serves nothing
 * (nothing it could serve is known to be sound), and waits for SIGTERM:
 * systemctl stop still ends everything, systemctl restart starts anew.
 * why: what is wrong, or NULL if logged already ("see above").
 */
static int daemon_degraded(int error, const char *why)
{
	sigset_t mask = daemon_signals();

	log_error_errno(error, "mshare-owner cannot run (%s%s), but the service manager's fd store holds its regions "
			"and containers, which exiting would make it destroy: running degraded. Every descriptor "
			"is held and stays in the store; nothing is served; SIGHUP is ignored. Fix the cause (for "
			"a state of a newer mshare-owner: install that version again), then run 'systemctl "
			"restart mshare-owner'; 'systemctl stop mshare-owner' ends every region.",
			why ?: strerror(abs(error)), why ? "" : "; see above");
	sd_notifyf(false, "READY=1\nSTATUS=Degraded: %s; holding the regions of the fd store, serving nothing: "
		   "see the journal, then systemctl restart mshare-owner", why ?: strerror(abs(error)));
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&mask, &si);

		if (sig == SIGTERM || sig == SIGINT) {
			log_info("Received SIG%s from pid %d, shutting down.", sigabbrev_np(sig), (int)si.si_pid);
			return 0;
		}
		if (sig == SIGHUP)
			log_notice("Ignoring SIGHUP: mshare-owner runs degraded (see above); restart it once the "
				   "cause is fixed.");
	}
}

/* What a previous daemon left in the fd store, the event loop, and the
 * socket. */
static int daemon_setup(struct daemon *d, struct restore *rs, int *ret_listen_fd)
{
	int k;

	k = persist_restore(&d->store, !d->opts.socket_path, rs);
	d->from_store = rs->n_stored > 0;
	if (k < 0)
		return k;
	d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epoll_fd < 0)
		return log_error_errno(errno, "Cannot create an epoll instance: %m");
	k = setup_signals(d);
	if (k < 0)
		return k;
	*ret_listen_fd = d->opts.socket_path ? listen_on_path(d->opts.socket_path) : TAKE_FD(rs->listen_fd);
	if (*ret_listen_fd < 0)
		return *ret_listen_fd;
	if (!d->store.enabled)
		log_info("No service manager keeps descriptors for us ($NOTIFY_SOCKET is not set): "
			 "the regions end when mshare-owner exits.");
	return 0;
}

/* The manager and the server, with the regions and channels restored. */
static int daemon_adopt(struct daemon *d, struct restore *rs, int listen_fd, size_t max_channels)
{
	int k;

	sd_notifyf(false, "STATUS=%s regions", rs->n_regions ? "Adopting and creating" : "Creating");
	d->manager = (struct manager){
		.config_dir = d->opts.config_dir,
		.progress = populate_progress,
		.progress_userdata = d,
		.store = &d->store,
		.save = daemon_save,
		.save_userdata = d,
	};
	k = server_init(&d->server, d->epoll_fd, listen_fd, &d->manager, &d->store);
	if (k < 0)
		return k;
	d->server.timeout = d->opts.timeout;
	d->server.max_connections = d->opts.max_connections;
	d->server.max_per_user = d->opts.max_per_user;
	d->server.max_per_container = d->opts.max_per_container;
	d->server.max_channels = max_channels;
	d->server.reload = daemon_reload;
	d->server.save = daemon_save;
	d->server.userdata = d;
	/* Regions and channels first, so that every state written while the
	 * configuration is applied has them. On failure rs keeps what is
	 * left, for degraded mode to hold. */
	k = persist_adopt(rs, &d->manager, &d->server);
	if (k < 0)
		return k;
	persist_restore_done(rs);
	return 0;
}

/* The first load: 0, 1 if the configuration has errors and the daemon goes
 * on without handing anything out, or < 0 (logged by manager_load()). */
static int daemon_load(struct daemon *d, char **message)
{
	int k = manager_load(&d->manager, message);

	if (k == 0)
		return 0;
	if (k != -EINVAL || !d->from_store)
		return k;
	/* Exiting would make systemd restart us into the same error until it
	 * gives up and empties the fd store, destroying the regions. Keep
	 * them, grant nothing, wait for a reload. */
	log_error("The configuration has errors, and the fd store passed regions or containers (%zu region%s "
		  "and %zu container%s adopted): keeping them, but handing nothing out until a reload "
		  "(systemctl reload mshare-owner) brings a valid configuration.",
		  d->manager.n_regions, d->manager.n_regions == 1 ? "" : "s", d->server.n_channels,
		  d->server.n_channels == 1 ? "" : "s");
	d->manager.config = config_new();
	return d->manager.config ? 1 : log_oom();
}

static int daemon_start(struct daemon *d, struct restore *rs, int *ret_listen_fd, size_t max_channels)
{
	_cleanup_free_ char *message = NULL;
	usec_t started = now_usec();
	int k;

	k = daemon_setup(d, rs, ret_listen_fd);
	if (k == 0)
		k = daemon_adopt(d, rs, *ret_listen_fd, max_channels);
	if (k == 0)
		k = daemon_load(d, &message);
	if (k < 0)
		return k;
	daemon_save(d);

	log_info("mshare-owner %s ready in %" PRIu64 " ms: %s; at most %zu connections (%zu per user, "
		 "%zu per container), %zu containers, %" PRIu64 " ms deadline.", MSHARE_HELPER_VERSION,
		 (now_usec() - started) / USEC_PER_MSEC, strna(message), d->opts.max_connections,
		 d->opts.max_per_user, d->opts.max_per_container, max_channels, d->opts.timeout / USEC_PER_MSEC);
	notify_ready(d, k > 0 ? "Configuration errors, nothing handed out until a reload fixes them; " :
				"Serving ");
	return 0;
}

/*
 * A bad command line: exit status 2, unless the fd store passed its
 * entries (a bad option in a drop-in): exiting would make systemd start us
 * into the same error again until StartLimitBurst= empties the store,
 * destroying every region. message names the culprit (NULL: no memory).
 */
static int usage_error(int error, const char *message)
{
	_cleanup_free_ char *why = NULL;

	if (fdstore_passed() == 0) {
		fprintf(stderr, "mshare-owner: %s\nTry 'mshare-owner --help'.\n", message ?: strerror(-error));
		return 2;
	}
	why = strprintf("invalid command line: %s", message ?: strerror(-error));
	return daemon_degraded(error, why ?: "invalid command line") < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char *argv[])
{
	struct daemon d = {
		.opts = {
			.config_dir = CONFIG_DIR_DEFAULT,
			.max_connections = SERVER_MAX_CONNECTIONS_DEFAULT,
			.max_per_user = SERVER_MAX_PER_USER_DEFAULT,
			.max_per_container = SERVER_MAX_PER_CONTAINER_DEFAULT,
			.timeout = SERVER_TIMEOUT_DEFAULT_USEC,
			.fdstore_max = FDSTORE_MAX_DEFAULT,
		},
		.signals.fd = -1,
		.epoll_fd = -1,
	};
	_cleanup_(persist_restore_done) struct restore restore = { .listen_fd = -1 };
	_cleanup_free_ char *usage = NULL;
	size_t max_channels;
	int listen_fd = -1, k;
	rlim_t nofile;

	block_signals();
	log_open_service("mshare-owner", log_journal_sink);
	k = parse_argv(argc, argv, &d.opts, &usage);
	if (k < 0)
		return usage_error(k, usage);
	if (k > 0)
		return EXIT_SUCCESS;
	if (d.opts.check_config)
		return check_config(d.opts.config_dir) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

	nofile = raise_nofile();
	server_size_for_fds(nofile, FD_RESERVE, &d.opts.max_connections, &max_channels);
	fdstore_init(&d.store, d.opts.fdstore_max);
	d.store.count = daemon_store_entries;
	d.store.count_userdata = &d;

	k = daemon_start(&d, &restore, &listen_fd, max_channels);
	if (k == 0)
		k = daemon_run(&d);
	if (k < 0 && daemon_holds_store(&d))
		k = daemon_degraded(k, NULL);

	/* Nothing is destroyed here: SIGTERM may be a stop or a restart, and
	 * only the service manager knows. It empties the fd store on a stop,
	 * which closes the last owner files and destroys the regions (every
	 * process still touching one gets SIGSEGV), and keeps it for the next
	 * start otherwise. Without a store, closing our copies destroys them. */
	sd_notify(false, d.store.enabled ? "STOPPING=1\nSTATUS=Shutting down; the fd store keeps the regions" :
					   "STOPPING=1\nSTATUS=Shutting down, destroying the regions");
	server_done(&d.server);
	manager_done(&d.manager);
	if (d.opts.socket_path && listen_fd >= 0)
		unlink(d.opts.socket_path);
	safe_close(listen_fd);
	safe_close(d.signals.fd);
	safe_close(d.epoll_fd);
	return k < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

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
#include "persist.h"
#include "protocol.h"
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
	       "      --check-config          check the configuration, print what is wrong, and exit\n"
	       "      --log-level=LEVEL       debug, info, notice, warning or err (default: info)\n"
	       "  -h, --help                  show this help and exit\n"
	       "      --version               show the version and exit\n"
	       "\n"
	       "See mshare-owner(8) and mshare-regions.conf(5).\n",
	       CONFIG_DIR_DEFAULT, CONFIG_DIR_DEFAULT, SERVER_MAX_CONNECTIONS_DEFAULT,
	       SERVER_MAX_PER_USER_DEFAULT, SERVER_MAX_PER_CONTAINER_DEFAULT, SERVER_TIMEOUT_DEFAULT_USEC / USEC_PER_SEC);
}

/* --OPTION=N, N a count above 0 that fits 32 bits. */
static int parse_count(const char *option, const char *s, size_t *ret)
{
	uint32_t u;

	if (parse_u32(s, &u) < 0 || u == 0) {
		fprintf(stderr, "mshare-owner: invalid --%s: %s (a number above 0)\n", option, s);
		return -EINVAL;
	}
	*ret = u;
	return 0;
}

/* 0 on success, 1 to exit successfully (--help), < 0 on a usage error. */
static int parse_argv(int argc, char *argv[], struct options *o)
{
	enum {
		ARG_MAX_CONNECTIONS = 0x100,
		ARG_MAX_PER_USER,
		ARG_MAX_PER_CONTAINER,
		ARG_TIMEOUT,
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
		{ "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
		{ "log-level", required_argument, NULL, ARG_LOG_LEVEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{}
	};
	double d;
	char *end;
	int c, k;

	while ((c = getopt_long(argc, argv, "c:s:h", options, NULL)) >= 0) {
		switch (c) {
		case 'c':
			o->config_dir = optarg;
			break;
		case 's':
			if (strlen(optarg) >= sizeof(((struct sockaddr_un *)NULL)->sun_path)) {
				fprintf(stderr, "mshare-owner: socket path too long: %s\n", optarg);
				return -EINVAL;
			}
			o->socket_path = optarg;
			break;
		case ARG_MAX_CONNECTIONS:
			k = parse_count("max-connections", optarg, &o->max_connections);
			if (k < 0)
				return k;
			break;
		case ARG_MAX_PER_USER:
			k = parse_count("max-connections-per-user", optarg, &o->max_per_user);
			if (k < 0)
				return k;
			break;
		case ARG_MAX_PER_CONTAINER:
			k = parse_count("max-connections-per-container", optarg, &o->max_per_container);
			if (k < 0)
				return k;
			break;
		case ARG_TIMEOUT:
			errno = 0;
			d = strtod(optarg, &end);
			if (errno || *end || !isfinite(d) || d <= 0 || d > 3600) {
				fprintf(stderr, "mshare-owner: invalid --timeout (seconds, at most 3600): %s\n",
					optarg);
				return -EINVAL;
			}
			o->timeout = (usec_t)(d * USEC_PER_SEC);
			break;
		case ARG_CHECK_CONFIG:
			o->check_config = true;
			break;
		case ARG_LOG_LEVEL:
			k = log_level_from_string(optarg);
			if (k < 0) {
				fprintf(stderr, "mshare-owner: invalid --log-level: %s\n", optarg);
				return -EINVAL;
			}
			log_set_max_level(k);
			break;
		case 'h':
			help();
			return 1;
		case ARG_VERSION:
			printf("mshare-owner %s\n", MSHARE_HELPER_VERSION);
			return 1;
		default:
			fprintf(stderr, "Try 'mshare-owner --help'.\n");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mshare-owner: unexpected argument: %s\nTry 'mshare-owner --help'.\n",
			argv[optind]);
		return -EINVAL;
	}
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

static int setup_signals(struct daemon *d)
{
	sigset_t mask;

	/* MSG_NOSIGNAL covers our sends; this covers everything else. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return log_error_errno(errno, "Cannot block signals: %m");
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

int main(int argc, char *argv[])
{
	struct daemon d = {
		.opts = {
			.config_dir = CONFIG_DIR_DEFAULT,
			.max_connections = SERVER_MAX_CONNECTIONS_DEFAULT,
			.max_per_user = SERVER_MAX_PER_USER_DEFAULT,
			.max_per_container = SERVER_MAX_PER_CONTAINER_DEFAULT,
			.timeout = SERVER_TIMEOUT_DEFAULT_USEC,
		},
		.signals.fd = -1,
		.epoll_fd = -1,
	};
	_cleanup_(persist_restore_done) struct restore restore = { .listen_fd = -1 };
	_cleanup_free_ char *message = NULL;
	usec_t started = now_usec();
	size_t max_channels;
	int listen_fd = -1, k;
	rlim_t nofile;

	log_open("mshare-owner");
	k = parse_argv(argc, argv, &d.opts);
	if (k != 0)
		return k > 0 ? EXIT_SUCCESS : 2;
	if (d.opts.check_config)
		return check_config(d.opts.config_dir) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

	nofile = raise_nofile();
	server_size_for_fds(nofile, FD_RESERVE, &d.opts.max_connections, &max_channels);

	d.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (d.epoll_fd < 0) {
		k = log_error_errno(errno, "Cannot create an epoll instance: %m");
		goto finish;
	}
	k = setup_signals(&d);
	if (k < 0)
		goto finish;

	/* What a previous daemon left in the fd store, and the socket. */
	fdstore_init(&d.store);
	k = persist_restore(&d.store, !d.opts.socket_path, &restore);
	if (k < 0)
		goto finish;
	if (d.opts.socket_path)
		listen_fd = listen_on_path(d.opts.socket_path);
	else
		listen_fd = TAKE_FD(restore.listen_fd);
	if (listen_fd < 0) {
		k = listen_fd;
		goto finish;
	}
	if (!d.store.enabled)
		log_info("No service manager keeps descriptors for us ($NOTIFY_SOCKET is not set): "
			 "the regions end when mshare-owner exits.");

	sd_notifyf(false, "STATUS=%s regions", restore.n_regions ? "Adopting and creating" : "Creating");
	d.manager = (struct manager){
		.config_dir = d.opts.config_dir,
		.progress = populate_progress,
		.progress_userdata = &d,
		.store = &d.store,
		.save = daemon_save,
		.save_userdata = &d,
	};
	k = server_init(&d.server, d.epoll_fd, listen_fd, &d.manager, &d.store);
	if (k < 0)
		goto finish;
	d.server.timeout = d.opts.timeout;
	d.server.max_connections = d.opts.max_connections;
	d.server.max_per_user = d.opts.max_per_user;
	d.server.max_per_container = d.opts.max_per_container;
	d.server.max_channels = max_channels;
	d.server.reload = daemon_reload;
	d.server.save = daemon_save;
	d.server.userdata = &d;
	/* Regions and channels first, so that every state written while the
	 * configuration is applied has them. */
	persist_adopt(&restore, &d.manager, &d.server);
	persist_restore_done(&restore);

	k = manager_load(&d.manager, &message);
	if (k < 0 && (k == -ENOMEM || (d.manager.n_regions == 0 && d.server.n_channels == 0))) {
		log_error_errno(k, "Not starting: %s", message ?: strerror(-k));
		goto finish;
	}
	if (k < 0) {
		/* Exiting would make systemd restart us into the same error
		 * until it gives up and empties the fd store, destroying the
		 * regions. Keep them, grant nothing, wait for a reload. */
		log_error("The configuration has errors, and %zu region%s and %zu container%s were adopted "
			  "from the fd store: keeping them, but handing nothing out until a reload "
			  "(systemctl reload mshare-owner) brings a valid configuration.",
			  d.manager.n_regions, d.manager.n_regions == 1 ? "" : "s", d.server.n_channels,
			  d.server.n_channels == 1 ? "" : "s");
		d.manager.config = config_new();
		if (!d.manager.config) {
			k = log_oom();
			goto finish;
		}
	}
	daemon_save(&d);

	log_info("mshare-owner %s ready in %" PRIu64 " ms: %s; at most %zu connections (%zu per user, "
		 "%zu per container), %zu containers, %" PRIu64 " ms deadline.", MSHARE_HELPER_VERSION,
		 (now_usec() - started) / USEC_PER_MSEC, strna(message), d.opts.max_connections,
		 d.opts.max_per_user, d.opts.max_per_container, max_channels, d.opts.timeout / USEC_PER_MSEC);
	notify_ready(&d, k < 0 ? "Configuration errors, nothing handed out until a reload fixes them; " :
				 "Serving ");

	k = daemon_run(&d);

finish:
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

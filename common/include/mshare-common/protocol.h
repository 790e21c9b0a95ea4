/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The owner protocol, version 1: see docs/protocol.md. One JSON object per
 * SOCK_SEQPACKET message, at most MSHARE_PROTOCOL_MAX_MESSAGE bytes, each
 * carrying "version". This file only turns messages into structures and back;
 * it does no I/O, so that the decoders can be unit-tested and fuzzed. The one
 * implementation of the protocol: the daemon, libmshare-client (mshare-ctl,
 * the OCI hook) and libmshare's mshare_request() all use it.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mshare-common/errno-name.h"
#include "mshare-common/macro.h"
#include "mshare-common/mode.h"
#include "mshare-common/region-name.h"
#include "mshare-common/strprintf.h"

#define MSHARE_PROTOCOL_VERSION 1
#define MSHARE_PROTOCOL_MAX_MESSAGE (64 * 1024)
#define MSHARE_SOCKET_PATH "/run/mshare/owner.sock"
/* Bounds on strings that a request may carry. */
#define PROTO_CLIENT_MAX 256
#define PROTO_CONTAINER_STRING_MAX 1024
/* Regions one container may ask for in a register request. */
#define PROTO_REGISTER_REGIONS_MAX 64

enum proto_op {
	PROTO_OP_HELLO,
	PROTO_OP_GET,
	PROTO_OP_LIST,
	PROTO_OP_SHOW,
	PROTO_OP_RELOAD,
	PROTO_OP_REGISTER,
	PROTO_OP_UNREGISTER,
	PROTO_OP_CONTAINERS,
	PROTO_OP_DESTROY,
	_PROTO_OP_MAX,
};

const char *proto_op_to_string(enum proto_op op);
int proto_op_from_string(const char *s);

struct proto_annotation {
	char *key;
	char *value;
};

/* A region a container asks for, in a register request. */
struct proto_region_request {
	char *region;
	enum access_mode mode;
};

struct proto_request {
	enum proto_op op;
	char *client;			/* hello: free-form client name, optional */
	char *region;			/* get, show, destroy */
	enum access_mode mode;		/* get */
	bool force;			/* destroy: even if processes have it attached */
	uint32_t start;			/* list: first region of the page */
	bool has_container;		/* get: asked for a container; register, unregister */
	char *container_name;
	char *container_id;		/* required by register and unregister */
	struct proto_annotation *annotations;
	size_t n_annotations;
	struct proto_region_request *regions;	/* register */
	size_t n_regions;
};

void proto_request_done(struct proto_request *req);

/*
 * Decodes one request. On failure returns -EMSGSIZE (too long), -EBADMSG
 * (not a JSON object, missing member, wrong type), -EPROTONOSUPPORT (other
 * version), -EOPNOTSUPP (unknown op) or -EINVAL (bad value), and sets
 * *ret_error to a message for the peer.
 */
int proto_request_decode(const void *buf, size_t len, struct proto_request *ret,
			 char **ret_error);
int proto_request_encode(const struct proto_request *req, char **ret, size_t *ret_len);

/* What the daemon tells about a region, in list, show, get and destroy replies. */
struct proto_region_info {
	char *name;
	char *state;			/* "active", "changed", "retiring", "failed" */
	uint64_t size;			/* bytes of the mapped object */
	uint64_t region_size;		/* size of the region (alignment multiple) */
	char *backing;
	char *path;			/* file backing only */
	char *protection;		/* "r", "rw", "rx", "rwx" */
	bool populate;
	uint64_t rss_bytes;
	uint64_t pgtables_bytes;
	uint32_t attached;
	uint32_t windows;
	int64_t owner_pid;		/* the daemon's, while it holds the owner file */
	uint64_t inode;			/* of the owner file: the region's identity, 0 if none */
	char *access;			/* what the asking peer may get */
};

void proto_region_info_done(struct proto_region_info *info);
/* Bytes the region takes in a list reply, for the daemon's paging; or
 * -EILSEQ if a string of it is not valid UTF-8 (JSON cannot carry it), or
 * -ENOMEM. */
ssize_t proto_region_info_length(const struct proto_region_info *info);

/* A [Grant] that names a region, in a show reply to root. */
struct proto_grant {
	char *source;			/* "FILE:LINE" */
	char *region;			/* a name or a pattern */
	enum access_mode mode;
	uid_t *users;
	size_t n_users;
	gid_t *groups;
	size_t n_groups;
	char **containers;		/* name patterns, NULL-terminated (NULL: none) */
	char **container_ids;		/* id patterns, likewise */
	struct proto_annotation *annotations;	/* key and value pattern */
	size_t n_annotations;
};

/* A registered container, in a containers reply. */
struct proto_container_info {
	char *id;
	char *name;			/* or NULL */
	int64_t pid;			/* on the host */
	struct proto_region_request *regions;	/* as registered */
	size_t n_regions;
	uint64_t connections;		/* open on its channel */
};

/*
 * A reply. error and message are every reply's; the members of the reply
 * to an op are in the substructure of its name, except region (get, show,
 * destroy) and message (errors, reload, destroy). proto_reply_encode() and
 * proto_reply_decode() take the op the reply answers: there is one encoder
 * and one decoder for the reply to each op, in protocol.c, and a reply with
 * an error is the same for every op.
 */
struct proto_reply {
	int error;			/* 0 for "ok", else a positive errno */
	char *message;			/* errors; reload, destroy: what was done (optional) */
	bool has_region;		/* show: always; get: from this daemon; destroy: if configured */
	struct proto_region_info region;
	struct {
		uint32_t *versions;	/* the protocol versions the daemon speaks */
		size_t n_versions;
		char *server;		/* "mshare-owner VERSION" */
		uint64_t max_message;
		uid_t uid;		/* the client's, as the daemon sees it */
	} hello;
	struct {
		enum access_mode mode;	/* as asked; ACCESS_NONE if absent */
	} get;
	struct {
		struct proto_region_info *regions;
		size_t n_regions;
		bool has_next;		/* the page is full: ask again from next */
		uint32_t next;
	} list;
	struct {
		char *source;		/* "FILE:LINE" of its [Region] */
		char *error;		/* failed: the errno name */
		char *pending_source;	/* changed: where the new configuration is */
		bool has_grants;	/* root peers only */
		struct proto_grant *grants;
		size_t n_grants;
	} show;
	struct {
		struct proto_region_request *regions;
		size_t n_regions;
	} reg;				/* register */
	struct {
		struct proto_container_info *containers;
		size_t n_containers;
	} containers;
	json_t *object;			/* decoded: the whole reply, for printing it as it came */
};

void proto_reply_done(struct proto_reply *reply);

/*
 * The reply to op: {"version":1,"status":"ok", ...the members of op's
 * reply} or, if reply->error is set, the error with its errno name and
 * reply->message. -EMSGSIZE past MSHARE_PROTOCOL_MAX_MESSAGE, -EILSEQ if a
 * string of it is not valid UTF-8 (JSON cannot carry it), -ENOMEM. The
 * same for proto_request_encode().
 */
int proto_reply_encode(enum proto_op op, const struct proto_reply *reply, char **ret, size_t *ret_len);
/* An error reply (error > 0, or -errno); a message that is not UTF-8 is
 * replaced by one that says so. */
int proto_error_encode(int error, const char *message, char **ret, size_t *ret_len);

/*
 * Decodes the reply to op. An error reply is decoded as one whatever op
 * was (an errno name this side does not know is EPROTO); an "ok" reply
 * fills op's members. Fails like proto_request_decode(), setting
 * *ret_error.
 */
int proto_reply_decode(enum proto_op op, const void *buf, size_t len, struct proto_reply *ret,
		       char **ret_error);

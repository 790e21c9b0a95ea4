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

/* What the daemon tells about a region, in list, show and get replies. */
struct proto_region_info {
	char *name;
	char *state;			/* "active", "changed", "retiring" */
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
json_t *proto_region_info_to_json(const struct proto_region_info *info);
int proto_region_info_from_json(json_t *o, struct proto_region_info *ret, char **ret_error);

struct proto_reply {
	int error;			/* 0 for "ok", else a positive errno */
	char *message;			/* for errors */
	json_t *object;			/* the whole reply, for op-specific members */
};

void proto_reply_done(struct proto_reply *reply);
int proto_reply_decode(const void *buf, size_t len, struct proto_reply *ret, char **ret_error);

/* {"version":1,"status":"ok"} or the error with its errno name and message. */
json_t *proto_reply_new_ok(void);
json_t *proto_reply_new_error(int error, const char *format, ...) _printf_(2, 3);

/* Compact JSON, failing with -EMSGSIZE past the maximum message size. */
int proto_dump(json_t *o, char **ret, size_t *ret_len);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for every decoder of the owner protocol: whatever a peer
 * sends, decoding it as a request and as the reply to each op must fail
 * cleanly or succeed, and what is decoded must encode and decode to the
 * same message again. Build and run with
 * `make -C mshare-helper fuzz-run FUZZ_SECONDS=30`.
 */
#include <assert.h>

#include "mshare-common/protocol.h"

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_request_roundtrip(const struct proto_request *req)
{
	struct proto_request again = {};
	char *text = NULL, *error = NULL;
	size_t len;
	int k;

	k = proto_request_encode(req, &text, &len);
	if (k == -EMSGSIZE) /* re-encoding may escape more than the peer did */
		return;
	assert(k == 0);
	k = proto_request_decode(text, len, &again, &error);
	assert(k == 0);
	assert(again.op == req->op);
	assert(str_eq(again.client, req->client));
	assert(str_eq(again.region, req->region));
	assert(again.mode == req->mode);
	assert(again.start == req->start);
	assert(again.force == req->force);
	assert(again.has_container == req->has_container);
	assert(str_eq(again.container_name, req->container_name));
	assert(str_eq(again.container_id, req->container_id));
	assert(again.n_annotations == req->n_annotations);
	assert(again.n_regions == req->n_regions);
	proto_request_done(&again);
	free(text);
	free(error);
}

static void fuzz_request(const uint8_t *data, size_t size)
{
	struct proto_request req = {};
	char *error = NULL;
	int k;

	k = proto_request_decode(data, size, &req, &error);
	if (k == 0) {
		assert(!error);
		if (req.region)
			assert(region_name_is_valid(req.region));
		check_request_roundtrip(&req);
	} else
		assert(k < 0);
	proto_request_done(&req);
	free(error);
}

/*
 * A decoded reply, encoded, must decode again, and encode to the same text:
 * the decoder keeps all the encoder writes. (Not the peer's text: members
 * not in the protocol are dropped, and escapes may differ.)
 */
static void check_reply_roundtrip(enum proto_op op, const struct proto_reply *reply)
{
	struct proto_reply again = {};
	char *text = NULL, *text2 = NULL, *error = NULL;
	size_t len, len2;
	int k;

	k = proto_reply_encode(op, reply, &text, &len);
	if (k == -EMSGSIZE)
		return;
	assert(k == 0);
	k = proto_reply_decode(op, text, len, &again, &error);
	assert(k == 0);
	assert(again.error == reply->error);
	k = proto_reply_encode(op, &again, &text2, &len2);
	assert(k == 0);
	assert(len == len2 && memcmp(text, text2, len) == 0);
	proto_reply_done(&again);
	free(text);
	free(text2);
	free(error);
}

static void fuzz_reply(enum proto_op op, const uint8_t *data, size_t size)
{
	struct proto_reply reply = {};
	char *error = NULL;
	int k;

	k = proto_reply_decode(op, data, size, &reply, &error);
	if (k == 0) {
		assert(!error && reply.error >= 0);
		check_reply_roundtrip(op, &reply);
	} else
		assert(k < 0);
	proto_reply_done(&reply);
	free(error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_request(data, size);
	for (int op = 0; op < _PROTO_OP_MAX; op++)
		fuzz_reply((enum proto_op)op, data, size);
	return 0;
}

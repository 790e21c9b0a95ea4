/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the owner protocol's decoders: whatever a peer sends,
 * decoding must fail cleanly or succeed, and a decoded request must encode
 * and decode to the same request again. Build and run with
 * `make fuzz-run FUZZ_SECONDS=30`.
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
	proto_request_done(&again);
	free(text);
	free(error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_request req = {};
	struct proto_reply reply = {};
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
	error = NULL;

	k = proto_reply_decode(data, size, &reply, &error);
	if (k == 0) {
		struct proto_region_info info = {};
		char *e2 = NULL;
		json_t *region = json_object_get(reply.object, "region");

		assert(reply.error >= 0);
		if (region && proto_region_info_from_json(region, &info, &e2) == 0)
			proto_region_info_done(&info);
		free(e2);
	}
	proto_reply_done(&reply);
	free(error);
	return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the daemon leaves for its next start: the state (state.h) to JSON
 * and back, what it refuses, the fd store's names (fdstore.h), reading a
 * state memfd only if it is sealed, and the configuration diff the journal
 * shows for a region that changed.
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "config.h"
#include "fdstore.h"
#include "mshare-common/tap.h"
#include "proto-equal.h"
#include "state.h"

static struct container_annotation annotations[] = {
	{ "io.mshare.regions", "pool:rw,catalog" },
	{ "tier", "prod \"quoted\" \xc3\xa9" },
};

static struct proto_region_request requests[] = {
	{ "pool", ACCESS_RW },
	{ "catalog", ACCESS_RO },
};

static const struct state sample = {
	.generation = 7,
	.next_serial = 12,
	.regions = (struct state_region[]){
		{ .config = { .name = "pool", .size = 64 << 20, .backing = BACKING_ANONYMOUS,
			      .prot = PROT_READ | PROT_WRITE, .populate = true,
			      .source = "/etc/mshare/regions.d/test.conf:2" },
		  .inode = 4242, .populated = false },
		{ .config = { .name = "file.1", .size = 4096, .backing = BACKING_FILE,
			      .path = "/srv/data", .offset = 8192, .prot = PROT_READ },
		  .inode = 17, .populated = true },
	},
	.n_regions = 2,
	.containers = (struct state_container[]){
		{ .serial = 11, .id = "4f0c", .name = "web-1", .annotations = annotations,
		  .n_annotations = 2, .regions = requests, .n_regions = 2, .pid = 1234,
		  .cgroup = "/machine.slice/crun-4f0c.scope" },
		{ .serial = 3, .id = "db", .regions = requests, .n_regions = 1, .pid = 99,
		  .cgroup = "/db" },
	},
	.n_containers = 2,
};

static bool same_config(const struct region_config *a, const struct region_config *b)
{
	return region_config_equal(a, b) && a->populate == b->populate &&
	       streq(a->source ?: "", b->source ?: "");
}

static bool same_container(const struct state_container *a, const struct state_container *b)
{
	if (a->serial != b->serial || !streq(a->id, b->id) || !streq(a->name ?: "", b->name ?: "") ||
	    a->pid != b->pid || !streq(a->cgroup, b->cgroup) || a->n_annotations != b->n_annotations ||
	    a->n_regions != b->n_regions)
		return false;
	return region_requests_equal(a->regions, b->regions, a->n_regions) &&
	       annotations_equal(a->annotations, b->annotations, a->n_annotations);
}

static void test_roundtrip(void)
{
	_cleanup_(state_done) struct state out = {};
	_cleanup_free_ char *text = NULL, *error = NULL;
	size_t len;
	bool same;
	int k;

	k = state_to_json(&sample, &text, &len);
	if (!ok(k == 0, "encode a state"))
		return;
	k = state_from_json(text, len, &out, &error);
	ok(k == 0, "decode it again%s%s", error ? ": " : "", strempty(error));
	same = k == 0 && out.generation == 7 && out.next_serial == 12 && out.n_regions == 2 &&
	       out.n_containers == 2;
	for (size_t i = 0; same && i < 2; i++)
		same = same_config(&out.regions[i].config, &sample.regions[i].config) &&
		       out.regions[i].inode == sample.regions[i].inode &&
		       out.regions[i].populated == sample.regions[i].populated &&
		       same_container(&out.containers[i], &sample.containers[i]);
	ok(same, "the round trip keeps regions (config, inode, populated) and containers: %s", text);
}

static void bad(const char *what, const char *text, int want)
{
	_cleanup_(state_done) struct state out = {};
	_cleanup_free_ char *error = NULL;
	int k = state_from_json(text, strlen(text), &out, &error);

	ok(k == want && error, "refuses %s: %s", what, strna(error));
}

#define REGION(name, inode) \
	"{\"inode\":" #inode ",\"populated\":true,\"config\":{\"name\":\"" name "\",\"size\":4096," \
	"\"backing\":\"anonymous\",\"protection\":\"rw\",\"populate\":false}}"
#define CONTAINER(serial, id) \
	"{\"serial\":" #serial ",\"id\":\"" id "\",\"regions\":[{\"region\":\"pool\",\"mode\":\"ro\"}]," \
	"\"pid\":5,\"cgroup\":\"/c\"}"

static void test_refusals(void)
{
	_cleanup_(state_done) struct state out = {};
	_cleanup_free_ char *error = NULL;
	const char *later = "{\"version\":1,\"generation\":2,\"next_serial\":4,\"future\":[1],\"regions\":["
			    REGION("a", 1) "],\"containers\":[" CONTAINER(3, "x") "]}";

	ok(state_from_json(later, strlen(later), &out, &error) == 0 && out.n_regions == 1 &&
	   out.n_containers == 1, "members of a later version are ignored%s%s", error ? ": " : "",
	   strempty(error));

	bad("garbage", "{\"version\":1,", -EBADMSG);
	bad("an array", "[]", -EBADMSG);
	bad("a newer version", "{\"version\":2,\"generation\":1,\"next_serial\":0,\"regions\":[],"
	    "\"containers\":[]}", -EPROTONOSUPPORT);
	bad("generation 0", "{\"version\":1,\"generation\":0,\"next_serial\":0,\"regions\":[],"
	    "\"containers\":[]}", -EBADMSG);
	bad("no regions member", "{\"version\":1,\"generation\":1,\"next_serial\":0,\"containers\":[]}",
	    -EBADMSG);
	bad("a bad region name", "{\"version\":1,\"generation\":1,\"next_serial\":0,\"regions\":["
	    REGION("../x", 1) "],\"containers\":[]}", -EBADMSG);
	bad("a region twice", "{\"version\":1,\"generation\":1,\"next_serial\":0,\"regions\":["
	    REGION("a", 1) "," REGION("a", 2) "],\"containers\":[]}", -EBADMSG);
	bad("two regions with one inode", "{\"version\":1,\"generation\":1,\"next_serial\":0,\"regions\":["
	    REGION("a", 1) "," REGION("b", 1) "],\"containers\":[]}", -EBADMSG);
	bad("inode 0", "{\"version\":1,\"generation\":1,\"next_serial\":0,\"regions\":["
	    REGION("a", 0) "],\"containers\":[]}", -EBADMSG);
	bad("a serial not below next_serial", "{\"version\":1,\"generation\":1,\"next_serial\":3,"
	    "\"regions\":[],\"containers\":[" CONTAINER(3, "x") "]}", -EBADMSG);
	bad("one container id twice", "{\"version\":1,\"generation\":1,\"next_serial\":9,"
	    "\"regions\":[],\"containers\":[" CONTAINER(1, "x") "," CONTAINER(2, "x") "]}", -EBADMSG);
	bad("an unknown backing", "{\"version\":1,\"generation\":1,\"next_serial\":0,\"regions\":["
	    "{\"inode\":1,\"populated\":true,\"config\":{\"name\":\"a\",\"size\":1,\"backing\":\"tape\","
	    "\"protection\":\"rw\",\"populate\":false}}],\"containers\":[]}", -EBADMSG);
	bad("a file region without a path", "{\"version\":1,\"generation\":1,\"next_serial\":0,\"regions\":["
	    "{\"inode\":1,\"populated\":true,\"config\":{\"name\":\"a\",\"size\":1,\"backing\":\"file\","
	    "\"protection\":\"r\",\"populate\":false}}],\"containers\":[]}", -EBADMSG);
}

static void test_names(void)
{
	_cleanup_free_ char *region = fdstore_region_name("db-main.2");
	_cleanup_free_ char *channel = fdstore_channel_name(17, false);
	_cleanup_free_ char *pidfd = fdstore_channel_name(17, true);
	const char *arg;
	uint64_t n = 0;

	ok(region && streq(region, "store-region-db-main.2") && channel && streq(channel, "store-channel-17") &&
	   pidfd && streq(pidfd, "store-pidfd-17"), "entry names: %s, %s, %s", strna(region), strna(channel),
	   strna(pidfd));
	ok(fdstore_parse_name("store-region-db-main.2", &arg) == FDSTORE_REGION && streq(arg, "db-main.2"),
	   "a region's name parses");
	ok(fdstore_parse_name("store-state-12", &arg) == FDSTORE_STATE && fdstore_parse_number(arg, &n) == 0 &&
	   n == 12, "a state's name parses, with its generation");
	ok(fdstore_parse_name("store-pidfd-3", &arg) == FDSTORE_PIDFD &&
	   fdstore_parse_name("store-channel-3", &arg) == FDSTORE_CHANNEL, "channel and pidfd names parse");
	ok(fdstore_parse_name("mshare-owner.socket", &arg) == FDSTORE_OTHER &&
	   fdstore_parse_name("unknown", &arg) == FDSTORE_OTHER && fdstore_parse_name("", &arg) == FDSTORE_OTHER,
	   "the socket unit's names are not ours");
	ok(fdstore_parse_name("store-region-../x", &arg) == FDSTORE_UNKNOWN &&
	   fdstore_parse_name("store-state-x1", &arg) == FDSTORE_UNKNOWN &&
	   fdstore_parse_name("store-state-01", &arg) == FDSTORE_UNKNOWN &&
	   fdstore_parse_name("store-state-", &arg) == FDSTORE_UNKNOWN &&
	   fdstore_parse_name("store-state-99999999999999999999", &arg) == FDSTORE_UNKNOWN &&
	   fdstore_parse_name("store-lease-1", &arg) == FDSTORE_UNKNOWN,
	   "our prefix with a bad argument or an unknown kind is FDSTORE_UNKNOWN");
}

static void test_state_memfd(void)
{
	const char *text = "{\"version\":1}";
	_cleanup_free_ char *back = NULL;
	_cleanup_close_ int fd = memfd_create("state", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	_cleanup_close_ int plain = memfd_create("plain", MFD_CLOEXEC);
	size_t len = 0;

	if (!ok(fd >= 0 && plain >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) &&
		write(plain, text, strlen(text)) == (ssize_t)strlen(text), "two memfds with a state"))
		return;
	ok(fdstore_read_state(plain, &back, &len) == -EBADMSG, "an unsealed memfd is no state");
	ok(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW) == 0 &&
	   fdstore_read_state(fd, &back, &len) == -EBADMSG, "nor one that may still shrink");
	ok(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) == 0 &&
	   fdstore_read_state(fd, &back, &len) == 0 && len == strlen(text) && streq(back, text),
	   "a sealed one reads back in full");
}

static void test_diff(void)
{
	struct region_config a = { .name = "pool", .size = 64 << 20, .backing = BACKING_ANONYMOUS,
				   .prot = PROT_READ | PROT_WRITE };
	struct region_config b = a;
	_cleanup_free_ char *same = NULL, *size = NULL, *more = NULL;

	same = region_config_diff(&a, &b);
	b.size = 128 << 20;
	size = region_config_diff(&a, &b);
	b.backing = BACKING_FILE;
	b.path = "/srv/pool";
	b.prot = PROT_READ;
	b.populate = true;
	more = region_config_diff(&a, &b);
	ok(same && streq(same, ""), "no difference: \"\"");
	ok(size && streq(size, "Size= 67108864 -> 134217728"), "Size=: %s", strna(size));
	ok(more && streq(more, "Size= 67108864 -> 134217728, Backing= anonymous -> file, "
			       "Path= (none) -> /srv/pool, Protection= rw -> r"),
	   "several keys, Populate= left out: %s", strna(more));
}

int main(void)
{
	test_roundtrip();
	test_refusals();
	test_names();
	test_state_memfd();
	test_diff();
	return tap_finish();
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uid_map and gid_map: who the container's root is on the host. */
#include <unistd.h>

#include "idmap.h"
#include "mshare-common/macro.h"
#include "mshare-common/tap.h"

static void map(const char *text, int want_r, unsigned long want)
{
	_cleanup_free_ char *shown = strdup(text);
	unsigned long v = 12345;
	int r = idmap_parse_root(text, &v);

	for (char *p = shown; p && *p; p++)
		if (*p == '\n')
			*p = '|';
	ok(r == want_r && (r < 0 || v == want), "map \"%s\" -> %d, %lu", strna(shown), r, v);
}

int main(void)
{
	uid_t uid;
	gid_t gid;
	int r;

	map("         0          0 4294967295\n", 0, 0);
	map("         0     100000      65536\n", 0, 100000);
	map("1000 1000 1\n0 100000 1000\n", 0, 100000);
	map("0 4294967295 1\n", 0, 4294967295UL);
	map("0 0 4294967295", 0, 0); /* no final newline */
	map("1 100001 65535\n", -ENOENT, 0);
	map("0 100000 0\n", -ENOENT, 0);
	map("", -ENOENT, 0);
	map("0 100000\n", -EBADMSG, 0);
	map("0 100000 1 2\n", -EBADMSG, 0);
	map("zero 100000 1\n", -EBADMSG, 0);
	map("0 -1 1\n", -EBADMSG, 0);
	map("0 4294967296 1\n", -EBADMSG, 0);

	uid = gid = 12345;
	r = idmap_container_root(getpid(), &uid, &gid);
	ok(r == 0 && uid != 12345 && gid != 12345, "our own /proc/PID/uid_map and gid_map: root is %u:%u",
	   (unsigned)uid, (unsigned)gid);
	ok(idmap_container_root(0, &uid, &gid) == -ENOENT, "no process 0");
	return tap_finish();
}

#!/bin/sh
# Our userspace as `make install` put it into the image: every ELF file
# finds its libraries, and the units the image enables are active. Skipped
# when the image was built without it (build.sh --no-userspace).
. "$(dirname "$0")/tap.sh"
files=$(find /usr/bin /usr/sbin /usr/lib/x86_64-linux-gnu -maxdepth 1 -name '*mshare*' -type f 2>/dev/null)
units=$(cd /usr/lib/systemd/system && ls mshare-owner.* 2>/dev/null)
if [ -z "$files" ] && [ -z "$units" ]; then
	ktap_plan "1"
	ok "our userspace # SKIP not installed in this image"
	exit 0
fi
ktap_plan "2"
missing=
for f in $files; do
	head -c4 "$f" | grep -q ELF || continue
	m=$(ldd "$f" 2>&1 | grep 'not found')
	[ -z "$m" ] || missing="$missing
$f: $m"
done
if [ -z "$missing" ]; then ok "every ELF file of ours finds its libraries"; else not_ok "libraries missing:$missing"; fi
bad=
for u in $(systemctl list-unit-files --no-legend --state=enabled 'mshare-*' | awk '{ print $1 }'); do
	systemctl is-active -q "$u" || bad="$bad $u($(systemctl is-active "$u"))"
done
if [ -z "$bad" ]; then ok "enabled mshare units are active"; else not_ok "enabled mshare units not active:$bad"; fi

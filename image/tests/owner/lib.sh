# Shared by the in-guest tests of mshare-owner (owner/*.sh); sourced.
# shellcheck disable=SC2034 # used by the scripts that source this
# They run as root under mshare-guest-tests.service in the booted image,
# against the installed daemon and units, with the test tools of
# `make -C mshare-helper install-tests` next to them (in mshare-helper/).
# shellcheck shell=bash
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../smoke/tap.sh"

PROBE=$here/mshare-helper/region-probe
STRESS=$here/mshare-helper/owner-stress
UNIT=mshare-owner.service
CGROUP=/sys/fs/cgroup/system.slice/$UNIT
CONF_DIR=/etc/mshare/regions.d
# Host users of the tests: READER is in group READERS, which pool is
# granted read-only to; STRANGER has no grant at all.
READER=4242
READERS=4343
STRANGER=4444
MiB=$((1024 * 1024))

# The test configuration, next to the installed example.conf: pool is
# populated at start, cache is not.
write_config() {
	cat >"$CONF_DIR/test.conf" <<'CONF'
[Region]
Name=pool
Size=64M
Backing=anonymous
Protection=rw
Populate=yes

[Region]
Name=cache
Size=16M
Backing=memfd
Populate=no

[Grant]
Region=pool
Mode=rw
User=root

[Grant]
Region=pool
Mode=ro
Group=4343

[Grant]
Region=cache
Mode=ro
Group=4343
CONF
}

# Start the daemon afresh on the test configuration; on failure its
# journal goes to the TAP output.
fresh_owner() {
	systemctl stop "$UNIT" 2>/dev/null
	write_config
	systemctl reset-failed "$UNIT" 2>/dev/null
	systemctl start "$UNIT" && return 0
	journalctl -b -u "$UNIT" -n 30 --no-pager 2>&1 | sed 's/^/# /'
	return 1
}

main_pid() { systemctl show -P MainPID "$UNIT"; }

# region_field NAME FIELD: FIELD of region NAME in `mshare-ctl --json list`.
region_field() {
	mshare-ctl --json list | jq -r --arg n "$1" --arg f "$2" '.[] | select(.name == $n) | .[$f]'
}

region_names() { mshare-ctl --json list | jq -r '.[].name' | sort | tr '\n' ' '; }

# as USER GROUP CMD...: run CMD with those ids and no supplementary groups
# other than GROUP.
as() {
	local u=$1 g=$2
	shift 2
	setpriv --reuid="$u" --regid="$g" --groups="$g" -- "$@"
}

# probe [--ro] [--as UID GID] NAME ARGS...: region-probe on a descriptor of
# region NAME that mshare-ctl run asks the daemon for.
probe() {
	local ro=() who=()
	[ "$1" != --ro ] || { ro=(--ro); shift; }
	[ "$1" != --as ] || { who=(as "$2" "$3"); shift 3; }
	local name=$1
	shift
	"${who[@]}" mshare-ctl run "$name" "${ro[@]}" -- "$PROBE" "$@"
}

# field KEY LINE: the value of KEY=value in a probe's report line.
field() { sed -n "s/.*\\b$1=\\([0-9-]*\\).*/\\1/p" <<<"$2"; }

memstat() { awk -v k="$1" '$1 == k { print $2 }' "$CGROUP/memory.stat"; }

# refused DESCRIPTION TEXT CMD...: ok if CMD exits with status 1 and says
# TEXT (the daemon's reason, as mshare-ctl prints it).
refused() {
	local desc=$1 text=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && grep -qF -- "$text" <<<"$out"; then
		ok "$desc"
	else
		not_ok "$desc (status $rc, expected 1 with '$text')"
	fi
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'
}

# cheap DESCRIPTION REPORT: ok if a probe's report shows a client that
# shared the region's page tables: a handful of faults and no page tables
# of its own for the region (plain shared memory would take one fault and
# 8 bytes of page table per page: 16384 faults and 128 KiB for 64 MiB).
cheap() {
	local desc=$1 rep=$2 f p
	f=$(field faults "$rep") p=$(field pte_kb "$rep")
	if [ -n "$f" ] && [ "$f" -le 16 ] && [ -n "$p" ] && [ "$p" -le 8 ]; then
		ok "$desc ($rep)"
	else
		not_ok "$desc: '$rep' (expected faults <= 16, pte_kb <= 8)"
	fi
}

# wait_for SECONDS CMD...: poll CMD every half second until it succeeds.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.5
	done
}

# hold NAME SEED BYTES: start a root client that maps region NAME read-only
# and keeps reading it; sets HOLDER (its pid, the probe itself: mshare-ctl
# execs it) and HOLDER_OUT once it has said "ready".
hold() {
	HOLDER_OUT=$(mktemp)
	# Not through probe(): a shell function in the background is a
	# subshell, and $! would be the subshell, not the client.
	mshare-ctl run "$1" --ro -- "$PROBE" --bytes="$3" hold "$2" >"$HOLDER_OUT" 2>&1 &
	HOLDER=$!
	wait_for 60 grep -q '^ready$' "$HOLDER_OUT"
}

#!/bin/bash
# What makes a container fail to start, with the hook's message in crun's
# error output (the annotation run.oci.hooks.stderr=/dev/stderr lets it
# through) and in the journal: a bad annotation, an unknown region, a grant
# refused, the daemon not running, the daemon not answering in time. No
# container is left behind and nothing stays registered.
. "$(dirname "$0")/lib.sh"
echo "1..23"
fresh

# fails ID ANNOTATIONS TEXT DESCRIPTION: the container fails to start, crun
# prints TEXT (the hook's message) and "error executing hook", and the journal
# has TEXT for the container. Three checks.
fails() {
	local id=$1 ann=$2 text=$3 desc=$4 b
	b=$(bundle "$id" "$ann" /bin/true)
	crun_run "$id" "$b"
	[ -z "${AFTER_RUN:-}" ] || $AFTER_RUN
	if [ "$rc" != 0 ] && grep -qF -- "mshare-oci-hook: container $id: $text" <<<"$out" &&
		grep -q 'error executing hook' <<<"$out"; then
		ok "$desc: the container fails, crun shows the hook's message"
	else
		not_ok "$desc: status $rc, expected a failure with 'mshare-oci-hook: container $id: $text'"
	fi
	show
	if journal_has "$id" "container $id: $text"; then
		ok "$desc: the message is in the journal (SYSLOG_IDENTIFIER=mshare-oci-hook CONTAINER_ID=$id PRIORITY=3)"
	else
		not_ok "$desc: no such message in the journal for $id"
		journalctl -q -o short-monotonic SYSLOG_IDENTIFIER=mshare-oci-hook | tail -n 5 | sed 's/^/# /'
	fi
	if ! crun list -q | grep -qx "$id" && [ -z "$(registered 2>/dev/null)" ]; then
		ok "$desc: no container is left behind and nothing is registered"
	else
		not_ok "$desc: left behind: crun list '$(crun list -q | tr '\n' ' ')', registered '$(registered 2>/dev/null)'"
	fi
}
E='"run.oci.hooks.stderr": "/dev/stderr", "io.mshare.test": "trusted"'

fails bad-1 "{\"io.mshare.regions\": \"pool:wr\", $E}" \
	"bad annotation io.mshare.regions=\"pool:wr\": region 'pool': mode 'wr' is neither 'ro' nor 'rw'" "a bad mode"
fails bad-2 "{\"io.mshare.regions\": \"pool,../etc\", $E}" \
	"bad annotation io.mshare.regions=\"pool,../etc\": '../etc' is not a region name" "a bad region name"
fails unknown-1 "{\"io.mshare.regions\": \"pool:rw,nosuch\", $E}" \
	"mshare-owner refused the registration: " "an unknown region"
if grep -q "nosuch.*(ENOENT)" <<<"$out"; then ok "the refusal names the region and says ENOENT"; else not_ok "no ENOENT for nosuch"; fi
fails refused-1 '{"io.mshare.regions": "pool:rw", "run.oci.hooks.stderr": "/dev/stderr"}' \
	"mshare-owner refused the registration: " "a grant refused (no io.mshare.test annotation)"
if grep -q "pool.*(EACCES)" <<<"$out"; then ok "the refusal names the region and says EACCES"; else not_ok "no EACCES for pool"; fi

# Without run.oci.hooks.stderr crun throws the hook's output away: only
# the journal has the message.
b=$(bundle quiet-1 '{"io.mshare.regions": "nosuch"}' /bin/true)
crun_run quiet-1 "$b"
if [ "$rc" != 0 ] && grep -q 'error executing hook' <<<"$out" && ! grep -q 'mshare-oci-hook:' <<<"$out" &&
	journal_has quiet-1 "container quiet-1: mshare-owner refused the registration"; then
	ok "without run.oci.hooks.stderr the container fails too, and the reason is in the journal"
else
	not_ok "quiet-1: status $rc"
fi
show

# The daemon not running: socket unit and service stopped.
systemctl stop mshare-owner.socket "$UNIT"
fails down-1 "{\"io.mshare.regions\": \"pool\", $E}" \
	"mshare-owner is not running: cannot connect to /run/mshare/owner.sock:" "the daemon not running"
systemctl start mshare-owner.socket "$UNIT"

# The daemon not answering: stopped with SIGSTOP; the hook gives up after
# its 5 s deadline.
pid=$(main_pid)
kill -STOP "$pid"
start=$(date +%s)
continued() {
	secs=$(($(date +%s) - start))
	kill -CONT "$pid"
}
AFTER_RUN=continued fails slow-1 "{\"io.mshare.regions\": \"pool\", $E}" \
	"mshare-owner did not answer within 5 s" "the daemon not answering (SIGSTOP)"
if [ "$secs" -ge 5 ] && [ "$secs" -le 60 ]; then
	ok "crun gave up after $secs s (the hook's deadline is 5 s)"
else
	not_ok "crun took $secs s"
fi
if [ "$(main_pid)" = "$pid" ] && b=$(bundle after-1 "{\"io.mshare.regions\": \"pool\", $E}" /bin/true) &&
	crun_run after-1 "$b" && [ "$rc" = 0 ]; then
	ok "the daemon, continued, serves the next container"
else
	not_ok "after SIGCONT: status $rc"
	show
fi

#!/bin/bash
# What makes a container fail to start, with the hook's message in crun's
# error output (the annotation run.oci.hooks.stderr=/dev/stderr lets it
# through) and in the journal: a bad annotation, an unknown region, a grant
# refused (daemon.sh: the daemon not running or not answering). No
# container is left behind and nothing stays registered.
. "$(dirname "$0")/lib.sh"
ktap_plan "15"
fresh

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


#!/bin/bash
# The daemon not running (socket unit and service stopped) and the daemon
# not answering (stopped with SIGSTOP: the hook gives up after its 5 s
# deadline) make a container fail to start, with the hook's message in
# crun's error output and in the journal; continued, the daemon serves the
# next container.
. "$(dirname "$0")/lib.sh"
ktap_plan "8"
fresh
E='"run.oci.hooks.stderr": "/dev/stderr", "io.mshare.test": "trusted"'

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

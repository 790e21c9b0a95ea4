#!/bin/sh
# systemd is PID 1 and the boot finished with every unit healthy.
. "$(dirname "$0")/tap.sh"
ktap_plan "4"
check "PID 1 is systemd" sh -c '[ "$(cat /proc/1/comm)" = systemd ]'
state=$(timeout 300 systemctl is-system-running --wait 2>&1)
if [ "$state" = running ]; then
	ok "system state is running"
else
	not_ok "system state is '$state', not running"
	systemctl --failed --no-pager --full 2>&1 | sed 's/^/# /'
	for u in $(systemctl --failed --no-legend --plain | awk '{ print $1 }'); do
		journalctl -b -u "$u" --no-pager -o short-monotonic 2>&1 | tail -n 20 | sed 's/^/# /'
	done
fi
check "multi-user.target is active" systemctl is-active multi-user.target
check "journald answers" sh -c 'journalctl -b --no-pager -n 1 >/dev/null'

#!/bin/bash
# Containers started and stopped in a loop (two at a time), each getting
# pool through its channel (20 in hook.list, 100 in `make soak`), leave the
# daemon as they found it: the same open descriptors,
# its resident memory within 512 KiB, no registered container. A container
# whose process is killed is dropped by the daemon (its pidfd) before
# poststop runs. Under TCG a container start takes seconds, so the loop is
# split over list entries that each stay within the per-entry timeout:
#   loop.sh begin     the daemon afresh, two containers, the daemon's state
#   loop.sh run N     N more containers (entries of 10)
#   loop.sh end N     N containers ran in all; the daemon's state compared;
#                     a killed container
. "$(dirname "$0")/lib.sh"
STATE=/run/hook-loop.state
ann='{"io.mshare.regions": "pool:rw,catalog", "io.mshare.test": "trusted"}'

case $1 in
begin)
	ktap_plan "1"
	fresh
	b=$(bundle loop "$ann" /bin/hook-probe get pool)
	# The daemon's first containers, two at once as in the loop, before the
	# baseline: its lazy allocations and its peak with two registrations.
	{ crun_run loop-w1 "$b"; echo "$rc $out" >/run/hook-loop.w1; } &
	crun_run loop-w2 "$b"
	wait
	if [ "$rc" = 0 ] && [ "$out" = ok ] && [ "$(cat /run/hook-loop.w1)" = "0 ok" ]; then
		ok "two first containers, at once, got pool"
	else
		not_ok "warm-up: loop-w1 '$(cat /run/hook-loop.w1)', loop-w2 status $rc"
	fi
	show
	rm -f /run/hook-loop.w1
	echo "pid=$(main_pid) fds=$(owner_fds) rss=$(owner_rss) n=0 ms=0" >"$STATE"
	cat "$STATE" | sed 's/^/# /'
	;;
run)
	. "$STATE"
	ktap_plan "1"
	# Two at a time: a container start is a chain of processes (crun, the
	# hook, the workload) that keeps about one vCPU busy; two chains keep
	# both busy, and the daemon serves registrations that overlap.
	res=$(mktemp -d) start=$(date +%s%N) failed=0
	for i in $(seq $((n + 1)) $((n + $2))); do
		{
			crun_run "loop-$i" "$BUNDLES/loop"
			printf '%s\n%s\n' "$rc" "$out" >"$res/$i"
		} &
		[ $(((i - n) % 2)) != 0 ] || wait
	done
	wait
	t=$((($(date +%s%N) - start) / 1000000))
	for i in $(seq $((n + 1)) $((n + $2))); do
		rc=$(head -n1 "$res/$i" 2>/dev/null) out=$(tail -n +2 "$res/$i" 2>/dev/null)
		if [ "$rc" != 0 ] || [ "$out" != ok ]; then
			failed=$((failed + 1))
			[ "$failed" -gt 3 ] || { echo "# loop-$i: status ${rc:-none}"; show; }
		fi
	done
	rm -rf "$res"
	if [ "$failed" = 0 ]; then
		ok "containers $((n + 1)) to $((n + $2)) started two at a time, got pool and stopped ($((t / $2)) ms of wall time per container)"
	else
		not_ok "$failed of containers $((n + 1)) to $((n + $2)) failed"
	fi
	sed -i -e "s/ n=$n / n=$((n + $2)) /" -e "s/ ms=$ms\$/ ms=$((ms + t))/" "$STATE"
	;;
end)
	. "$STATE"
	ktap_plan "9"
	fds0=$fds rss0=$rss
	if [ "$n" = "$2" ] && [ "$(main_pid)" = "$pid" ]; then
		ok "$n containers ran two at a time, the same daemon (pid $pid) served them all ($((ms / n)) ms of wall time per container)"
	else
		not_ok "$n containers ran; the daemon was pid $pid, is $(main_pid)"
	fi
	fds1=$(owner_fds) rss1=$(owner_rss)
	echo "# before: $fds0 descriptors, VmRSS $rss0 kB; after: $fds1 descriptors, VmRSS $rss1 kB"
	if [ "$fds1" = "$fds0" ]; then ok "the daemon holds $fds1 descriptors, as before"; else not_ok "descriptors: $fds0 before, $fds1 after"; fi
	if [ "$rss1" -le $((rss0 + 512)) ]; then
		ok "its VmRSS is within 512 KiB of where it was ($rss0 -> $rss1 kB)"
	else
		not_ok "VmRSS grew from $rss0 to $rss1 kB"
	fi
	if [ -z "$(registered)" ]; then ok "no container is registered"; else not_ok "registered: $(registered)"; fi
	if [ -z "$(crun list -q)" ]; then ok "crun has no container left"; else not_ok "crun list: $(crun list -q | tr '\n' ' ')"; fi

	# Killed: SIGKILL to the container's process, no crun delete (no poststop).
	b=$(bundle killed "$ann" /bin/sleep 600)
	crun run -d -b "$b" killed-1 >/dev/null 2>&1 </dev/null
	if [ "$(registered)" = "killed-1 " ]; then ok "a detached container is registered"; else not_ok "registered: '$(registered)'"; fi
	kill -KILL "$(crun state killed-1 | jq .pid)"
	if wait_for 30 sh -c '[ -z "$(mshare-ctl --json containers | jq -r ".[].id")" ]'; then
		ok "killed, it is dropped by the daemon before poststop ran"
	else
		not_ok "still registered after the kill: $(registered)"
	fi
	crun delete -f killed-1 >/dev/null 2>&1
	if [ "$(owner_fds)" = "$fds0" ]; then ok "and the daemon closed its descriptors ($(owner_fds))"; else not_ok "descriptors: $fds0 before, $(owner_fds) now"; fi
	check "the daemon still serves: pool is active" \
		sh -c '[ "$(mshare-ctl --json list | jq -r ".[] | select(.name == \"pool\") | .state")" = active ]'
	;;
*)
	echo "usage: loop.sh begin | run N | end N" >&2
	exit 2
	;;
esac

#!/bin/bash
# What the hook adds to a container start: crun run of a container running
# /bin/true without hooks, with the hooks but no io.mshare.regions, and with
# io.mshare.regions=pool (channel, registration, unregistration), interleaved,
# median of 7 runs each. The figures are TCG emulation times.
. "$(dirname "$0")/lib.sh"
N=7
ktap_plan "3"
fresh
bare=$(bundle bare '{}' /bin/true)
jq 'del(.hooks)' "$bare/config.json" >"$bare/c.json" && mv "$bare/c.json" "$bare/config.json"
noann=$(bundle noann '{}' /bin/true)
ann=$(bundle ann '{"io.mshare.regions": "pool", "io.mshare.test": "trusted"}' /bin/true)
declare -A times failures
for i in $(seq 1 $N); do
	for kind in bare noann ann; do
		start=$(date +%s%N)
		crun_run "cost-$kind-$i" "${!kind}"
		times[$kind]+="$((($(date +%s%N) - start) / 1000)) "
		[ "$rc" = 0 ] || failures[$kind]=$((${failures[$kind]:-0} + 1))
	done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | sed -n "$(((N + 1) / 2))p"; }
for kind in bare noann ann; do
	m=$(median "${times[$kind]}")
	eval "m_$kind=$m"
	if [ -z "${failures[$kind]:-}" ]; then
		ok "$kind: $N containers ran, median $((m / 1000)).$(((m % 1000) / 100)) ms"
	else
		not_ok "$kind: ${failures[$kind]} of $N runs failed"
	fi
	echo "# $kind (us): ${times[$kind]}"
done
# shellcheck disable=SC2154
echo "# the hook adds $(((m_ann - m_bare) / 1000)) ms to a container start that asks for a region, $(((m_noann - m_bare) / 1000)) ms to one that does not (medians of $N, TCG)"

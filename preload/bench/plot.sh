#!/usr/bin/env bash
# plot.sh RECORDS.jsonl PREFIX
# The plots of the PostgreSQL scenario (host side, scripts/bench.sh
# --postgres): PREFIX-pg-pagetables.png, the page tables all backends hold
# against clients, and PREFIX-pg-faults.png, minor faults a backend against
# clients, one line per way, log-log. Prints the files it wrote. Needs
# gnuplot and jq.
set -euo pipefail
if [ $# != 2 ] || [ ! -f "$1" ]; then echo "usage: plot.sh RECORDS.jsonl PREFIX" >&2; exit 2; fi
records=$1 prefix=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ways=()
for w in plain mshare huge; do
	jq -r --arg w "$w" 'select(.type == "point" and .status == "ok" and .way == $w)
		| [.clients, ([.pte_kb_sum / 1024, 0.01] | max), .minflt_mean] | @tsv' "$records" |
		sort -n >"$tmp/$w.dat"
	[ -s "$tmp/$w.dat" ] && ways+=("$w")
done
[ ${#ways[@]} -gt 0 ] || { echo "plot.sh: no measured points" >&2; exit 1; }
plot() { # FILE YLABEL COLUMN
	local sep='' cmd=''
	for w in "${ways[@]}"; do
		cmd+="$sep'$tmp/$w.dat' using 1:$3 with linespoints lw 2 pt 7 title '$w'"
		sep=', '
	done
	gnuplot <<-GP
		set terminal pngcairo size 800,500
		set output '$1'
		set logscale xy
		set xlabel 'clients (backends)'
		set ylabel '$2'
		set key top left
		set grid
		plot $cmd
	GP
	echo "$1"
}
plot "$prefix-pg-pagetables.png" 'page tables of all backends (MiB)' 2
plot "$prefix-pg-faults.png" 'minor faults a backend' 3

#!/usr/bin/env bash
# plot.sh RECORDS.jsonl PREFIX
# The PNG plots of a benchmark run (host side, called by scripts/bench.sh):
#   PREFIX-pagetables.png  page tables the workers added (PageTables of
#                          /proc/meminfo) against the number of workers, one
#                          line per backing and pool size, log-log
#   PREFIX-startup.png     start to ready against workers: the median worker
#                          (left) and until the last one was ready, launching
#                          included (right)
# Only points that were measured are drawn. Prints the files it wrote, one
# per line. Needs gnuplot (Debian: gnuplot-nox) and jq.
set -euo pipefail
if [ $# != 2 ] || [ ! -f "$1" ]; then echo "usage: plot.sh RECORDS.jsonl PREFIX" >&2; exit 2; fi
records=$1 prefix=$2
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot is not installed (apt-get install gnuplot-nox)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One data file per series (backing, pool size): workers, PageTables added
# (kB, at least 1 so that a log scale can show mshare's), median start to
# ready (s), all ready (s).
series=()
while IFS=$'\t' read -r backing bytes label; do
	f=$tmp/$backing-$bytes.dat
	jq -r --arg b "$backing" --argjson bytes "$bytes" '
		select(.type == "point" and .status == "ok" and .backing == $b and .pool_bytes == $bytes)
		| [.workers, ([.pagetables_added_kb, 1] | max), (.ready_ms_median / 1000), .all_ready_s] | @tsv' \
		"$records" | sort -n >"$f"
	[ -s "$f" ] && series+=("$f	$backing $label")
done < <(jq -r -s '
	map(select(.type == "point" and .status == "ok")) | map([.backing, .pool_bytes]) | unique
	| sort_by((.[0] as $b | ["mshare", "shm", "hugetlb"] | index($b)), .[1]) | .[]
	| [.[0], (.[1] | tostring),
	   (.[1] | if . >= 1073741824 and (. % 1073741824) == 0 then "\(. / 1073741824) GiB" else "\(. / 1048576) MiB" end)]
	| @tsv' "$records")
[ ${#series[@]} -gt 0 ] || { echo "plot.sh: no measured points to plot" >&2; exit 1; }

# Colours by backing, dash patterns by pool size.
style() {
	local backing=${2%% *} size=${2#* } color dash
	case $backing in mshare) color='#1b9e77' ;; shm) color='#d95f02' ;; *) color='#7570b3' ;; esac
	case $size in 4\ GiB) dash=2 ;; *) dash=1 ;; esac
	printf "lc rgb '%s' dt %s lw 2 pt 7 ps 1.2" "$color" "$dash"
}
plots() { # COLUMN: the plot command for one column of every series
	local s f title sep=''
	for s in "${series[@]}"; do
		f=${s%%	*} title=${s#*	}
		printf "%s'%s' using 1:%s with linespoints %s title '%s'" "$sep" "$f" "$1" "$(style "$f" "$title")" "$title"
		sep=', '
	done
}
term="set terminal pngcairo size 1000,640 font 'sans,11' noenhanced"
gnuplot -e "$term" -e 'set terminal' >/dev/null 2>&1 || term="set terminal png size 1000,640 noenhanced"
note="TCG guest: page tables are exact, times are emulation figures"
# A run of one worker count (make demo) gives gnuplot an empty x range:
# widen it to a factor of 2 on each side.
xrange=$(jq -r -s 'map(select(.type == "point" and .status == "ok") | .workers)
	| if min == max then "set xrange [\(min / 2):\(max * 2)]" else "" end' "$records")

gnuplot <<GP
$term
set output '$prefix-pagetables.png'
set title "Page tables added by the workers (PageTables, all workers ready)"
set xlabel 'workers'
set ylabel 'kB (log scale; 0 drawn as 1)'
set logscale xy
$xrange
set grid
set key top left
set label 1 "$note" at graph 0.99, graph 0.97 right font ',9'
plot $(plots 2)
GP
echo "$prefix-pagetables.png"

gnuplot <<GP
$term
set output '$prefix-startup.png'
set multiplot layout 1,2 title "Start to ready: mapping the pool and touching every page ($note)" font ',10'
set xlabel 'workers'
set logscale x
$xrange
set grid
set key top left
set ylabel 'seconds'
set title 'median worker: main() to ready'
plot $(plots 3)
set title 'all ready: first launch to last ready'
plot $(plots 4)
unset multiplot
GP
echo "$prefix-startup.png"

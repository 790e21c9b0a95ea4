#!/bin/bash
# mshare-run: --help and --version, option errors (exit status 2 and a
# message), the environment it sets for the library and the command (run
# under it: env), where it finds the library, and a command it cannot run.
# Usage: test-run.sh BUILD
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
b=$(realpath "$1")
mrun=$b/mshare-run
lib=$b/libmshare-preload.so
tmp=$(mktemp -d /tmp/test-run.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
R() {
	env -u MSHARE_PRELOAD_MIN_SIZE -u MSHARE_PRELOAD_REGION -u MSHARE_PRELOAD_STRICT \
		-u MSHARE_PRELOAD_QUIET -u MSHARE_SOCKET -u MSHARE_PRELOAD_LIB -u LD_PRELOAD "$@"
}
# getenv NAME: NAME=VALUE of the last run's env output.
getenv() { grep "^$1=" <<<"$out"; }

run R "$mrun" --help
check "--help: usage on stdout, status 0" eval 'status 0 && quiet && has "$out" "Usage: mshare-run [OPTIONS] [--] COMMAND [ARG...]"'
check "--help names every option" eval 'for o in --region --socket --min-size --strict --quiet --help --version; do has "$out" "$o" || exit 1; done'
run R "$mrun" -h
check "-h is --help" eval 'status 0 && has "$out" "Usage:"'
run R "$mrun" --version
check "--version" eval 'status 0 && [[ "$out" =~ ^mshare-run\ [0-9]+\.[0-9]+\.[0-9]+$ ]]'

# option errors
err_case() {
	local desc=$1 text=$2
	shift 2
	run R "$mrun" "$@"
	check "$desc: status 2 and '$text'" eval 'status 2 && [ -z "$out" ] && has "$err" "mshare-run: $text" && has "$err" "Try '"'"'mshare-run --help'"'"'"'
}
err_case "no command" "no command given"
err_case "options but no command" "no command given" --strict --
err_case "an unknown long option" "invalid option '--bogus'" --bogus env
err_case "an unknown short option" "invalid option '-x'" -x env
err_case "--region without a name" "option '--region' needs an argument" --region
err_case "-m without a size" "option '-m' needs an argument" -m
err_case "a bad region name" "invalid region name 'bad name'" --region "bad name" env
err_case "a bad size" "invalid size '12Q' for --min-size" --min-size 12Q env
err_case "an empty socket" "--socket needs a path" --socket "" env
err_case "--help with an argument" "option '--help' takes no argument" --help=x env
err_case "a grouped unknown short option" "invalid option '-x'" -qx env

# the environment
run R "$mrun" env
check "no options: LD_PRELOAD is the library, by its absolute path" eval 'status 0 && [ "$(getenv LD_PRELOAD)" = "LD_PRELOAD=$lib" ]'
check "no options: none of the library's variables is set" eval '! grep -Eq "^(MSHARE_PRELOAD_[A-Z_]+|MSHARE_SOCKET)=" <<<"$out"'
run R LD_PRELOAD="libfoo.so /x/libbar.so" "$mrun" env
check "the library goes first in LD_PRELOAD, which keeps what it held" \
	eval '[ "$(getenv LD_PRELOAD)" = "LD_PRELOAD=$lib:libfoo.so /x/libbar.so" ]'
run R LD_PRELOAD="libfoo.so:$lib" "$mrun" env
check "a library already in LD_PRELOAD is not added twice" eval '[ "$(getenv LD_PRELOAD)" = "LD_PRELOAD=libfoo.so:$lib" ]'
run R "$mrun" --region pool --min-size 1GiB --strict --quiet env
check "--region --min-size --strict --quiet set MSHARE_PRELOAD_*" \
	eval 'status 0 && getenv MSHARE_PRELOAD_REGION | grep -qx "MSHARE_PRELOAD_REGION=pool" &&
	      getenv MSHARE_PRELOAD_MIN_SIZE | grep -qx "MSHARE_PRELOAD_MIN_SIZE=1GiB" &&
	      getenv MSHARE_PRELOAD_STRICT | grep -qx "MSHARE_PRELOAD_STRICT=1" &&
	      getenv MSHARE_PRELOAD_QUIET | grep -qx "MSHARE_PRELOAD_QUIET=1"'
if [ -e /run/mshare/mshare.sock ]; then
	want=/run/mshare/mshare.sock
else
	want=/run/mshare/owner.sock
fi
check "--region: MSHARE_SOCKET is $want here" eval '[ "$(getenv MSHARE_SOCKET)" = "MSHARE_SOCKET=$want" ]'
run R MSHARE_SOCKET=/elsewhere.sock "$mrun" -r pool env
check "--region keeps a MSHARE_SOCKET that is set" eval '[ "$(getenv MSHARE_SOCKET)" = "MSHARE_SOCKET=/elsewhere.sock" ]'
run R MSHARE_SOCKET=/elsewhere.sock "$mrun" -r pool -s /mine.sock -m 64M -q env
check "--socket wins; short options work" \
	eval '[ "$(getenv MSHARE_SOCKET)" = "MSHARE_SOCKET=/mine.sock" ] && getenv MSHARE_PRELOAD_MIN_SIZE | grep -qx "MSHARE_PRELOAD_MIN_SIZE=64M"'
run R "$mrun" --min-size=2G env
check "--option=value" eval 'getenv MSHARE_PRELOAD_MIN_SIZE | grep -qx "MSHARE_PRELOAD_MIN_SIZE=2G"'
run R "$mrun" printf '%s,' --strict -x --region
check "the command's own options are its own" eval 'status 0 && [ "$out" = "--strict,-x,--region," ]'
run R "$mrun" -- printf '%s' -- 
check "-- ends the options" eval 'status 0 && [ "$out" = "--" ]'

# where the library is
cp "$mrun" "$tmp/mshare-run"
installed=$(R "$mrun" --help | sed -n 's/^\(\/.*libmshare-preload\.so\)\.$/\1/p')
run R "$tmp/mshare-run" env
if [ -e "$installed" ]; then
	check "without the library next to it: the installed one, $installed" \
		eval 'status 0 && [ "$(getenv LD_PRELOAD)" = "LD_PRELOAD=$installed" ]'
else
	check "without the library next to it or installed: status 1, naming ${installed:-the installed path}" \
		eval 'status 1 && [ -n "$installed" ] && has "$err" "cannot find libmshare-preload.so ($installed; set MSHARE_PRELOAD_LIB)"'
fi
run R MSHARE_PRELOAD_LIB="$lib" "$tmp/mshare-run" env
check "MSHARE_PRELOAD_LIB names it" eval 'status 0 && [ "$(getenv LD_PRELOAD)" = "LD_PRELOAD=$lib" ]'
ln -s "$lib" "$tmp/link.so"
run R MSHARE_PRELOAD_LIB="$tmp/link.so" "$tmp/mshare-run" env
check "MSHARE_PRELOAD_LIB is resolved to an absolute path" eval '[ "$(getenv LD_PRELOAD)" = "LD_PRELOAD=$lib" ]'
run R MSHARE_PRELOAD_LIB=/nonexistent/lib.so "$mrun" env
check "a MSHARE_PRELOAD_LIB that is not there: status 1" eval 'status 1 && has "$err" "cannot find libmshare-preload.so" && has "$err" "No such file"'
mkdir "$tmp/a b" && cp "$lib" "$tmp/a b/"
run R MSHARE_PRELOAD_LIB="$tmp/a b/libmshare-preload.so" "$mrun" env
check "a library path with a space is refused (LD_PRELOAD could not hold it)" eval 'status 1 && has "$err" "space or a colon"'

# the command
run R "$mrun" /nonexistent/command
check "a command that is not there: status 127" eval 'status 127 && has "$err" "mshare-run: cannot run /nonexistent/command: No such file"'
printf 'x' >"$tmp/noexec"
run R "$mrun" "$tmp/noexec"
check "a command that cannot run: status 126" eval 'status 126 && has "$err" "Permission denied"'
run R "$mrun" sh -c 'exit 7'
check "the command's exit status is mshare-run's" status 7

# with the library: the fallback on this kernel
run R "$mrun" --min-size 16M "$b/tests/preload-probe" map 32M share unmap
check "a program under mshare-run gets its shared memory (plain here), said once" \
	eval 'status 0 && has "$out" "share: ok" && [ "$(lines "$err" mshare-preload:)" = 1 ] && has "$err" "mmap of 33554432 bytes"'
ktap_finish

#!/bin/bash
# libmshare-preload.so on this machine's kernel, which has no mshare system
# calls (they fail with ENOSYS): every call the library would serve does
# what the program asked, and says so once; under MSHARE_PRELOAD_STRICT=1
# it fails with ENOSYS instead. What it must not serve passes through
# without a word. System V segments, munmap(), mmap64(), bad settings.
# Usage: test-fallback.sh BUILD
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
b=$(realpath "$1")
lib=$b/libmshare-preload.so
probe=$b/tests/preload-probe
probe64=$b/tests/preload-probe64
P() { under "$lib" "$@"; }
fallback="mshare-preload: mmap of 67108864 bytes falls back to plain shared memory: mshare_create: Function not implemented (no kernel support"

run P MSHARE_PRELOAD_STRICT=1 "$probe" map 64M
if [ "$rc" = 0 ]; then
	skip "this kernel has the mshare system calls: the fallback path is for kernels without them"
	ktap_finish
	exit
fi

# --- the fallback ---

run P "$probe" map 64M share unmap map 64M share unmap
check "two mappings of 64 MiB work as plain shared memory, shared with a child, and unmap" \
	eval 'status 0 && [ "$(lines "$out" "share: ok")" = 2 ] && [ "$(lines "$out" "unmap: ok")" = 2 ]'
check "the fallback is said once for two mappings" eval '[ "$(lines "$err" mshare-preload:)" = 1 ]'
check "it names the call, the size and ENOSYS" has "$err" "$fallback"

run P "$probe" map 64M map 64M share
check "two mappings at once: both plain, said once" \
	eval 'status 0 && [ "$(lines "$err" mshare-preload:)" = 1 ] && has "$out" "share: ok"'

run P "$probe" map 64M:huge-try share unmap
check "MAP_HUGETLB falls back to the program's call (no huge pages here), then without it" \
	eval 'status 0 && has "$out" "MAP_HUGETLB failed" && has "$out" "share: ok" &&
	      [ "$(lines "$err" mshare-preload:)" = 1 ]'

# --- strict ---

run P MSHARE_PRELOAD_STRICT=1 "$probe" map 64M
check "MSHARE_PRELOAD_STRICT=1: the mapping fails with ENOSYS" \
	eval 'status 3 && has "$out" "map: error ENOSYS"'
check "... and says why" has "$err" \
	"mshare-preload: mmap of 67108864 bytes fails (MSHARE_PRELOAD_STRICT=1): mshare_create: Function not implemented (no kernel support"

run P MSHARE_PRELOAD_STRICT=1 "$probe" map 64M:huge
check "MSHARE_PRELOAD_STRICT=1: MAP_HUGETLB fails with ENOSYS too" \
	eval 'status 3 && has "$out" "map: error ENOSYS"'

# --- what is never served ---

for m in 8M 64M:private 64M:file 64M:fixed 64M:exec; do
	run P MSHARE_PRELOAD_STRICT=1 "$probe" map $m unmap
	check "map $m passes through without a word, even strict" eval 'status 0 && quiet'
done
run P MSHARE_PRELOAD_STRICT=1 "$probe" map 31M share unmap
check "31 MiB, below the default threshold, is plain and shared" eval 'status 0 && quiet && has "$out" "share: ok"'

run P MSHARE_PRELOAD_STRICT=1 MSHARE_PRELOAD_MIN_SIZE=128M "$probe" map 64M unmap
check "MSHARE_PRELOAD_MIN_SIZE=128M: 64 MiB passes through" eval 'status 0 && quiet'
run P MSHARE_PRELOAD_STRICT=1 MSHARE_PRELOAD_MIN_SIZE=67108865 "$probe" map 64M unmap
check "MSHARE_PRELOAD_MIN_SIZE one byte above: passes through" eval 'status 0 && quiet'
run P MSHARE_PRELOAD_STRICT=1 MSHARE_PRELOAD_MIN_SIZE=67108864 "$probe" map 64M
check "MSHARE_PRELOAD_MIN_SIZE exactly the size: served (and so fails, strict)" \
	eval 'status 3 && has "$out" "error ENOSYS"'
run P MSHARE_PRELOAD_STRICT=1 MSHARE_PRELOAD_MIN_SIZE=1MiB "$probe" map 2M
check "MSHARE_PRELOAD_MIN_SIZE=1MiB: 2 MiB is served (and fails, strict)" status 3

run P MSHARE_PRELOAD_STRICT=1 MSHARE_PRELOAD_MIN_SIZE=0 "$probe" map 4095 unmap shm 56 shmdt rmid map 4096
check "MSHARE_PRELOAD_MIN_SIZE=0: nothing below a page is served (so PostgreSQL's interlock segment is not)" \
	eval 'status 3 && [ "$(lines "$out" ": ok")" = 3 ] && has "$out" "map: error ENOSYS"'

run P MSHARE_PRELOAD_STRICT=1 sh -c 'ls / >/dev/null && echo hi'
check "a program that maps nothing large runs silently" eval 'status 0 && quiet && [ "$out" = hi ]'

# --- mmap64 ---

if nm -D "$probe64" | grep -q ' U mmap64'; then
	run P "$probe64" map 64M share unmap
	check "mmap64(): plain shared memory, said once" \
		eval 'status 0 && has "$out" "share: ok" && [ "$(lines "$err" mshare-preload:)" = 1 ] && has "$err" "$fallback"'
	run P MSHARE_PRELOAD_STRICT=1 "$probe64" map 64M
	check "mmap64(): strict fails with ENOSYS" eval 'status 3 && has "$out" "map: error ENOSYS"'
else
	skip "the probe built with _FILE_OFFSET_BITS=64 does not call mmap64 on this C library"
	skip "mmap64 strict"
fi

# --- System V ---

segments() { ipcs -m | grep -c '^0x'; }
before=$(segments)
run P "$probe" shm 64M nattch shm-share nattch shmdt nattch rmid gone
check "shmget/shmat/shmdt/IPC_STAT/IPC_RMID of 64 MiB work, shared with a child" \
	eval 'status 0 && has "$out" "shm-share: ok" && has "$out" "gone: yes"'
check "shm_nattch is 1 attached, 0 detached, and shm_segsz the size" \
	eval '[ "$(lines "$out" "nattch: 1 segsz 67108864")" = 2 ] && has "$out" "nattch: 0 segsz 67108864"'
check "the System V fallback is said once, with ENOSYS" \
	eval '[ "$(lines "$err" mshare-preload:)" = 1 ] &&
	      has "$err" "shmget of 67108864 bytes falls back to plain shared memory: mshare_create: Function not implemented"'
run P MSHARE_PRELOAD_STRICT=1 "$probe" shm 64M
check "strict: shmget fails with ENOSYS" eval 'status 3 && has "$out" "shm: error ENOSYS" && has "$err" "fails (MSHARE_PRELOAD_STRICT=1)"'
run P MSHARE_PRELOAD_STRICT=1 "$probe" shm 1M shm-share shmdt rmid gone
check "a small segment passes through without a word" eval 'status 0 && quiet && has "$out" "gone: yes"'
check "no segment is left behind" eval '[ "$(segments)" = "$before" ]'

# --- bad settings ---

run P MSHARE_PRELOAD_MIN_SIZE=12Q "$probe" map 64M share
check "MSHARE_PRELOAD_MIN_SIZE=12Q: named once, and the mapping falls back" \
	eval 'status 0 && [ "$(lines "$err" mshare-preload:)" = 1 ] &&
	      has "$err" "mmap of 67108864 bytes falls back to plain shared memory: MSHARE_PRELOAD_MIN_SIZE=\"12Q\" is not a size"'
run P MSHARE_PRELOAD_MIN_SIZE=12Q MSHARE_PRELOAD_STRICT=1 "$probe" map 64M
check "... strict: fails with EINVAL" eval 'status 3 && has "$out" "error EINVAL" && has "$err" "MSHARE_PRELOAD_MIN_SIZE=\"12Q\""'
run P "MSHARE_PRELOAD_REGION=bad name" "$probe" map 64M
check "MSHARE_PRELOAD_REGION with a bad name is named" \
	eval 'status 0 && has "$err" "MSHARE_PRELOAD_REGION=\"bad name\" is not a region name"'
run P MSHARE_PRELOAD_STRICT=maybe "$probe" map 64M
check "MSHARE_PRELOAD_STRICT=maybe is named, and falls back" \
	eval 'status 0 && has "$err" "MSHARE_PRELOAD_STRICT=\"maybe\" is not 0 or 1"'
run P MSHARE_PRELOAD_QUIET=2 "$probe" map 64M
check "MSHARE_PRELOAD_QUIET=2 is named" eval 'status 0 && has "$err" "MSHARE_PRELOAD_QUIET=\"2\" is not 0 or 1"'
run P MSHARE_PRELOAD_MIN_SIZE=12Q "$probe" map 8M
check "a bad setting says nothing for a mapping below the default threshold" eval 'status 0 && quiet'

ktap_finish

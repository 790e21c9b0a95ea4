#!/bin/bash
# The library's region path on the host, on a fake of the mshare system
# calls (../libmshare/tests/fake-mshare.c: a region is a memfd, a window a shared
# mapping of it; NOT the kernel, whose behaviour the guest test checks).
# Regions of a process's own: windows aligned as the fake aligns them, the
# owner descriptor kept high (>= 1000) until munmap(), fork(), the success
# notice (once; MSHARE_PRELOAD_QUIET), MAP_HUGETLB refused and the
# program's retry served; System V segments backed by regions with the real
# segment's nattch, IPC_STAT and IPC_RMID; granted regions of mshare-owner
# (mshare-helper's daemon on its own fake, over its socket): served and
# cleared, one process at a time (the POSIX lock), refused when attached
# elsewhere, too small, not granted, unknown, without a daemon, and strict.
# Windows the program unmapped or replaced behind the library's back, and a
# client attaching a granted region while the library takes it, with
# kernel-shim.so preloaded after the library where the fake does not do
# what the kernel does.
# Usage: test-fake.sh BUILD MSHARE-OWNER-FAKE
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
b=$(realpath "$1")
owner=$(realpath "$2")
fake=$b/tests/libmshare-preload-fake.so
probe=$b/tests/preload-probe
tmp=$(mktemp -d /tmp/test-fake.XXXXXX)
daemon=
holder=
cleanup() {
	[ -z "$holder" ] || kill "$holder" 2>/dev/null
	[ -z "$daemon" ] || kill "$daemon" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
F() { under "$fake" "$@"; }
S() { under "$fake $b/tests/kernel-shim.so" "$@"; }
OWN="from a region of its own"
memfd="=/memfd:fake-mshare (deleted)"

# --- a region of its own ---

run F "$probe" map 64M aligned 2M fds check 0 share unmap fds
check "a 64 MiB mapping is a window, aligned, reading zeros, shared with a child" \
	eval 'status 0 && has "$out" "aligned: yes" && has "$out" "check 0: ok" && has "$out" "share: ok"'
check "the region's owner descriptor is kept at 1000 while mapped, and closed by munmap()" \
	eval 'has "$out" "fds: 1000$memfd" && [ "$(sed -n "/unmap: ok/,\$p" <<<"$out" | grep -c "fds: none")" = 1 ]'
check "the first use is said once, on stderr" \
	eval '[ "$(lines "$err" mshare-preload:)" = 1 ] && has "$err" "mshare-preload: serving 67108864 bytes of shared memory $OWN (window at 0x"'

run F "$probe" map 64M map 40M share fds
check "two mappings: two regions, two descriptors, one notice" \
	eval 'status 0 && has "$out" "fds: 1000$memfd 1001$memfd" && [ "$(lines "$err" mshare-preload:)" = 1 ]'

# Windows gone behind the library's back: a 63 MiB mapping is a 64 MiB
# window on the fake, whose tail the table alone would unmap.
run F "$probe" map 63M raw-unmap 64M raw-map 64M 5 unmap mapped 63M byte 63M fds
check "munmap() where the program replaced the window itself unmaps only what it asks for, and forgets the window" \
	eval 'status 0 && has "$out" "mapped 63M: yes" && has "$out" "byte 63M: 5" && has "$out" "fds: none"'
run S "$probe" map 63M raw-unmap 64M raw-window 64M 5 try-unmap mapped 63M byte 63M fds
check "... and where the kernel refuses it (EINVAL: another window there), the whole window is not taken from the table" \
	eval 'status 0 && has "$out" "try-unmap: EINVAL" && has "$out" "mapped 63M: yes" && has "$out" "byte 63M: 5" && has "$out" "fds: none"'
run S "$probe" map 63M unmap mapped 63M fds
check "munmap() of a window with the length mapped: refused for part of it, the window checked, and unmapped whole" \
	eval 'status 0 && has "$out" "unmap: ok" && has "$out" "mapped 63M: no" && has "$out" "fds: none"'
run F "$probe" map 64M raw-unmap 64M fixed 8M fds
check "a MAP_FIXED mapping over part of a window that is gone: the window is forgotten" \
	eval 'status 0 && has "$out" "fds: none"'
run F timeout 30 "$probe" map 64M raw-unmap 64M map 64M fds unmap fds
check "a window that is gone is forgotten before the next one is made" \
	eval 'status 0 && has "$out" "fds: 1000$memfd" && ! has "$out" "1001=" && [ "$(tail -1 <<<"$out")" = "fds: none" ]'
run F "$probe" shm 64M raw-unmap 64M raw-map 64M 5 try-shmdt mapped 0 byte 0 rmid fds
check "shmdt() of a window the program replaced itself: the C library's, and what is there stays" \
	eval 'status 0 && has "$out" "try-shmdt: EINVAL" && has "$out" "mapped 0: yes" && has "$out" "byte 0: 5" && has "$out" "fds: none"'

run F "$probe" map 64M unmap-around fds map 64M fixed-over fds
check "a window taken along by a wider munmap(), or replaced by MAP_FIXED, is forgotten (its region let go)" \
	eval 'status 0 && [ "$(lines "$out" "fds: none")" = 2 ]'
run F "$probe" map 64M map 8M unmap fds
check "unmapping something else leaves the window alone" eval 'status 0 && has "$out" "fds: 1000$memfd"'

run F MSHARE_PRELOAD_QUIET=1 "$probe" map 64M share
check "MSHARE_PRELOAD_QUIET=1: no notice" eval 'status 0 && quiet'

run F MSHARE_PRELOAD_MIN_SIZE=1M "$probe" map 1M aligned 2M map 1048575 aligned 2M fds
check "MSHARE_PRELOAD_MIN_SIZE=1M: 1 MiB is served, a byte less is not" \
	eval 'status 0 && [ "$(sed -n 2p <<<"$out")" = "aligned: yes" ] && [ "$(lines "$out" "fds: 1000$memfd")" = 1 ] && ! has "$out" 1001'

run F sh -c "ulimit -n 256; exec $probe map 64M fds"
check "with 256 descriptors allowed, the region's is at 192" eval 'status 0 && has "$out" "fds: 192$memfd"'

run F "$probe" map 64M:private unmap map 64M:file unmap map 64M:fixed unmap map 8M unmap fds
check "private, file, fixed and small mappings are not served" eval 'status 0 && quiet && has "$out" "fds: none"'

run F "$probe" map 64M:huge-try check 0 share fds
check "MAP_HUGETLB refused by the (fake) kernel: the program's call, then its retry is served" \
	eval 'status 0 && has "$out" "MAP_HUGETLB failed" && has "$out" "share: ok" && has "$out" "fds: 1000$memfd"'
check "... the refusal is said, with the huge pages" \
	has "$err" "mmap of 67108864 bytes falls back to plain shared memory: mshare_map of huge pages: Cannot allocate memory"
run F MSHARE_PRELOAD_STRICT=1 "$probe" map 64M:huge
check "strict: MAP_HUGETLB refused fails with the kernel's ENOMEM" eval 'status 3 && has "$out" "error ENOMEM"'

# --- System V ---

segments() { ipcs -m | grep -c '^0x'; }
before=$(segments)
run F "$probe" shm 64M aligned 2M check 0 nattch shm-share fds shmdt nattch fds rmid gone fds
check "shmget+shmat: a window (aligned, zeros) shared with a child, nattch 2 with it attached" \
	eval 'status 0 && has "$out" "aligned: yes" && has "$out" "check 0: ok" && has "$out" "shm-share: ok"'
check "the real segment is attached too: nattch 1, then 0 after shmdt(); shm_segsz the size" \
	eval 'has "$out" "nattch: 1 segsz 67108864" && has "$out" "nattch: 0 segsz 67108864"'
check "the region lives until IPC_RMID, then goes" \
	eval '[ "$(lines "$out" "fds: 1000$memfd")" = 2 ] && has "$out" "gone: yes" && [ "$(tail -1 <<<"$out")" = "fds: none" ]'
check "the notice names the segment" has "$err" "serving System V segment"
run F "$probe" shm 64M rmid nattch fds shmdt fds gone
check "IPC_RMID while attached: the segment and the region go with the last shmdt()" \
	eval 'status 0 && has "$out" "nattch: 1" && [ "$(lines "$out" "fds: 1000$memfd")" = 1 ] && [ "$(tail -2 <<<"$out")" = "fds: none
gone: yes" ]'
run F "$probe" map 64M shm 64M fds shmdt rmid fds
check "an mmap() and a segment side by side, each with its region" \
	eval 'status 0 && has "$out" "fds: 1000$memfd 1001$memfd" && [ "$(tail -1 <<<"$out")" = "fds: 1000$memfd" ]'
check "no segment is left behind" eval '[ "$(segments)" = "$before" ]'

# --- granted regions, from mshare-owner on its fake ---

mkdir "$tmp/conf"
cat >"$tmp/conf/test.conf" <<CONF
[Region]
Name=pool
Size=64M

[Region]
Name=small
Size=4M

[Region]
Name=secret
Size=64M

[Grant]
Region=pool
Mode=rw
User=$(id -un)

[Grant]
Region=small
Mode=rw
User=$(id -un)
CONF
"$owner" --config-dir "$tmp/conf" --socket "$tmp/owner.sock" 2>"$tmp/owner.log" &
daemon=$!
for _ in $(seq 100); do [ -S "$tmp/owner.sock" ] && break; sleep 0.05; done
G() { F MSHARE_SOCKET="$tmp/owner.sock" "$@"; }
if [ ! -S "$tmp/owner.sock" ]; then
	not_ok "mshare-owner (fake) did not start: $(tail -3 "$tmp/owner.log")"
	ktap_finish
	exit 1
fi

run G MSHARE_PRELOAD_REGION=pool "$probe" map 64M aligned 2M fds check 0 fill 7 share unmap fds
check "MSHARE_PRELOAD_REGION=pool: 64 MiB served from the granted region, shared with a child" \
	eval 'status 0 && has "$out" "aligned: yes" && has "$out" "share: ok" && has "$out" "fds: 1000$memfd" && [ "$(tail -1 <<<"$out")" = "fds: none" ]'
check "... said once, naming the region" \
	eval '[ "$(lines "$err" mshare-preload:)" = 1 ] && has "$err" "serving 67108864 bytes of shared memory from region '"'pool'"' (window at 0x"'
run G MSHARE_PRELOAD_REGION=pool "$probe" map 64M check 0
check "the next program finds the pool cleared (what the last one wrote is gone)" eval 'status 0 && has "$out" "check 0: ok"'
run G MSHARE_PRELOAD_REGION=pool "$b/tests/preload-probe-pg" map 64M fds
check "a program that exports its own json_object(), as postgres does, is served too" \
	eval 'status 0 && has "$out" "fds: 1000$memfd" && ! has "$err" "the program'"'"'s own was called"'

G MSHARE_PRELOAD_REGION=pool "$probe" map 64M touch "$tmp/held" wait "$tmp/held" >"$tmp/holder.out" 2>&1 &
holder=$!
for _ in $(seq 200); do [ -e "$tmp/held" ] && break; sleep 0.05; done
run G MSHARE_PRELOAD_REGION=pool "$probe" map 64M share fds
check "while another process uses the pool, a second one falls back to plain memory" \
	eval 'status 0 && has "$out" "share: ok" && has "$out" "fds: none" && has "$err" "region '"'pool'"' is in use by process "'
run G MSHARE_PRELOAD_REGION=pool MSHARE_PRELOAD_STRICT=1 "$probe" map 64M
check "... or, strict, fails with EBUSY" eval 'status 3 && has "$out" "error EBUSY"'
rm -f "$tmp/held"
wait "$holder"
holder=
run G MSHARE_PRELOAD_REGION=pool "$probe" map 64M fds
check "once it is done, the pool serves the next" eval 'status 0 && has "$out" "fds: 1000$memfd"'

run G MSHARE_PRELOAD_REGION=pool "$probe" map 64M map 64M fds
check "one mapping at a time: a second one in the same process falls back" \
	eval 'status 0 && [ "$(lines "$out" "fds: 1000$memfd")" = 1 ] && has "$err" "serves another mapping of this process already"'

run G MSHARE_PRELOAD_REGION=pool "$probe" map 64M fill 9
echo 0 >"$tmp/attached"
run S MSHARE_SOCKET="$tmp/owner.sock" MSHARE_PRELOAD_REGION=pool FAKE_MSHARE_ATTACHED="$tmp/attached" \
	SHIM_FOREIGN_ATTACH="$tmp/attached" "$probe" map 64M fds
check "a client attaching the pool while the library takes it: the pool is refused, and not cleared under it" \
	eval 'status 0 && has "$out" "fds: none" && has "$err" "region '"'pool'"' was attached by another process while this one took it" && has "$err" "foreign client: byte 0 was 9, is 9"'

echo 2 >"$tmp/attached"
run G MSHARE_PRELOAD_REGION=pool FAKE_MSHARE_ATTACHED="$tmp/attached" "$probe" map 64M fds
check "a pool with windows elsewhere is refused" eval 'status 0 && has "$out" "fds: none" && has "$err" "region '"'pool'"' has windows in 2 processes already"'

run G MSHARE_PRELOAD_REGION=small "$probe" map 64M share
check "a region smaller than the mapping is refused" \
	eval 'status 0 && has "$out" "share: ok" && has "$err" "region '"'small'"' is 4194304 bytes, smaller than the 67108864 bytes asked for"'
run G MSHARE_PRELOAD_REGION=secret "$probe" map 64M
check "a region not granted: EACCES, said" \
	eval 'status 0 && has "$err" "mshare_request('"'secret'"') on $tmp/owner.sock: Permission denied (the region is not granted to this process read-write)"'
run G MSHARE_PRELOAD_REGION=secret MSHARE_PRELOAD_STRICT=1 "$probe" map 64M
check "... strict: the mapping fails with EACCES" eval 'status 3 && has "$out" "map: error EACCES"'
run G MSHARE_PRELOAD_REGION=nosuch "$probe" map 64M
check "an unknown region: ENOENT, said" eval 'status 0 && has "$err" "No such file or directory (mshare-owner has no such region)"'
run F MSHARE_SOCKET="$tmp/none.sock" MSHARE_PRELOAD_REGION=pool "$probe" map 64M share
check "no daemon: falls back, saying so" \
	eval 'status 0 && has "$out" "share: ok" && has "$err" "on $tmp/none.sock: No such file or directory (no socket there: is mshare-owner running?)"'
run G MSHARE_PRELOAD_REGION=pool "$probe" shm 64M check 0 shm-share fds shmdt rmid fds
check "a System V segment served from the pool" \
	eval 'status 0 && has "$out" "shm-share: ok" && has "$out" "fds: 1000$memfd" && [ "$(tail -1 <<<"$out")" = "fds: none" ] && has "$err" "from region '"'pool'"'"'

ktap_finish

#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""demo-load and demo-worker end to end on the host (TAP).

The shm backing (a file on /dev/shm) throughout: the loader's result, a
worker's JSON line and what it promises (every field, the mix, the faults
and page tables that plain shared memory costs, the records all found),
fixed seeds, concurrent workers losing no update, the ready/go barrier,
refusal of pools with a wrong magic, version or loaded flag, usage errors
(exit status 2), and the mshare backing's errors on a kernel without mshare.
The hugetlb backing runs if the host has a hugetlbfs mount with free huge
pages, and is skipped (with the reason) otherwise.

    test-programs.py BUILD_DIR
"""

import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../common"))
from ktap import diag, finish, ok, skip  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
LOAD = os.path.join(BUILD, "demo-load")
WORKER = os.path.join(BUILD, "demo-worker")
PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1 << 20


def run(argv, env=None, timeout=120, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, **kw)
    return p.returncode, p.stdout, p.stderr


def one_json(out):
    lines = [l for l in out.splitlines() if l.strip()]
    if len(lines) != 1:
        return None
    try:
        return json.loads(lines[0])
    except ValueError:
        return None


def fs_type(path):
    p = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True)
    return p.stdout.strip()


class Pools:
    """Pool files on /dev/shm, removed at the end."""

    def __init__(self):
        self.paths = []

    def new(self, tag):
        path = f"/dev/shm/mshare-demo-test.{os.getpid()}.{tag}"
        self.paths.append(path)
        return path

    def cleanup(self):
        for p in self.paths:
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass


WORKER_FIELDS = {
    "event": str, "program": str, "pid": int, "backing": str, "backing_spec": str,
    "pool_bytes": int, "record_bytes": int, "records": int, "page_bytes": int, "mix": str,
    "dist": str, "theta": float, "seed": int, "start_to_ready_ms": float,
    "proc_start_to_ready_ms": float, "map_ms": float, "warmup_ms": float,
    "ready_boottime_ms": float, "warmup": str, "warmup_pages": int, "warmup_minflt": int,
    "start_minflt": int, "vmpte_kb_start": int, "vmpte_kb_ready": int, "go_wait_ms": float,
    "minflt_total": int, "majflt_total": int, "run_minflt": int, "vmpte_kb_end": int,
    "run_s": float, "ops": int, "reads": int, "updates": int, "ops_per_sec": float,
    "p50_us": float, "p99_us": float, "p999_us": float, "max_us": float, "mean_us": float,
    "errors": int, "not_found": int, "bad_checksum": int, "latch_sleeps": int,
    "latch_timeouts": int, "latch_futex_errors": int,
}


def field_problems(j, fields):
    bad = []
    for k, t in fields.items():
        if k not in j:
            bad.append(f"{k} missing")
        elif t is float and not isinstance(j[k], (int, float)):
            bad.append(f"{k} is {j[k]!r}")
        elif t is not float and not isinstance(j[k], t):
            bad.append(f"{k} is {j[k]!r}")
    return bad


def load(path, size, *extra):
    rc, out, err = run([LOAD, f"--backing=shm:{path}", f"--size={size}", *extra])
    return rc, one_json(out), err


def worker(path, *extra, env=None, **kw):
    rc, out, err = run([WORKER, f"--backing=shm:{path}", *extra], env=env, **kw)
    return rc, one_json(out), err


def test_help():
    for prog in (LOAD, WORKER):
        rc, out, err = run([prog, "--help"])
        ok(rc == 0 and out.startswith("Usage:") and "--backing" in out and not err,
           f"{os.path.basename(prog)} --help prints its usage and exits 0")


def test_usage_errors(pool):
    cases = [
        (LOAD, [], "--backing=SPEC is required"),
        (LOAD, ["--backing=shm:/dev/shm/x"], "--size=SIZE is required"),
        (LOAD, ["--backing=nfs:/x", "--size=1M"], "--backing=nfs:/x"),
        (LOAD, ["--backing=shm:relative", "--size=1M"], "--backing=shm:relative"),
        (LOAD, ["--backing=shm:/dev/shm/x", "--size=12Q"], "--size=12Q"),
        (LOAD, ["--backing=shm:/dev/shm/x", "--size=0"], "--size=0"),
        (LOAD, ["--backing=shm:/dev/shm/x", "--size=1M", "--record-size=300"], "--record-size=300"),
        (LOAD, ["--backing=shm:/dev/shm/x", "--size=1M", "--records=0"], "--records=0"),
        (LOAD, ["--backing=shm:/dev/shm/x", "--size=1M", "extra"], "unexpected argument 'extra'"),
        (WORKER, [], "--backing=SPEC is required"),
        (WORKER, [f"--backing=shm:{pool}", "--mix=bogus"], "--mix=bogus"),
        (WORKER, [f"--backing=shm:{pool}", "--dist=pareto"], "--dist=pareto"),
        (WORKER, [f"--backing=shm:{pool}", "--theta=1.5"], "--theta=1.5"),
        (WORKER, [f"--backing=shm:{pool}", "--seconds=-1"], "--seconds=-1"),
        (WORKER, [f"--backing=shm:{pool}", "--ops=0"], "--ops=0"),
        (WORKER, [f"--backing=shm:{pool}", "--warmup=lazy"], "--warmup=lazy"),
        (WORKER, [f"--backing=shm:{pool}", "--ready-fd=x"], "--ready-fd=x"),
        (WORKER, [f"--backing=shm:{pool}", "--ready=/tmp/r", "--ready-fd=3"], "exclude each other"),
        (WORKER, [f"--backing=shm:{pool}", "--bogus"], "unknown option '--bogus'"),
        (WORKER, [f"--backing=shm:{pool}", "--seed"], "needs a value"),
    ]
    for prog, args, want in cases:
        rc, out, err = run([prog, *args])
        ok(rc == 2 and want in err and "--help" in err and not out,
           f"{os.path.basename(prog)} {' '.join(args) or '(no options)'}: exit 2, "
           f"says {want!r}" + ("" if rc == 2 and want in err else f" (exit {rc}: {err.strip()!r})"))


def test_load(pool):
    size = 16 * MIB
    rc, j, err = load(pool, "16M")
    if not ok(rc == 0 and j is not None, "demo-load fills a 16 MiB pool on shm"):
        diag(err)
        return None
    ok(j["program"] == "demo-load" and j["backing"] == "shm" and j["pool_bytes"] == size
       and j["record_bytes"] == 256 and j["records"] == j["slots"] > 0.9 * size / 256
       and j["buckets"] & (j["buckets"] - 1) == 0,
       f"it reports the pool: {j['records']} records of 256 bytes in {j['slots']} slots, "
       f"{j['buckets']} buckets")
    ok(j["pages_touched"] == size // PAGE and j["load_ms"] > 0 and j["minflt"] >= size // PAGE // 16,
       f"it touched all {j['pages_touched']} pages in {j['load_ms']} ms ({j['minflt']} faults)")
    ok(os.path.getsize(pool) == size, "the file has the pool's size")
    return j


def test_worker(pool, loaded):
    size = 16 * MIB
    pages = size // PAGE
    rc, j, err = worker(pool, "--ops=50000", "--seed=7", "--verify", "--id=w1")
    if not ok(rc == 0 and j is not None and not err, "a read-mostly worker runs 50000 operations"):
        diag(err)
        return
    problems = field_problems(j, WORKER_FIELDS)
    ok(not problems, "its JSON line has every field, typed" + (f": {problems}" if problems else ""))
    ok(j["event"] == "done" and j["id"] == "w1" and j["pid"] > 0 and j["backing"] == "shm"
       and j["backing_spec"] == f"shm:{pool}" and j["mix"] == "read-mostly"
       and j["dist"] == "zipfian" and j["theta"] == 0.99 and j["seed"] == 7,
       "it names its backing, mix, distribution, seed and id")
    ok(j["pool_bytes"] == size and j["records"] == loaded["records"] and j["page_bytes"] == PAGE,
       "it saw the pool the loader made")
    ok(j["ops"] == 50000 and j["reads"] + j["updates"] == j["ops"]
       and 0.03 < j["updates"] / j["ops"] < 0.07,
       f"95/5: {j['reads']} reads, {j['updates']} updates")
    ok(j["errors"] == 0 and j["not_found"] == 0 and j["bad_checksum"] == 0,
       "every key was found, no record was torn")
    v = j.get("verify", {})
    ok(v.get("found") == loaded["records"] and v.get("missing") == 0 and v.get("bad") == 0
       and v.get("updates") == j["updates"],
       f"verify: all {v.get('found')} records found and whole; they hold exactly its "
       f"{j['updates']} updates")
    ok(0 < j["p50_us"] <= j["p99_us"] <= j["p999_us"] <= j["max_us"] and j["ops_per_sec"] > 0
       and j["run_s"] > 0,
       f"latency p50 {j['p50_us']} us <= p99 {j['p99_us']} us <= max; {j['ops_per_sec']:.0f} ops/s")
    ok(j["warmup"] == "read" and j["warmup_pages"] == pages
       and pages // 16 * 0.9 <= j["warmup_minflt"] <= pages + 64,
       f"warm-up read all {pages} pages with {j['warmup_minflt']} minor faults "
       f"(shmem fault-around maps up to 16 pages a fault)")
    grew = j["vmpte_kb_ready"] - j["vmpte_kb_start"]
    want = size // (2 * MIB) * PAGE // 1024
    ok(grew >= want, f"its page tables grew by {grew} kB for {size // MIB} MiB "
       f"(one 4 KiB table per 2 MiB: at least {want} kB)")
    ok(0 <= j["map_ms"] <= j["start_to_ready_ms"] and j["warmup_ms"] >= 0
       and j["proc_start_to_ready_ms"] + 10 >= j["start_to_ready_ms"]
       and j["minflt_total"] >= j["start_minflt"] + j["warmup_minflt"],
       f"times add up: ready {j['start_to_ready_ms']} ms after main(), "
       f"{j['proc_start_to_ready_ms']} ms after the process started")

    rc, j, err = worker(pool, "--seconds=0", "--warmup=write")
    ok(rc == 0 and j and j["ops"] == 0 and j["warmup"] == "write"
       and j["warmup_minflt"] >= 0.9 * pages,
       f"a write warm-up takes a fault per page ({j and j['warmup_minflt']} for {pages}), "
       "and --seconds=0 runs nothing")
    rc, j, err = worker(pool, "--seconds=0", "--warmup=none")
    ok(rc == 0 and j and j["warmup_pages"] == 0 and j["warmup_minflt"] < 64,
       "--warmup=none touches nothing")

    rc, j, err = worker(pool, "--seconds=0.5", "--mix=update-heavy", "--dist=uniform")
    ok(rc == 0 and j and j["ops"] > 0 and j["theta"] is None and j["dist"] == "uniform"
       and 0.45 < j["updates"] / j["ops"] < 0.55 and 0.4 < j["run_s"] < 5,
       f"update-heavy uniform for 0.5 s: {j and j['ops']} ops, "
       f"{j and j['updates']} updates")


def test_stop_signal(pool):
    """SIGTERM ends a long run early; the worker still verifies and reports."""
    p = subprocess.Popen([WORKER, f"--backing=shm:{pool}", "--seconds=600", "--verify", "--id=stop"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    start = time.monotonic()
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    waited = time.monotonic() - start
    j = one_json(out)
    ok(p.returncode == 0 and j and 0 < j["run_s"] < 60 and j["ops"] > 0 and j["errors"] == 0
       and (j.get("verify") or {}).get("missing") == 0 and waited < 30,
       "SIGTERM ends a 600 s run early: the worker verifies and reports",
       detail=f"status {p.returncode}, {waited:.1f} s after the signal; report: {out.strip()}; "
       f"stderr: {err.strip()}")


def test_seed(pool):
    results = []
    for _ in range(2):
        rc, j, err = worker(pool, "--ops=20000", "--seed=99", "--mix=update-heavy", "--warmup=none")
        results.append((rc, j and j["reads"], j and j["updates"]))
    rc, j, err = worker(pool, "--ops=20000", "--seed=100", "--mix=update-heavy", "--warmup=none")
    ok(results[0] == results[1] and results[0][0] == 0 and (j["reads"], j["updates"]) != results[0][1:],
       f"a fixed seed repeats the run ({results[0][1]} reads, {results[0][2]} updates); "
       "another seed does not")


def test_concurrent(pool):
    rc, loaded, err = load(pool, "4M", "--record-size=1024")
    if not ok(rc == 0 and loaded and loaded["record_bytes"] == 1024,
              "a 4 MiB pool of 1 KiB records for concurrent workers"):
        diag(err)
        return
    procs = [subprocess.Popen([WORKER, f"--backing=shm:{pool}", "--mix=update-heavy", "--ops=30000",
                               f"--seed={i}", "--dist=zipfian", f"--id=c{i}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(6)]
    outs = [p.communicate(timeout=120) for p in procs]
    js = [one_json(o) for o, _ in outs]
    ok(all(p.returncode == 0 for p in procs) and all(js)
       and all(j["errors"] == 0 for j in js),
       "6 update-heavy workers ran at once on hot keys, without a missing or torn record")
    if not all(js):
        for _, e in outs:
            diag(e)
        return
    total = sum(j["updates"] for j in js)
    rc, j, err = worker(pool, "--seconds=0", "--verify", "--warmup=none")
    v = j and j["verify"]
    ok(rc == 0 and v and v["updates"] == total and v["bad"] == 0 and v["missing"] == 0,
       f"the pool holds every one of their {total} updates (versions add up to "
       f"{v and v['updates']}): none lost")
    ok(sum(j["latch_futex_errors"] for j in js) == 0,
       "futex(2) works on the latches in the shm pool (no futex errors)")
    # Not a check: a sleeper also times out when the holder is kept off the
    # CPU for a second, which a loaded host does; test-latch checks the
    # cross-process wake-up itself.
    diag(f"latch sleeps {sum(j['latch_sleeps'] for j in js)}, timeouts "
         f"{sum(j['latch_timeouts'] for j in js)}, futex errors "
         f"{sum(j['latch_futex_errors'] for j in js)}")


def read_lines(fd, n, timeout):
    """n lines from fd within timeout seconds."""
    buf = b""
    end = time.monotonic() + timeout
    while buf.count(b"\n") < n:
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
    return buf.decode().splitlines()


def test_barrier(pool, tmp):
    ready, go = os.path.join(tmp, "ready"), os.path.join(tmp, "go")
    os.mkfifo(ready)
    os.mkfifo(go)
    rfd = os.open(ready, os.O_RDWR)  # as a driver: holds it open, never blocks
    procs = [subprocess.Popen([WORKER, f"--backing=shm:{pool}", "--ops=2000", f"--seed={i}",
                               f"--ready={ready}", f"--go={go}", f"--id=b{i}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(3)]
    lines = read_lines(rfd, 3, 60)
    js = [json.loads(l) for l in lines if l.startswith("{")]
    ok(len(js) == 3 and all(j["event"] == "ready" for j in js)
       and sorted(j["id"] for j in js) == ["b0", "b1", "b2"]
       and len({j["pid"] for j in js}) == 3 and all(j["warmup_pages"] > 0 for j in js),
       "3 workers each wrote one JSON ready line to the FIFO once warmed up")
    time.sleep(0.3)
    ok(all(p.poll() is None for p in procs), "they wait for go")
    gfd = os.open(go, os.O_WRONLY)  # the workers hold the read ends: does not block
    os.close(gfd)
    outs = [p.communicate(timeout=60) for p in procs]
    finals = [one_json(o) for o, _ in outs]
    ok(all(p.returncode == 0 for p in procs) and all(finals)
       and all(f["ops"] == 2000 and f["go_wait_ms"] >= 250 for f in finals),
       "closing the go FIFO released all of them; each waited "
       f"{[f and f['go_wait_ms'] for f in finals]} ms")
    os.close(rfd)

    # The descriptor variant: a pipe each way.
    r_read, r_write = os.pipe()
    g_read, g_write = os.pipe()
    p = subprocess.Popen([WORKER, f"--backing=shm:{pool}", "--ops=100", f"--ready-fd={r_write}",
                          f"--go-fd={g_read}"], pass_fds=(r_write, g_read),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(r_write)
    os.close(g_read)
    line = read_lines(r_read, 1, 60)
    time.sleep(0.2)
    waiting = p.poll() is None
    os.write(g_write, b"go\n")
    out, err = p.communicate(timeout=60)
    j = one_json(out)
    ok(len(line) == 1 and json.loads(line[0])["event"] == "ready" and waiting and p.returncode == 0
       and j and j["go_wait_ms"] >= 150,
       "--ready-fd and --go-fd: ready on one pipe, go by a write on the other")
    os.close(r_read)
    os.close(g_write)
    rc, out, err = run([WORKER, f"--backing=shm:{pool}", f"--go={pool}"])
    ok(rc == 1 and "not a FIFO" in err, f"--go on a regular file is refused: {err.strip()!r}")


def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def test_refusals(pool, tmp):
    rc, j, err = load(pool, "1M")
    ok(rc == 0, "a 1 MiB pool to damage")
    with open(pool, "rb") as f:
        header = f.read(128)
    cases = [
        ("a wrong magic", 0, b"GARBAGE!", "wrong magic \"GARBAGE!\""),
        ("a wrong layout version", 8, struct.pack("<I", 99), "layout version 99"),
        ("a cleared loaded flag", 72, struct.pack("<I", 0), "not loaded"),
    ]
    for what, off, data, want in cases:
        patch(pool, off, data)
        rc, out, err = run([WORKER, f"--backing=shm:{pool}", "--seconds=0"])
        ok(rc == 1 and want in err and not out, f"{what} is refused, named: {err.strip()!r}")
        patch(pool, off, header[off:off + len(data)])
    rc, j, err = worker(pool, "--seconds=0")
    ok(rc == 0, "the restored header is accepted again")
    os.truncate(pool, 512 * 1024)
    rc, out, err = run([WORKER, f"--backing=shm:{pool}", "--seconds=0"])
    ok(rc == 1 and "truncated" in err, f"a truncated pool is refused: {err.strip()!r}")
    os.truncate(pool, 0)
    rc, out, err = run([WORKER, f"--backing=shm:{pool}", "--seconds=0"])
    ok(rc == 1 and "empty" in err, f"an empty file is refused: {err.strip()!r}")
    rc, out, err = run([WORKER, "--backing=shm:/dev/shm/mshare-demo-test.does-not-exist"])
    ok(rc == 1 and "No such file" in err, f"a missing file is an error: {err.strip()!r}")
    rc, out, err = run([LOAD, f"--backing=shm:{pool}", "--size=1M", "--records=100000"])
    ok(rc == 1 and "holds at most" in err, f"more records than fit: {err.strip()!r}")

    if fs_type(tmp) != "tmpfs":
        path = os.path.join(tmp, "pool")
        rc, out, err = run([LOAD, f"--backing=shm:{path}", "--size=1M"])
        ok(rc == 1 and "not on a tmpfs" in err, f"shm on a disk file system is refused: {err.strip()!r}")
    else:
        skip("shm on a disk file system is refused", f"{tmp} is a tmpfs")
    rc, out, err = run([LOAD, "--backing=hugetlb:/dev/shm/mshare-demo-test.h", "--size=2M"])
    ok(rc == 1 and "not on a hugetlbfs mount" in err,
       f"hugetlb on a tmpfs is refused: {err.strip()!r}")
    try:
        os.unlink("/dev/shm/mshare-demo-test.h")
    except FileNotFoundError:
        pass


def test_mshare_errors():
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSHARE_")}
    rc, out, err = run([WORKER, "--backing=mshare"], env=env)
    ok(rc == 1 and "$MSHARE_FD is not set" in err, f"mshare without $MSHARE_FD: {err.strip()!r}")
    fd = os.memfd_create("not-a-region", 0)
    os.ftruncate(fd, MIB)
    rc, out, err = run([WORKER, "--backing=mshare"], env={**env, "MSHARE_FD": str(fd)},
                       pass_fds=(fd,))
    ok(rc == 1 and "no mshare system calls" in err,
       f"on a kernel without mshare, mshare_attach says so: {err.strip()!r}")
    rc, out, err = run([WORKER, "--backing=mshare:db-pool"],
                       env={**env, "MSHARE_FD_DB_POOL": str(fd)}, pass_fds=(fd,))
    ok(rc == 1 and f"(fd {fd})" in err, "mshare:NAME takes $MSHARE_FD_<NAME> when it is set")
    os.close(fd)
    sock = "/nonexistent/mshare.sock"
    rc, out, err = run([WORKER, "--backing=mshare:db-pool"], env={**env, "MSHARE_SOCKET": sock})
    ok(rc == 1 and "db-pool" in err and sock in err,
       f"mshare:NAME asks the daemon, and names the socket when none answers: {err.strip()!r}")
    rc, out, err = run([LOAD, "--backing=mshare", "--size=1M"], env={**env, "MSHARE_FD": "x"})
    ok(rc == 1 and "not a number" in err, f"a bad $MSHARE_FD: {err.strip()!r}")


def hugetlb_mount():
    """(mount point, free huge pages of its size) or (None, reason)."""
    try:
        nr = open("/proc/sys/vm/nr_hugepages").read().strip()
    except OSError:
        nr = "?"
    mounts = [l.split()[1] for l in open("/proc/mounts") if l.split()[2] == "hugetlbfs"]
    if not mounts:
        return None, f"no hugetlbfs mount on this host (/proc/sys/vm/nr_hugepages is {nr})"
    info = open("/proc/meminfo").read()
    free = int(re.search(r"HugePages_Free:\s+(\d+)", info).group(1))
    if free < 8:
        return None, (f"only {free} free huge pages on this host (/proc/sys/vm/nr_hugepages is "
                      f"{nr}); 8 are needed")
    for m in mounts:
        if os.access(m, os.W_OK):
            return m, None
    return None, "no writable hugetlbfs mount"


def test_hugetlb():
    mount, reason = hugetlb_mount()
    what = "the hugetlb backing: load a 16 MiB pool in 2 MiB pages, and a worker on it"
    if not mount:
        skip(what, reason)
        return
    path = os.path.join(mount, f"mshare-demo-test.{os.getpid()}")
    try:
        rc, out, err = run([LOAD, f"--backing=hugetlb:{path}", "--size=16M"])
        lj = one_json(out)
        rc2, out2, err2 = run([WORKER, f"--backing=hugetlb:{path}", "--ops=10000", "--verify"])
        j = one_json(out2)
        ok(rc == 0 and rc2 == 0 and lj and j and j["page_bytes"] == 2 * MIB
           and j["verify"]["found"] == lj["records"] and j["errors"] == 0,
           what)
        if j:
            ok(j["warmup_minflt"] <= 8 + 16,
               f"warm-up of 16 MiB in huge pages took {j['warmup_minflt']} faults (8 pages)")
        else:
            diag(err + err2)
    finally:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def main():
    if not (os.access(LOAD, os.X_OK) and os.access(WORKER, os.X_OK)):
        print(f"Bail out! {LOAD} or {WORKER} is missing: make first")
        return 1
    pools = Pools()
    tmp = tempfile.mkdtemp(prefix="demo-test.", dir=BUILD)
    try:
        test_help()
        if not os.path.isdir("/dev/shm") or fs_type("/dev/shm") != "tmpfs":
            skip("the shm backing end to end", "/dev/shm is not a tmpfs on this host")
        else:
            main_pool = pools.new("main")
            test_usage_errors(main_pool)
            loaded = test_load(main_pool)
            if loaded:
                test_worker(main_pool, loaded)
                test_stop_signal(main_pool)
                test_seed(main_pool)
            test_concurrent(pools.new("concurrent"))
            test_barrier(main_pool, tmp)
            test_refusals(pools.new("damaged"), tmp)
        test_mshare_errors()
        test_hugetlb()
    finally:
        pools.cleanup()
        subprocess.run(["rm", "-rf", tmp])
    return finish()


if __name__ == "__main__":
    sys.exit(main())

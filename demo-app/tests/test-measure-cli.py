#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""demo-measure's subcommands as bench-guest.sh calls them (TAP).

Their logic is test-measure.c's; this checks the command lines and the
output the driver relies on: record lines, the verdict file, exit statuses
(1 for a failed point or a count that does not fit, 2 for usage errors),
on the fixture files of tests/fixtures and this host's /proc.

    test-measure-cli.py BUILD_DIR
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../common"))
from ktap import finish, ok  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
MEASURE = os.path.join(BUILD, "demo-measure")
FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")

def measure(*args, stdin=None, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([MEASURE, *args], input=stdin, capture_output=True, text=True, env=e, timeout=60)
    return p.returncode, p.stdout, p.stderr


def records(out):
    """{TYPE: object} of the MSHARE-BENCH-TYPE lines."""
    r = {}
    for line in out.splitlines():
        if line.startswith("MSHARE-BENCH-"):
            kind, _, text = line[len("MSHARE-BENCH-"):].partition(" ")
            r[kind] = json.loads(text)
    return r


def test_small():
    ok(measure("size", "1G")[:2] == (0, "1073741824 1G\n") and measure("size", "256M")[1] == "268435456 256M\n",
       "size: bytes and label")
    ok(measure("size", "0")[0] == 2 and measure("size", "1X")[0] == 2, "size: 0 and junk are usage errors")
    rc, out, _ = measure("record", "point", "mode=ci", "workers:=16", "reason:=", "a.b=c")
    ok(rc == 0 and out == 'MSHARE-BENCH-POINT {"type":"point","mode":"ci","workers":16,"reason":null,"a":{"b":"c"}}\n',
       "record: one line, NAME=STRING, NAME:=JSON, dotted names")
    ok(measure("record", "end", "x")[0] == 2 and measure("record", "end", "n:={")[0] == 2,
       "record: bad arguments are usage errors")
    ok(measure("nothing")[0] == 2 and measure("--help")[0] == 0, "an unknown command; --help")


def test_pool():
    line = '{"program":"demo-load","records":1015792,"load_ms":1729.884}'
    rc, out, _ = measure("pool", "shm", "268435456", "256M", stdin=f"a warning\n{line}\n")
    r = records(out)
    ok(rc == 0 and r.get("POOL") == {"type": "pool", "backing": "shm", "pool_bytes": 268435456,
                                      "load": json.loads(line)}
       and "[bench] shm 256M: pool loaded (1015792 records in 1.7 s)" in out,
       "pool: demo-load's JSON line into the record, and the progress line")
    rc, out, _ = measure("pool", "shm", "268435456", "256M", stdin="demo-load: failed\n")
    ok(rc == 0 and records(out).get("POOL", {}).get("load", 1) is None and "(?)" in out,
       "pool: without a JSON line, load is null")


def test_point(tmp):
    sample = os.path.join(tmp, "at-ready.json")
    with open(sample, "w") as f:
        f.write(json.dumps({"pagetables_kb": 3604, "mem_available_kb": 3281604, "shmem_kb": 1,
                            "hugepages_free": 0, "owner_pagetables": None,
                            "cg": [{"id": "w1", "pagetables": 2146304}]}))
    save, verdict = os.path.join(tmp, "point.json"), os.path.join(tmp, "verdict")
    args = ["point", "--key", "shm-1024M-3", "--before", os.path.join(FIX, "sample-before.json"),
            "--at-ready", sample, "--ready", os.path.join(FIX, "ready.jsonl"),
            "--done", os.path.join(FIX, "done.*"), "--times", "1000,1410,1630,1700,11740",
            "--regions", os.path.join(FIX, "regions.json"), "--region", "demo-pool",
            "--save", save, "--verdict", verdict, "mode=ci", "backing=shm", "pool_bytes:=1073741824"]
    rc, out, _ = measure(*args, "workers:=3")
    r = records(out)
    with open(verdict) as f:
        v = f.read().split("\n")
    ok(rc == 1 and r["POINT"]["status"] == "failed" and r["POINT"]["pagetables_added_kb"] == 624
       and r["POINT"]["region_attached"] == 3 and v[1] == "1 of 3 workers gave no result (3 got ready)",
       "point: a worker without a result fails it (exit 1), the reason in the verdict")
    ok(r["WORKERS"]["point"] == "shm-1024M-3" and [w["id"] for w in r["WORKERS"]["workers"]] == ["w1", "w2", "w3"]
       and r["WORKERS"]["workers"][0]["cg_pagetables_kb"] == 2096,
       "point: the WORKERS record follows")
    rc, out, _ = measure(*args, "workers:=2")
    with open(save) as f:
        saved = json.load(f)
    with open(verdict) as f:
        v = f.read().split("\n")
    ok(rc == 0 and saved == records(out)["POINT"] and v[0].startswith("all 3 ready in 0.6 s") and v[1] == "",
       "point: ok (exit 0), --save holds the record, the verdict the summary")
    rc, out, _ = measure(*args, "--status", "failed", "--reason", "no worker got ready for 900 s", "workers:=2")
    ok(rc == 1 and records(out)["POINT"]["reason"] == "no worker got ready for 900 s", "point: the driver's reason")
    ok(measure("point", "--key", "k")[0] == 2, "point: missing options are a usage error")

    m, s = os.path.join(tmp, "m.json"), os.path.join(tmp, "s.json")
    with open(m, "w") as f:
        json.dump({"pagetables_added_kb": 624, "warmup_minflt_median": 0}, f)
    with open(s, "w") as f:
        json.dump({"pagetables_added_kb": 33400, "warmup_minflt_median": 16386}, f)
    rc, out, _ = measure("bound", "--mshare", m, "--shm", s, "--context", "16 workers")
    lines = out.splitlines()
    ok(rc == 0 and len(lines) == 2 and all(l.startswith("ok - ") for l in lines) and "ratio 53.5 >= 20" in lines[0],
       "bound: both checks hold")
    rc, out, _ = measure("bound", "--mshare", os.path.join(tmp, "none.json"), "--shm", s, "--context", "c")
    ok(rc == 0 and [l[:7] for l in out.splitlines()] == ["not ok "] * 2, "bound: a point that did not run")


def test_host():
    env = {"BENCH_RESERVE_KB": "0", "BENCH_OVERHEAD_KB": "0"}
    ok(measure("fits", "shm", "1G", "1", "processes", env=env)[0] == 0, "fits: one worker")
    rc, out, _ = measure("fits", "shm", "1G", "1000000000", "containers", env=env)
    ok(rc == 1 and out.startswith("would not fit: 1000000000 workers need about"), "fits: too many, and why")
    ok(measure("fits", "nfs", "1G", "1", "processes")[0] == 2, "fits: an unknown backing")
    ok(measure("fits", "shm", "1G", "1", "processes", env={"BENCH_OVERHEAD_KB": "x"})[0] == 2,
       "fits: a bad BENCH_OVERHEAD_KB")
    ok(measure("sweep", "1073741824", "1,16", "4096")[:2] == (0, "1 16\n"), "sweep: the list as given")
    ok(measure("sweep", "1073741824", "1,,x", "4096")[0] == 2, "sweep: a bad list")
    rc, out, _ = measure("sample")
    s = json.loads(out) if rc == 0 else {}
    ok(isinstance(s.get("pagetables_kb"), int) and s.get("cg") == [], "sample: this host's PageTables")
    rc, out, _ = measure("begin", "mode=ci", "sizes=1G", "workers=16", "backings=shm", "seconds:=2", "mix=read-mostly")
    b = records(out).get("BEGIN", {})
    ok(rc == 0 and b.get("kernel") == os.uname().release and isinstance(b.get("mem_total_kb"), int)
       and "[bench] mode ci: pools 1G, workers 16, backings shm, 2 s read-mostly runs" in out,
       "begin: the record with the kernel's and memory's numbers, and the progress line")


def main():
    if not os.access(MEASURE, os.X_OK):
        print(f"Bail out! {MEASURE} is missing: make first")
        return 1
    tmp = tempfile.mkdtemp(prefix="measure-test.", dir=BUILD)
    try:
        test_small()
        test_pool()
        test_point(tmp)
        test_host()
    finally:
        subprocess.run(["rm", "-rf", tmp])
    return finish()


if __name__ == "__main__":
    sys.exit(main())

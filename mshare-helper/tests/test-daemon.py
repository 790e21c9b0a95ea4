#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Host test of mshare-owner's socket, policy, reload and robustness logic.

Runs the daemon built on ../libmshare/tests/fake-mshare.c (a region is a memfd there: the
host kernel has no mshare system calls) with --socket in a temporary
directory, and mshare-ctl against it. Prints TAP. Usage:

    test-daemon.py MSHARE_OWNER_FAKE MSHARE_CTL OWNER_STRESS

What needs the real kernel (sharing page tables, read-only windows, SIGSEGV
after the owner exits, cgroup charging) is for the in-guest tests.
"""

import array
import contextlib
import ctypes
import errno
import fcntl
import json
import os
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../common"))
from ktap import finish, ok, skip  # noqa: E402

MAX_MESSAGE = 64 * 1024
NOBODY = 65534


CONFIG = """
[Region]
Name=alpha
Size=4M
Backing=anonymous
Protection=rw

[Region]
Name=beta
Size=2M
Backing=memfd

[Region]
Name=gamma
Size=6M
Populate=yes

[Region]
Name=huge
Size=4M
Backing=hugetlbfs

[Grant]
Region=*
Mode=rw
User=root

[Grant]
Region=alpha
Mode=ro
User={nobody}

[Grant]
Region=beta
Mode=rw
Container=web-*
Annotation=tier=prod
"""


class Daemon:
    """The daemon on the fake libmshare, with --socket in tmp. With store (an
    FdStore) it runs as under systemd with FileDescriptorStoreMax=: its
    notifications go to the store, and what the store holds is passed to it
    (LISTEN_FDS). listen (a listening socket, and its name) is passed along
    instead of --socket, as mshare-owner.socket passes its socket."""

    def __init__(self, binary, tmp, name, extra=(), store=None, env=None, listen=None,
                 config=True, wait=True):
        self.tmp = tmp
        self.sock = os.path.join(tmp, f"{name}.sock")
        self.conf = os.path.join(tmp, f"{name}.d")
        self.log = os.path.join(tmp, f"{name}.log")
        self.attached = os.path.join(tmp, f"{name}.attached")
        self.store = store
        os.makedirs(self.conf, exist_ok=True)
        if config:
            self.write_config("main.conf", CONFIG.format(nobody=NOBODY))
        self.start(binary, extra, env, listen, wait)

    def start(self, binary, extra=(), env=None, listen=None, wait=True):
        extra_env = env or {}
        env = dict(os.environ)
        for k in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "FAKE_MSHARE_CRASH"):
            env.pop(k, None)
        env["FAKE_MSHARE_ATTACHED"] = self.attached
        # The configuration has a hugetlbfs region; the fake refuses anonymous
        # huge-page objects unless told the pool has huge pages.
        env["FAKE_MSHARE_HUGE_PAGES"] = "1"
        env.update(extra_env)
        # As mshare-owner.service runs it: root without any capability.
        argv = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--", binary,
                "--config-dir", self.conf, "--log-level", "debug", *extra]
        if listen is None:
            argv[5:5] = ["--socket", self.sock]
        passed, pass_fds = [], []
        with self.store.lock if self.store else contextlib.nullcontext():
            if self.store:
                env["NOTIFY_SOCKET"] = self.store.path
                passed = self.store.entries()
            if listen is not None:
                passed.insert(len(passed) // 2, (listen[1], listen[0].fileno()))
            if passed:
                argv, pass_fds = listen_fds_argv(argv, passed, env)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(self.log, "a"),
                                     env=env, pass_fds=pass_fds)
        for fd in pass_fds:
            os.close(fd)
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"daemon exited with {self.proc.returncode}: {open(self.log).read()[-3000:]}")
            if self.store:
                if self.store.ready_since(self.started, deadline - time.monotonic()):
                    return
                continue
            try:
                s = connect(self.sock)
                s.close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"daemon did not come up: {open(self.log).read()[-3000:]}")

    def write_config(self, name, text):
        with open(os.path.join(self.conf, name), "w") as f:
            f.write(text)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = None
        if self.store:
            self.store.drain()
        return rc

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        if self.store:
            self.store.drain()

    def log_text(self):
        with open(self.log) as f:
            return f.read()


# Moves the descriptors named in argv[1] to 3, 4, ..., sets LISTEN_PID to
# its own pid and execs the rest of argv (the pid stays). Not bash: it makes
# the descriptors above 9 that `exec N<&M` opens close-on-exec.
LISTEN_WRAPPER = """import os, sys
src = [int(fd) for fd in sys.argv[1].split(",")]
for i, fd in enumerate(src):
    os.dup2(fd, 3 + i)
for fd in src:
    os.close(fd)
os.environ["LISTEN_PID"] = str(os.getpid())
os.execvp(sys.argv[2], sys.argv[2:])
"""


def listen_fds_argv(argv, passed, env):
    """argv wrapped so that the descriptors of passed ([(name, fd)]) arrive
    as 3, 4, ... with LISTEN_FDS, LISTEN_FDNAMES and LISTEN_PID the daemon's
    pid (the wrapper execs setpriv, which execs the daemon: one pid).
    Returns the argv and the descriptors to pass (duplicates, above any in
    use)."""
    dups = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3000) for _, fd in passed]
    env["LISTEN_FDS"] = str(len(passed))
    env["LISTEN_FDNAMES"] = ":".join(name for name, _ in passed)
    return [sys.executable, "-I", "-c", LISTEN_WRAPPER, ",".join(map(str, dups)), *argv], dups


libc = ctypes.CDLL(None, use_errno=True)
SYS_kcmp, KCMP_FILE = 312, 0
F_OFD_GETLK = 36
FLOCK = "hhqqi4x"


def same_file(a, b):
    """Whether descriptors a and b are one open file (kcmp), as systemd's
    same_fd() decides when it dedups its fd store."""
    pid = os.getpid()
    return libc.syscall(SYS_kcmp, pid, pid, KCMP_FILE, a, b) == 0


def owner_lock_elsewhere(fd):
    """The fake's ownership: mshare_create() locks its open file (F_OFD_SETLK);
    another open file of the region sees a conflicting lock."""
    probe = struct.pack(FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 1, 0)
    return struct.unpack(FLOCK, fcntl.fcntl(fd, F_OFD_GETLK, probe))[0] != fcntl.F_UNLCK


def is_owner_file(fd):
    """Whether fd is the region's owner file (in the fake's terms)."""
    other = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        owned = owner_lock_elsewhere(other)
    finally:
        os.close(other)
    return owned and not owner_lock_elsewhere(fd)


def inode(fd):
    return os.fstat(fd).st_ino


class FdStore:
    """systemd's side of a service's fd store (FileDescriptorStoreMax=), as
    systemd 252 does it: the NOTIFY_SOCKET receiver. FDSTORE=1 keeps the
    descriptors sent along under FDNAME= (one that is the same open file as
    one kept already is dropped), FDSTOREREMOVE=1 closes every one named
    FDNAME=; an entry that reports EPOLLHUP or EPOLLERR is dropped (a pidfd
    once its process is reaped: hangups()). With max (FileDescriptorStoreMax=)
    it refuses what would go past max entries, closing it without a word to
    the daemon, as systemd does (refused lists the names). What it holds is
    passed to the next start in order (entries()); stop() empties it, as
    `systemctl stop` does. A thread reads the notifications as they come,
    as PID 1 does (the daemon's sd_notify() blocks on a full socket);
    drain() reads what is queued in the caller, so that what a daemon sent
    before it replied or exited is seen."""

    def __init__(self, tmp, name="notify", max=None):
        self.path = os.path.join(tmp, f"{name}.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.setblocking(False)
        self.kept = []      # [name, fd]
        self.messages = []  # (time, {KEY: VALUE})
        self.max = max
        self.refused = []   # names refused for want of room
        # refuse(name): drop what is stored under name, as systemd drops
        # what it cannot keep, without telling the daemon.
        self.refuse = None
        self.lock = threading.RLock()
        self.closing = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.closing:
            select.select([self.sock], [], [], 0.05)
            with self.lock:
                if not self.closing:
                    self.read_queued()

    def drain(self, wait=0.0):
        """Reads what is queued, after waiting wait seconds for more."""
        time.sleep(wait)
        with self.lock:
            self.read_queued()

    def read_queued(self):
        while True:
            fds = array.array("i")
            try:
                msg, anc, _, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(253 * fds.itemsize),
                                                   socket.MSG_CMSG_CLOEXEC)
            except BlockingIOError:
                return
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
            fields = dict(line.split("=", 1) for line in msg.decode().split("\n") if "=" in line)
            self.messages.append((time.monotonic(), fields))
            if fields.get("FDSTORE") == "1":
                name = fields.get("FDNAME", "stored")
                for fd in fds:
                    if (self.refuse and self.refuse(name)) or any(same_file(fd, k) for _, k in self.kept):
                        os.close(fd)
                    elif self.max is not None and len(self.kept) >= self.max:
                        os.close(fd)  # systemd: "Hit fd store limit", EXFULL
                        self.refused.append(name)
                    else:
                        self.kept.append([name, fd])
            else:
                for fd in fds:
                    os.close(fd)
            if fields.get("FDSTOREREMOVE") == "1":
                self.remove(fields.get("FDNAME"))

    def remove(self, name):
        with self.lock:
            for e in [e for e in self.kept if e[0] == name]:
                os.close(e[1])
                self.kept.remove(e)

    def ready_since(self, since, timeout):
        self.drain(min(max(timeout, 0), 0.05))
        with self.lock:
            return any(t >= since and f.get("READY") == "1" for t, f in self.messages)

    def status(self):
        with self.lock:
            return next((f["STATUS"] for _, f in reversed(self.messages) if "STATUS" in f), None)

    def hangups(self):
        with self.lock:
            p = select.poll()
            for _, fd in self.kept:
                p.register(fd, 0)
            gone = {fd for fd, ev in p.poll(0) if ev & (select.POLLHUP | select.POLLERR)}
            for e in [e for e in self.kept if e[1] in gone]:
                os.close(e[1])
                self.kept.remove(e)

    def entries(self):
        with self.lock:
            return [(n, fd) for n, fd in self.kept]

    def names(self):
        with self.lock:
            return sorted(n for n, _ in self.kept)

    def add(self, name, fd):
        with self.lock:
            self.kept.append([name, fd])

    def state(self):
        """The state the store holds (the newest), as JSON."""
        with self.lock:
            states = sorted((int(n.rsplit("-", 1)[1]), fd) for n, fd in self.kept
                            if n.startswith("store-state-"))
            if not states:
                return None
            return json.loads(os.pread(states[-1][1], 1 << 20, 0))

    def stop(self):
        with self.lock:
            for _, fd in self.kept:
                os.close(fd)
            self.kept = []

    def close(self):
        self.stop()
        self.closing = True
        self.thread.join()
        self.sock.close()


def connect(path, timeout=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    s.connect(path)
    return s


def recv_reply(s):
    """One reply and the descriptors with it; (None, []) on EOF."""
    fds = array.array("i")
    msg, anc, flags, _ = s.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(4 * fds.itemsize))
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    if not msg:
        return None, list(fds)
    return json.loads(msg), list(fds)


def request(path, obj, raw=None):
    """Sends one request on a new connection; returns (reply, fds, socket)."""
    s = connect(path)
    s.send(raw if raw is not None else json.dumps(obj).encode())
    reply, fds = recv_reply(s)
    return reply, fds, s


def call(path, obj):
    reply, fds, s = request(path, obj)
    s.close()
    return reply, fds


def answered(path, timeout=0.5):
    """Whether anything answers a new connection to path in time: a reply
    to hello, or a refusal (a peer outside a channel's container gets one
    at once). A socket that nothing serves accepts into its queue only."""
    try:
        s = connect(path, timeout)
    except OSError:
        return False
    with s:
        with contextlib.suppress(OSError):
            s.send(b'{"version":1,"op":"hello"}')
        try:
            s.recv(MAX_MESSAGE)
            return True
        except socket.timeout:
            return False
        except OSError:
            return True  # reset: the daemon closed it


def is_closed(s):
    try:
        return s.recv(MAX_MESSAGE) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def in_child(fn):
    """Runs fn() in a forked child; returns what it returned (JSON-able)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            out = json.dumps(fn())
        except Exception as e:  # noqa: BLE001 - reported to the parent
            out = json.dumps({"exception": repr(e)})
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data)


def as_user(uid, fn):
    """Runs fn() in a child with uid/gid uid; returns what it returned (JSON-able)."""
    def child():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        return fn()
    return in_child(child)


class Cgroups:
    """Cgroups of the unified (v2) hierarchy for stand-in containers, under
    mshare-test-PID, removed at the end. The daemon tells a container's
    processes by their cgroup."""

    def __init__(self):
        self.root = None
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                sep = fields.index("-")
                if fields[sep + 1] == "cgroup2":
                    self.root = fields[4]
                    break
        if self.root is None:
            raise SystemExit("test-daemon.py: no cgroup2 file system is mounted (the daemon "
                             "tells containers apart by their cgroup); mount one on /sys/fs/cgroup")
        with open("/proc/self/cgroup") as f:
            own = next(line[3:].strip() for line in f if line.startswith("0::"))
        self.base = os.path.join(self.root, own.lstrip("/"), f"mshare-test-{os.getpid()}")
        self.made = []
        self.make("")

    def make(self, name):
        path = os.path.join(self.base, name) if name else self.base
        os.makedirs(path, exist_ok=True)
        self.made.append(path)
        return path

    def enter(self, name):
        """Moves the calling process into cgroup name."""
        with open(os.path.join(self.base, name, "cgroup.procs"), "w") as f:
            f.write("0")

    def popen(self, name, argv):
        return subprocess.Popen(argv, preexec_fn=lambda: self.enter(name))

    def run_in(self, name, fn, uid=None):
        """fn() in a child in cgroup name (and with uid); its JSON-able result."""
        def child():
            self.enter(name)
            return fn() if uid is None else as_user(uid, fn)
        return in_child(child)

    def connect_in(self, name, path):
        """A connection to path made by a process in cgroup name, after a
        hello on it."""
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                a.close()
                self.enter(name)
                s = connect(path)
                # The daemon looks at a peer when it accepts the connection:
                # this process must live until then.
                s.send(b'{"version":1,"op":"hello"}')
                recv_reply(s)
                socket.send_fds(b, [b"s"], [s.fileno()])
                code = 0
            finally:
                os._exit(code)
        b.close()
        _, fds, _, _ = socket.recv_fds(a, 16, 1)
        a.close()
        os.waitpid(pid, 0)
        s = socket.socket(fileno=fds[0])
        s.settimeout(10)
        return s

    def cleanup(self):
        for path in reversed(self.made):
            for _ in range(50):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:  # its last process is still exiting
                    time.sleep(0.1)


def regions(path):
    reply, _ = call(path, {"version": 1, "op": "list"})
    return {r["name"]: r for r in reply["regions"]}


def fd_flags(fd):
    with open(f"/proc/self/fdinfo/{fd}") as f:
        for line in f:
            if line.startswith("flags:"):
                return int(line.split()[1], 8)
    return None


def test_basics(d, ctl):
    reply, _ = call(d.sock, {"version": 1, "op": "hello", "client": "test"})
    ok(reply and reply["status"] == "ok" and reply["versions"] == [1]
       and reply["max_message"] == MAX_MESSAGE, "hello", reply)

    rs = regions(d.sock)
    ok(set(rs) == {"alpha", "beta", "gamma", "huge"}, "list shows the configured regions", rs)
    ok(all(r["state"] == "active" and r["owner_pid"] == d.proc.pid for r in rs.values()),
       "every region is active and owned by the daemon", rs)
    ok(rs["alpha"]["size"] == 4 << 20 and rs["beta"]["backing"] == "memfd"
       and rs["gamma"]["populate"] is True, "sizes, backings and populate as configured", rs)

    out = subprocess.run([ctl, "-s", d.sock, "list"], capture_output=True, text=True)
    ok(out.returncode == 0 and out.stdout.startswith("NAME") and "alpha" in out.stdout
       and "4.0M" in out.stdout, "mshare-ctl list prints a table", out.stdout + out.stderr)
    out = subprocess.run([ctl, "--socket", d.sock, "--json", "list"], capture_output=True, text=True)
    ok(out.returncode == 0 and {r["name"] for r in json.loads(out.stdout)} == set(rs),
       "mshare-ctl --json list", out.stderr)
    out = subprocess.run([ctl, "-s", d.sock, "show", "alpha"], capture_output=True, text=True)
    ok(out.returncode == 0 and "Grant: rw uid 0" in out.stdout and f"uid {NOBODY}" in out.stdout,
       "mshare-ctl show lists the grants to root", out.stdout + out.stderr)
    out = subprocess.run([ctl, "-s", d.sock, "show", "nope"], capture_output=True, text=True)
    ok(out.returncode == 1 and "ENOENT" in out.stderr, "mshare-ctl show of an unknown region fails",
       out.stderr)
    out = subprocess.run([ctl, "-s", d.sock, "frobnicate"], capture_output=True, text=True)
    ok(out.returncode == 2 and "unknown command" in out.stderr, "mshare-ctl: unknown command",
       out.stderr)
    out = subprocess.run([ctl, "-s", d.sock, "run", "alpha", "true"], capture_output=True, text=True)
    ok(out.returncode == 2 and "--" in out.stderr, "mshare-ctl run wants --", out.stderr)


def test_get(d, ctl):
    reply, fds = call(d.sock, {"version": 1, "op": "get", "region": "alpha", "mode": "rw"})
    ok(reply["status"] == "ok" and len(fds) == 1 and fd_flags(fds[0]) & os.O_ACCMODE == os.O_RDWR
       and reply["region"]["region_size"] == 4 << 20, "root gets a read-write descriptor", reply)
    for fd in fds:
        os.close(fd)
    reply, fds = call(d.sock, {"version": 1, "op": "get", "region": "alpha", "mode": "ro"})
    ok(reply["status"] == "ok" and len(fds) == 1 and fd_flags(fds[0]) & os.O_ACCMODE == os.O_RDONLY,
       "a read-only request gets a read-only descriptor", reply)
    for fd in fds:
        os.close(fd)
    reply, fds = call(d.sock, {"version": 1, "op": "get", "region": "nope", "mode": "ro"})
    ok(reply["status"] == "error" and reply["errno"] == "ENOENT" and not fds,
       "an unknown region: ENOENT", reply)

    script = ('test "$MSHARE_REGION" = alpha && test "$MSHARE_FD" = "$MSHARE_FD_ALPHA" && '
              'test "$MSHARE_MODE" = {mode} && test "$MSHARE_REGION_SIZE" = 4194304 && '
              'grep -q "^flags:.*{flag}$" /proc/self/fdinfo/$MSHARE_FD')
    out = subprocess.run([ctl, "-s", d.sock, "run", "alpha", "--", "sh", "-c",
                          script.format(mode="rw", flag="2")], capture_output=True, text=True)
    ok(out.returncode == 0, "mshare-ctl run passes a read-write descriptor and its environment",
       out.stderr)
    out = subprocess.run([ctl, "-s", d.sock, "run", "--ro", "alpha", "--", "sh", "-c",
                          script.format(mode="ro", flag="0")], capture_output=True, text=True)
    ok(out.returncode == 0, "mshare-ctl run --ro passes a read-only descriptor", out.stderr)
    out = subprocess.run([ctl, "-s", d.sock, "run", "alpha", "--", "sh", "-c", "exit 7"])
    ok(out.returncode == 7, "mshare-ctl run exits with the command's status")
    out = subprocess.run([ctl, "-s", d.sock, "run", "alpha", "--", "/nonexistent/cmd"],
                         capture_output=True)
    ok(out.returncode == 127, "mshare-ctl run of a missing command exits 127")

    # Container requests: root only; container grants only.
    get_ct = {"version": 1, "op": "get", "region": "beta", "mode": "rw",
              "container": {"name": "web-1", "annotations": {"tier": "prod"}}}
    reply, fds = call(d.sock, get_ct)
    ok(reply["status"] == "ok" and len(fds) == 1, "root gets a region for a granted container", reply)
    for fd in fds:
        os.close(fd)
    get_ct["container"]["annotations"]["tier"] = "dev"
    reply, fds = call(d.sock, get_ct)
    ok(reply["errno"] == "EACCES" and not fds, "not for a container the grant does not match", reply)

    if os.geteuid() != 0:
        for what in ("unprivileged get ro", "unprivileged get rw", "ungranted region",
                     "container request", "reload", "list and show"):
            skip(what, "needs root to switch users")
        return

    def as_nobody():
        res = {}
        res["ro"], fds = call(d.sock, {"version": 1, "op": "get", "region": "alpha", "mode": "ro"})
        res["ro_fds"] = len(fds)
        res["ro_flags"] = fd_flags(fds[0]) if fds else None
        res["rw"], fds = call(d.sock, {"version": 1, "op": "get", "region": "alpha", "mode": "rw"})
        res["rw_fds"] = len(fds)
        res["beta"], _ = call(d.sock, {"version": 1, "op": "get", "region": "beta", "mode": "ro"})
        res["ct"], _ = call(d.sock, {"version": 1, "op": "get", "region": "beta", "mode": "ro",
                                     "container": {"name": "web-1",
                                                   "annotations": {"tier": "prod"}}})
        res["reload"], _ = call(d.sock, {"version": 1, "op": "reload"})
        res["list"], _ = call(d.sock, {"version": 1, "op": "list"})
        res["show"], _ = call(d.sock, {"version": 1, "op": "show", "region": "alpha"})
        return res

    res = as_user(NOBODY, as_nobody)
    ok(res.get("ro", {}).get("status") == "ok" and res["ro_fds"] == 1
       and res["ro_flags"] & os.O_ACCMODE == os.O_RDONLY,
       "a read-only grant hands out a read-only descriptor", res)
    ok(res.get("rw", {}).get("errno") == "EACCES" and res["rw_fds"] == 0
       and "read-only" in res["rw"]["message"], "read-write is refused on a read-only grant", res)
    ok(res.get("beta", {}).get("errno") == "EACCES", "an ungranted region is refused", res)
    ok(res.get("ct", {}).get("errno") == "EPERM", "only root may speak for a container", res)
    ok(res.get("reload", {}).get("errno") == "EPERM", "only root may reload", res)
    access = {r["name"]: r["access"] for r in res.get("list", {}).get("regions", [])}
    ok(access.get("alpha") == "ro" and access.get("beta") == "none"
       and "grants" not in res.get("show", {}),
       "list tells each peer its access; show keeps grants from non-root", res)


def test_malformed(d):
    def bad(what, payload, code):
        s = connect(d.sock)
        s.send(payload)
        reply, fds = recv_reply(s)
        good = reply is not None and reply["status"] == "error" and reply["errno"] == code
        ok(good and is_closed(s), f"{what}: {code}, then the connection is closed", reply)
        s.close()

    bad("not JSON", b"hello", "EBADMSG")
    bad("truncated JSON", b'{"version":1,"op":"ge', "EBADMSG")
    bad("binary garbage", bytes(range(256)), "EBADMSG")
    bad("wrong version", b'{"version":2,"op":"hello"}', "EPROTONOSUPPORT")
    bad("missing op", b'{"version":1}', "EBADMSG")
    bad("unknown op", b'{"version":1,"op":"format-disk"}', "EOPNOTSUPP")
    bad("wrong type", b'{"version":1,"op":"get","region":7,"mode":"ro"}', "EBADMSG")
    bad("bad region name", b'{"version":1,"op":"get","region":"../../x","mode":"ro"}', "EINVAL")
    bad("oversized message", b'{"version":1,"op":"hello","x":"' + b"a" * 100000 + b'"}', "EMSGSIZE")

    # Descriptors sent to the daemon are refused (and never installed there).
    s = connect(d.sock)
    r, w = os.pipe()
    s.sendmsg([b'{"version":1,"op":"hello"}'],
              [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [r, w]))])
    os.close(r)
    os.close(w)
    reply, _ = recv_reply(s)
    ok(reply and reply["errno"] == "EBADMSG" and is_closed(s), "descriptors from a client are refused",
       reply)
    s.close()

    # A zero-length message, and a hang-up right after a request.
    s = connect(d.sock)
    s.send(b"")
    ok(is_closed(s), "an empty message closes the connection")
    s.close()
    for _ in range(200):
        s = connect(d.sock)
        s.send(b'{"version":1,"op":"get","region":"alpha","mode":"rw"}')
        s.close()
    ok(d.alive(), "200 clients that vanish before their descriptor arrives")

    # A client that sends but never reads: the daemon stops reading it, and
    # the deadline ends it; nobody else waits meanwhile.
    s = connect(d.sock)
    s.setblocking(False)
    sent = 0
    try:
        for _ in range(5000):
            s.send(b'{"version":1,"op":"list"}')
            sent += 1
    except BlockingIOError:
        pass
    reply, _ = call(d.sock, {"version": 1, "op": "hello"})
    ok(reply["status"] == "ok", f"others are served while a client does not read ({sent} requests)")
    s.close()

    # A slow client: connects and says nothing until its deadline (1 s here).
    s = connect(d.sock, timeout=5)
    start = time.monotonic()
    reply, _ = recv_reply(s)
    took = time.monotonic() - start
    ok(reply and reply["errno"] == "ETIMEDOUT" and is_closed(s) and 0.5 < took < 4,
       f"an idle connection gets ETIMEDOUT after its deadline ({took:.2f} s)", reply)
    s.close()

    # Several requests on one connection.
    s = connect(d.sock)
    good = True
    for op in ("hello", "list", "hello"):
        s.send(json.dumps({"version": 1, "op": op}).encode())
        reply, _ = recv_reply(s)
        good = good and reply["status"] == "ok"
    ok(good, "several requests on one connection")
    s.close()

    ok(d.alive(), "the daemon survived every malformed message")


def test_many(binary, tmp, n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    # A daemon of its own: the main one closes connections idle for 1 s, and
    # a loaded machine can take longer than that to open the last of n, so
    # the first would be gone before they are used.
    d = Daemon(binary, tmp, "crowd", ["--timeout", "60", "--max-connections", str(n + 100)])
    socks = []
    try:
        for _ in range(n):
            socks.append(connect(d.sock, timeout=30))
        hello = b'{"version":1,"op":"hello"}'
        for s in socks:
            s.send(hello)
        good = 0
        for s in socks:
            reply, _ = recv_reply(s)
            good += reply is not None and reply["status"] == "ok"
        ok(good == n, f"{n} concurrent connections, all answered ({good})")
        # Half of them ask for a descriptor at once.
        get = b'{"version":1,"op":"get","region":"alpha","mode":"rw"}'
        for s in socks[::2]:
            s.send(get)
        got = 0
        for s in socks[::2]:
            reply, fds = recv_reply(s)
            got += reply is not None and reply["status"] == "ok" and len(fds) == 1
            for fd in fds:
                os.close(fd)
        ok(got == len(socks[::2]), f"{got} descriptors handed out concurrently")
        ok(d.alive(), "the daemon survived the crowd")
    finally:
        for s in socks:
            s.close()
        d.stop()


def test_stress_tool(d, stress):
    """tests/owner-stress, which the in-guest tests run against the real daemon."""
    out = subprocess.run([stress, "--socket", d.sock, "--clients", "1000", "--region", "alpha"],
                         capture_output=True, text=True, timeout=300)
    lines = out.stdout.strip().splitlines()
    results = [ln for ln in lines if ln.startswith(("ok ", "not ok "))]
    failures = [ln for ln in results if ln.startswith("not ok ")]
    ok(out.returncode == 0 and results and not failures and lines[-1] == f"1..{len(results)}",
       f"owner-stress against the daemon: {len(results)} checks, {len(failures)} failed",
       out.stdout + out.stderr)
    ok(d.alive(), "the daemon survived owner-stress")


def test_cap(binary, tmp):
    d = Daemon(binary, tmp, "capped", ["--max-connections", "8", "--timeout", "5"])
    time.sleep(0.2)  # the start-up probe's connection is gone
    socks = []
    for _ in range(8):
        s = connect(d.sock)
        s.send(b'{"version":1,"op":"hello"}')
        recv_reply(s)  # accepted and served: it holds a slot
        socks.append(s)
    extra = connect(d.sock)
    reply, _ = recv_reply(extra)
    ok(reply and reply["errno"] == "EAGAIN" and "too many connections" in reply["message"]
       and is_closed(extra), "past --max-connections a client gets a clear refusal", reply)
    extra.close()
    socks.pop().close()
    time.sleep(0.2)
    reply, _ = call(d.sock, {"version": 1, "op": "hello"})
    ok(reply["status"] == "ok", "a freed slot is served again")
    for s in socks:
        s.close()
    ok(d.stop() == 0, "the capped daemon stops cleanly")


def test_reload(d, ctl):
    before = regions(d.sock)
    # With every region attached (fake): drop "huge", change "gamma", add "delta".
    with open(d.attached, "w") as f:
        f.write("0")
    d.write_config("main.conf", CONFIG.format(nobody=NOBODY)
                   .replace("Name=gamma\nSize=6M", "Name=gamma\nSize=8M")
                   .replace("[Region]\nName=huge\nSize=4M\nBacking=hugetlbfs\n", "")
                   + "\n[Region]\nName=delta\nSize=2M\n")
    with open(d.attached, "w") as f:
        f.write("2")
    out = subprocess.run([ctl, "-s", d.sock, "reload"], capture_output=True, text=True)
    ok(out.returncode == 0 and "Reloaded" in out.stdout, "mshare-ctl reload", out.stdout + out.stderr)
    rs = regions(d.sock)
    ok(rs.get("delta", {}).get("state") == "active", "a new region appears", rs)
    ok(rs.get("huge", {}).get("state") == "retiring", "a removed region that is attached stays, retiring",
       rs)
    ok(rs.get("gamma", {}).get("state") == "changed" and rs["gamma"]["size"] == 6 << 20,
       "a changed region that is attached keeps its old form", rs)
    ok(rs["alpha"] == {**before["alpha"], "rss_bytes": rs["alpha"]["rss_bytes"],
                       "attached": 2, "windows": 2, "pgtables_bytes": 4096},
       "an unchanged region is untouched", (before["alpha"], rs["alpha"]))
    reply, fds = call(d.sock, {"version": 1, "op": "get", "region": "huge", "mode": "rw"})
    ok(reply["errno"] == "ENOENT" and not fds, "a retiring region is no longer handed out", reply)

    with open(d.attached, "w") as f:
        f.write("0")
    os.kill(d.proc.pid, signal.SIGHUP)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        rs = regions(d.sock)
        if "huge" not in rs and rs.get("gamma", {}).get("state") == "active":
            break
        time.sleep(0.1)
    ok("huge" not in rs, "SIGHUP: a retiring region goes once detached", rs)
    ok(rs.get("gamma", {}).get("state") == "active" and rs["gamma"]["size"] == 8 << 20,
       "a changed region is replaced once detached", rs.get("gamma"))

    d.write_config("zz-broken.conf", "[Region]\nName=broken\nSize=12Q\n")
    out = subprocess.run([ctl, "-s", d.sock, "reload"], capture_output=True, text=True)
    ok(out.returncode == 1 and "zz-broken.conf:3: Size=" in out.stderr and "EINVAL" in out.stderr,
       "a broken configuration is refused with file:line", out.stderr)
    ok(set(regions(d.sock)) == set(rs), "and the regions stay as they were")
    os.unlink(os.path.join(d.conf, "zz-broken.conf"))

def open_fds(pid, expect=None):
    """The daemon's open descriptors; with expect, waits up to 3 s for that
    count (connections the client closed are closed by the daemon a little
    later)."""
    deadline = time.monotonic() + 3
    while True:
        n = len(os.listdir(f"/proc/{pid}/fd"))
        if expect is None or n == expect or time.monotonic() > deadline:
            return n
        time.sleep(0.05)


def start_container(cg, tmp, cgname, seconds):
    """A process in a cgroup of its own, as a container's: the process, its
    pidfd and a channel's listening socket and path, what a hook registers."""
    cg.make(cgname)
    sleeper = cg.popen(cgname, ["sleep", str(seconds)])
    ls, path = channel_socket(tmp, f"{cgname}.sock")
    return sleeper, os.pidfd_open(sleeper.pid), ls, path


def register(d, cid, regs, listen_sock, pidfd, name="web-1", annotations=None, raw_fds=None):
    """Sends register on a new connection; returns (reply, socket), reply
    None if the daemon hung up without one."""
    obj = {"version": 1, "op": "register",
           "container": {"id": cid, "name": name,
                         "annotations": annotations if annotations is not None else {"tier": "prod"}},
           "regions": [{"region": r, "mode": m} for r, m in regs]}
    s = connect(d.sock)
    fds = raw_fds if raw_fds is not None else [listen_sock.fileno(), pidfd]
    socket.send_fds(s, [json.dumps(obj).encode()], fds)
    try:
        reply, _ = recv_reply(s)
    except ConnectionResetError:
        reply = None
    return reply, s


def channel_socket(tmp, name):
    path = os.path.join(tmp, name)
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ls.bind(path)
    os.chmod(path, 0o666)  # as the hook makes it: anyone may reach it
    ls.listen(16)
    return ls, path


def test_containers(d, ctl, cg):
    """The OCI hook's side: register, the container's channel, unregister."""
    sleeper, pidfd, ls, path = start_container(cg, d.tmp, "ct1", 60)
    time.sleep(1.5)  # connections of the earlier tests time out (--timeout 1)
    fds_before = open_fds(d.proc.pid)

    r = as_user(NOBODY, lambda: register(d, "c0", [("beta", "rw")], ls, pidfd)[0])
    ok(r.get("errno") == "EPERM", "register by a non-root peer: EPERM", r)
    s = connect(d.sock)
    s.send(json.dumps({"version": 1, "op": "register", "container": {"id": "c0"},
                       "regions": [{"region": "beta", "mode": "rw"}]}).encode())
    reply, _ = recv_reply(s)
    ok(reply.get("errno") == "EBADMSG" and is_closed(s), "register without descriptors: EBADMSG, closed", reply)
    s.close()
    pr, pw = os.pipe()
    reply, s = register(d, "c0", [("beta", "rw")], ls, pidfd, raw_fds=[pr, pw])
    ok(reply.get("errno") == "EBADMSG" and is_closed(s), "register with two pipes instead: EBADMSG", reply)
    s.close()
    os.close(pr)
    os.close(pw)
    reply, s = register(d, "c0", [("alpha", "ro")], ls, pidfd)
    ok(reply.get("errno") == "EACCES" and "alpha" in reply.get("message", "") and "c0" in reply["message"],
       "register for a region the container has no grant of: EACCES naming region and container", reply)
    s.close()
    reply, s = register(d, "c0", [("beta", "rw")], ls, pidfd, annotations={"tier": "dev"})
    ok(reply.get("errno") == "EACCES", "register of a container the grant's annotation does not match: EACCES",
       reply)
    s.close()
    reply, s = register(d, "c0", [("nosuch", "ro")], ls, pidfd)
    ok(reply.get("errno") == "ENOENT", "register for an unknown region: ENOENT", reply)
    s.close()
    ok(open_fds(d.proc.pid, fds_before) == fds_before, "refused registrations keep no descriptor in the daemon",
       (fds_before, open_fds(d.proc.pid)))

    reply, s = register(d, "c1", [("beta", "rw")], ls, pidfd)
    ok(reply.get("status") == "ok" and reply.get("regions") == [{"region": "beta", "mode": "rw"}],
       "register web-1 (tier=prod) for beta rw", reply)
    s.close()
    # As the hook does once it has registered: the daemon's copy is the
    # only one left.
    spare = socket.socket(fileno=os.dup(ls.fileno()))
    ls.close()
    reply, s = register(d, "c1", [("beta", "ro")], spare, pidfd)
    ok(reply.get("errno") == "EEXIST", "the same id again: EEXIST", reply)
    s.close()
    spare.close()
    out = subprocess.run([ctl, "--socket", d.sock, "--json", "containers"], capture_output=True, text=True)
    listed = json.loads(out.stdout) if out.returncode == 0 else out.stderr
    ok(isinstance(listed, list) and [c["id"] for c in listed] == ["c1"] and listed[0]["pid"] == sleeper.pid,
       "mshare-ctl containers lists c1 with its process", listed)

    def on_channel(obj):
        c = cg.connect_in("ct1", path)
        c.send(json.dumps(obj).encode())
        reply, fds = recv_reply(c)
        c.close()
        for f in fds:
            os.close(f)
        return reply, len(fds)

    reply, n = on_channel({"version": 1, "op": "get", "region": "beta", "mode": "rw"})
    ok(reply.get("status") == "ok" and n == 1, "on its channel the container gets beta read-write", reply)
    reply, n = on_channel({"version": 1, "op": "get", "region": "alpha", "mode": "ro"})
    ok(reply.get("errno") == "EACCES" and n == 0, "but not alpha, which it did not register for", reply)
    reply, n = on_channel({"version": 1, "op": "get", "region": "beta", "mode": "rw",
                           "container": {"id": "c9", "name": "web-9", "annotations": {"tier": "prod"}}})
    ok(reply.get("errno") == "EPERM", "a container cannot speak for another container", reply)
    reply, _ = on_channel({"version": 1, "op": "list"})
    ok(reply.get("status") == "ok" and [r["name"] for r in reply["regions"]] == ["beta"],
       "list on the channel shows only beta", reply)
    for op in ("reload", "containers"):
        reply, _ = on_channel({"version": 1, "op": op})
        ok(reply.get("errno") == "EPERM", f"{op} on the channel: EPERM", reply)
    reply, _ = on_channel({"version": 1, "op": "unregister", "container": {"id": "c1"}})
    ok(reply.get("errno") == "EPERM", "unregister on the channel: EPERM", reply)

    test_channel_peers(d, cg, path)

    # A connection open when the container goes, then the container's exit.
    held = cg.connect_in("ct1", path)
    sleeper.kill()
    sleeper.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and call(d.sock, {"version": 1, "op": "containers"})[0]["containers"]:
        time.sleep(0.05)
    ok(call(d.sock, {"version": 1, "op": "containers"})[0]["containers"] == [],
       "the container's exit (pidfd) ends its registration")
    held.send(json.dumps({"version": 1, "op": "get", "region": "beta", "mode": "rw"}).encode())
    reply, fds = recv_reply(held)
    ok(reply and reply.get("errno") == "ENXIO" and not fds, "a connection left open gets ENXIO", reply)
    held.close()
    try:
        connect(path).close()
        refused = False
    except ConnectionRefusedError:
        refused = True
    ok(refused, "the channel's socket is closed: connecting is refused")
    os.close(pidfd)
    ok(open_fds(d.proc.pid, fds_before) == fds_before, "the daemon holds no descriptor of the container any more",
       (fds_before, open_fds(d.proc.pid)))

    # unregister, and a process that is gone before it registers.
    sleeper, pidfd, ls, path = start_container(cg, d.tmp, "ct2", 60)
    reply, s = register(d, "c2", [("beta", "ro")], ls, pidfd)
    s.close()
    reply, _ = call(d.sock, {"version": 1, "op": "unregister", "container": {"id": "c2"}})
    ok(reply.get("status") == "ok", "unregister c2", reply)
    reply, _ = call(d.sock, {"version": 1, "op": "unregister", "container": {"id": "c2"}})
    ok(reply.get("errno") == "ENOENT", "unregister c2 again: ENOENT", reply)
    sleeper.kill()
    sleeper.wait()
    reply, s = register(d, "c3", [("beta", "ro")], ls, pidfd)
    ok(reply.get("errno") == "ESRCH", "register for a process that has exited: ESRCH", reply)
    s.close()
    os.close(pidfd)
    ls.close()
    test_container_cgroups(d, cg)
    ok(d.alive(), "the daemon is still up")


def test_channel_peers(d, cg, path):
    """Container c1 (cgroup ct1) is registered on path, for beta rw: only
    its processes are served there, though anyone may reach the socket."""
    get_beta = json.dumps({"version": 1, "op": "get", "region": "beta", "mode": "rw"}).encode()

    def ask(s):
        try:
            s.send(get_beta)
        except BrokenPipeError:  # refused at once: the refusal is queued
            pass
        reply, fds = recv_reply(s)
        for f in fds:
            os.close(f)
        closed = is_closed(s)
        s.close()
        return {"reply": reply, "fds": len(fds), "closed": closed}

    def outsider():
        return ask(connect(path))

    for who, r in (("root", outsider()), ("uid nobody", as_user(NOBODY, outsider))):
        reply = r.get("reply") or {}
        ok(reply.get("errno") == "EACCES" and "container c1 only" in reply.get("message", "")
           and r["fds"] == 0 and r["closed"],
           f"{who} outside the container's cgroup reaches its socket and is refused: EACCES", r)
    log = open(d.log).read()
    ok("on the channel of container c1: it is not in the container's cgroup" in log,
       "the daemon logs the outsider", log[-2000:])
    cg.make("ct1/sub")
    r = ask(cg.connect_in("ct1/sub", path))
    ok(r["reply"].get("status") == "ok" and r["fds"] == 1,
       "a process in a cgroup below the container's is served", r)
    r = cg.run_in("ct1", lambda: ask(connect(path)), uid=NOBODY)
    ok(r["reply"].get("status") == "ok" and r["fds"] == 1,
       "a process of the container with another uid is served", r)


def test_container_cgroups(d, cg):
    """A container without a cgroup of its own cannot be registered."""
    ls, _ = channel_socket(d.tmp, "ct4.sock")
    sleeper = subprocess.Popen(["sleep", "60"])  # our own cgroup: the root here
    pidfd = os.pidfd_open(sleeper.pid)
    with open(f"/proc/{sleeper.pid}/cgroup") as f:
        where = next(line[3:].strip() for line in f if line.startswith("0::"))
    reply, s = register(d, "c4", [("beta", "ro")], ls, pidfd)
    s.close()
    ok(reply.get("errno") == "EPERM" and "not a cgroup of its own" in reply.get("message", ""),
       f"a container in the hook's cgroup ({where}) is refused: EPERM", reply)
    sleeper.kill()
    sleeper.wait()
    os.close(pidfd)

    cg.make("hook")
    sleeper = cg.popen("hook", ["sleep", "60"])
    pidfd = os.pidfd_open(sleeper.pid)
    reply = cg.run_in("hook", lambda: register(d, "c5", [("beta", "ro")], ls, pidfd)[0])
    ok(reply.get("errno") == "EPERM" and "not a cgroup of its own" in reply.get("message", ""),
       "a container in the cgroup of a hook that is not in the root is refused too", reply)
    cg.make("hook/ct")
    with open(os.path.join(cg.base, "hook/ct/cgroup.procs"), "w") as f:
        f.write(str(sleeper.pid))
    reply = cg.run_in("hook", lambda: register(d, "c5", [("beta", "ro")], ls, pidfd)[0])
    ok(reply.get("status") == "ok", "once in a cgroup of its own, it is registered", reply)
    sleeper.kill()
    sleeper.wait()
    os.close(pidfd)
    ls.close()


def test_log_escape(d):
    """What a client sends cannot forge log lines."""
    evil = "evil\n<3>mshare-owner: forged line\x1b[2J"
    reply, _ = call(d.sock, {"version": 1, "op": "get", "region": evil, "mode": "ro"})
    ok(reply.get("status") == "error", "a region name with a newline is refused", reply)
    lines = open(d.log).read().splitlines()
    ok(not any(line.startswith("<3>mshare-owner: forged") for line in lines)
       and not any("\x1b" in line for line in lines)
       and any("evil\\n<3>mshare-owner: forged line\\x1b[2J" in line for line in lines),
       "the daemon logs it on one line, newline and escape sequence escaped",
       "\n".join(line for line in lines if "evil" in line or "forged" in line))


def hold(path, n, uid=None, cg=None, cgname=None):
    """A child (with uid, in cgroup cgname) that opens n connections to path,
    each served a hello, and keeps them until release() is called. Returns
    (replies, release): the replies in order, None for a connection that got
    none. A child holds the gates of those forked before it: release them in
    the reverse order."""
    r, w = os.pipe()
    gate_r, gate_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.close(gate_w)
            if cg:
                cg.enter(cgname)
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            socks, replies = [], []
            for _ in range(n):
                s = connect(path)
                try:
                    try:
                        s.send(b'{"version":1,"op":"hello"}')
                    except BrokenPipeError:  # refused at once: the refusal is queued
                        pass
                    reply, _ = recv_reply(s)
                except OSError as e:
                    reply = {"oserror": errno.errorcode.get(e.errno, str(e))}
                replies.append(reply)
                socks.append(s)
            os.write(w, json.dumps(replies).encode())
            os.close(w)
            os.read(gate_r, 1)
        finally:
            os._exit(0)
    os.close(w)
    os.close(gate_r)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)

    def release():
        os.close(gate_w)
        os.waitpid(pid, 0)
    return json.loads(data), release


def served(replies):
    return sum(1 for r in replies if r and r.get("status") == "ok")


def test_limits(binary, tmp, ctl, cg):
    """No user and no container takes every connection: caps per uid and per
    channel, and slots kept for root. 32 connections keep 4 for root."""
    d = Daemon(binary, tmp, "limits", ["--max-connections", "32", "--max-connections-per-user", "6",
                                        "--max-connections-per-container", "3", "--timeout", "30"])
    time.sleep(0.2)
    releases = []
    try:
        replies, rel = hold(d.sock, 8, uid=NOBODY)
        releases.append(rel)
        refusal = replies[6] or {}
        ok(served(replies) == 6 and refusal.get("errno") == "EAGAIN"
           and f"too many connections of uid {NOBODY} (6)" in refusal.get("message", ""),
           "a user gets 6 connections, then a refusal that names the per-user cap", replies[5:])
        counts = []
        for uid in (NOBODY - 1, NOBODY - 2, NOBODY - 3, NOBODY - 4):
            replies, rel = hold(d.sock, 6, uid=uid)
            releases.append(rel)
            counts.append(served(replies))
            last = replies[-1] or {}
        ok(sum(counts) + 6 == 28 and "kept for root" in last.get("message", ""),
           "other users fill 28 of 32, the rest is kept for root", (counts, last))
        out = subprocess.run([ctl, "-s", d.sock, "list"], capture_output=True, text=True)
        ok(out.returncode == 0 and "alpha" in out.stdout, "root is still served (mshare-ctl list)",
           out.stdout + out.stderr)
        out = as_user(NOBODY - 5, lambda: subprocess.run([ctl, "-s", d.sock, "list"], capture_output=True,
                                                         text=True).stderr)
        ok("too many connections" in out and "kept for root" in out,
           "mshare-ctl of another user prints the daemon's refusal, not a reset", out)
    finally:
        for rel in reversed(releases):
            rel()
    time.sleep(0.3)

    sleeper, pidfd, ls, path = start_container(cg, tmp, "lim", 60)
    reply, s = register(d, "lim", [("beta", "ro")], ls, pidfd)
    s.close()
    ok(reply.get("status") == "ok", "container lim registered", reply)
    replies, rel = hold(path, 5, cg=cg, cgname="lim")
    refusal = replies[3] or {}
    ok(served(replies) == 3 and refusal.get("errno") == "EAGAIN"
       and "too many connections of container lim (3)" in refusal.get("message", ""),
       "a container gets 3 connections on its channel, then a refusal that names the cap", replies)
    replies2, rel2 = hold(d.sock, 6, uid=NOBODY)
    ok(served(replies2) == 6, "meanwhile a user on the owner socket is served as before", replies2)
    rel2()
    rel()
    sleeper.kill()
    sleeper.wait()
    os.close(pidfd)
    ls.close()
    ok(d.stop() == 0, "the limited daemon stops cleanly")


def test_fd_budget(binary, tmp):
    """Connections and channels are sized for the descriptors they can hold:
    a connection two (its socket, a reply's region descriptor the client has
    not taken yet). With 600 descriptors and 256 kept, 1000 connections
    asked for are cut to 129 and 43 containers."""
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (600, 600))
    log = os.path.join(tmp, "budget.log")
    sock = os.path.join(tmp, "budget.sock")
    conf = os.path.join(tmp, "budget.d")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "main.conf"), "w") as f:
        f.write(CONFIG.format(nobody=NOBODY))
    env = dict(os.environ, FAKE_MSHARE_ATTACHED=os.path.join(tmp, "budget.attached"),
               FAKE_MSHARE_HUGE_PAGES="1")
    env.pop("NOTIFY_SOCKET", None)
    proc = subprocess.Popen([binary, "--socket", sock, "--config-dir", conf, "--max-connections", "1000",
                             "--timeout", "60"], stdout=subprocess.DEVNULL, stderr=open(log, "w"),
                            env=env, preexec_fn=limit)
    deadline = time.monotonic() + 10
    while not os.path.exists(sock) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    ok("at most 129 connections" in open(log).read() and "43 containers" in open(log).read(),
       "1000 connections asked for with 600 descriptors: 129, and 43 containers",
       open(log).read()[-600:])
    # Every connection asks for more regions than it reads: the daemon
    # holds a reply, with its descriptor, for each.
    # A reply waits once the daemon's send buffer for the connection is
    # full: a few hundred replies that the client does not read.
    socks = []
    request_get = json.dumps({"version": 1, "op": "get", "region": "alpha", "mode": "ro"}).encode()
    for _ in range(400):  # more than the 344 that 600 - 256 would have let in
        s = connect(sock)
        s.setblocking(False)
        try:
            for _ in range(400):
                s.send(request_get)
                time.sleep(0)
        except OSError:
            pass
        socks.append(s)
    time.sleep(2)
    held = len(os.listdir(f"/proc/{proc.pid}/fd"))
    with open(os.path.join(conf, "more.conf"), "w") as f:
        f.write("[Region]\nName=delta\nSize=2M\n")
    proc.send_signal(signal.SIGHUP)
    time.sleep(1)
    text = open(log).read()
    ok(held > 2 * 129 and proc.poll() is None and "Too many open files" not in text and "delta" in text,
       f"with every connection holding a reply ({held} descriptors open) a reload still works",
       text[-1500:])
    for s in socks:
        s.close()
    proc.send_signal(signal.SIGTERM)
    ok(proc.wait(10) == 0, "and the daemon stops cleanly")


def test_busy(d, n=200):
    """Requests that arrive while the daemon cannot run (stopped, or busy
    with others) past their connections' deadline are still served: the
    deadline is for idle clients. The daemon runs with --timeout 1 and takes
    at most 64 events per wakeup, so most of these wait behind others."""
    conns = [connect(d.sock) for _ in range(n)]
    time.sleep(0.5)  # all accepted: their deadlines run
    os.kill(d.proc.pid, signal.SIGSTOP)
    try:
        for s in conns:
            s.send(json.dumps({"version": 1, "op": "hello"}).encode())
        time.sleep(1.5)  # past every deadline
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
    statuses = {}
    for s in conns:
        try:
            reply, _ = recv_reply(s)
        except OSError as e:  # closed on us with the request unread: reset
            reply = {"errno": errno.errorcode.get(e.errno, str(e))}
        key = "ok" if reply and reply.get("status") == "ok" else (reply or {}).get("errno", "hung up")
        statuses[key] = statuses.get(key, 0) + 1
        s.close()
    ok(statuses == {"ok": n}, f"{n} requests that waited past their deadline while the daemon was stopped are served",
       statuses)

# ---- restarts: the fd store (issue 16) ----

PATTERN = bytes(range(256)) * 16


def get_fd(path, region, mode):
    reply, fds = call(path, {"version": 1, "op": "get", "region": region, "mode": mode})
    return reply, (fds[0] if fds else None)


def region_inodes(path):
    return {n: r.get("inode") for n, r in regions(path).items()}


def stored_inodes(store):
    return {n[len("store-region-"):]: inode(fd) for n, fd in store.entries() if n.startswith("store-region-")}


def store_kinds(store):
    """{"region": [...names...], "state": n, "channel": n, "pidfd": n, other names}"""
    kinds = {}
    for n in store.names():
        kind = n.split("-")[1] if n.startswith("store-") else n
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def wait_until(fn, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return True
        time.sleep(0.05)
    return fn()


def test_restart_keeps(binary, tmp, ctl, cg):
    """Regions and container registrations survive SIGTERM (systemctl
    restart, an upgrade) and SIGKILL (a crash under Restart=on-failure)."""
    store = FdStore(tmp, "keep-notify")
    d = Daemon(binary, tmp, "keep", ["--timeout", "30"], store=store)
    store.drain(0.2)
    kinds = store_kinds(store)
    ok(kinds == {"region": 4, "state": 2}, "the store holds the 4 owner files, the state and the one before it",
       store.names())
    ok(all(is_owner_file(fd) for n, fd in store.entries() if n.startswith("store-region-")),
       "what the store holds of each region is its owner file")
    st = store.state()
    ok(st and {r["config"]["name"]: r["inode"] for r in st["regions"]} == stored_inodes(store)
       and all(r["populated"] for r in st["regions"]),
       "the state names each region by its inode, populated", st)
    before = region_inodes(d.sock)
    ok(before == stored_inodes(store) and all(before.values()), "list shows each region's inode", before)

    reply, rw = get_fd(d.sock, "alpha", "rw")
    reply2, ro = get_fd(d.sock, "alpha", "ro")
    ok(rw is not None and ro is not None and fd_flags(rw) & os.O_ACCMODE == os.O_RDWR
       and fd_flags(ro) & os.O_ACCMODE == os.O_RDONLY and inode(rw) == before["alpha"] == inode(ro),
       "a read-write and a read-only descriptor of alpha", (reply, reply2))
    ok(rw is not None and not is_owner_file(rw) and not is_owner_file(ro) and owner_lock_elsewhere(rw),
       "neither is the owner file: the daemon hands out new files, never the one that owns the region")
    os.pwrite(rw, PATTERN, 0)
    os.close(rw)
    os.close(ro)

    sleeper, pidfd, ls, path = start_container(cg, tmp, "keep1", 120)
    reply, sk = register(d, "k1", [("beta", "rw")], ls, pidfd)
    sk.close()
    ls.close()  # as the hook does: the daemon's copy (and the store's) is all that is left
    os.close(pidfd)
    store.drain(0.2)
    ok(reply.get("status") == "ok" and store_kinds(store).get("channel") == 1
       and store_kinds(store).get("pidfd") == 1, "a registered container's socket and pidfd are in the store",
       (reply, store.names()))
    fds_first = open_fds(d.proc.pid)

    pids = [d.proc.pid]
    for how in ("SIGTERM (systemctl restart, an upgrade)", "SIGKILL (a crash)"):
        if how.startswith("SIGTERM"):
            rc = d.stop()
            ok(rc == 0 and "the service manager's fd store keeps them" in d.log_text(),
               f"{how}: a clean exit that destroys nothing", d.log_text()[-800:])
        else:
            d.kill()
        names_down = store.names()
        start = time.monotonic()
        d.start(binary, ["--timeout", "30"])
        took = (time.monotonic() - start) * 1000
        pids.append(d.proc.pid)
        after = region_inodes(d.sock)
        ok(after == before, f"after {how}: the same regions, by inode ({took:.0f} ms to ready)", (before, after))
        rs = regions(d.sock)
        ok(all(r["state"] == "active" and r["owner_pid"] == d.proc.pid for r in rs.values()),
           "all active, owned by the new daemon", rs)
        reply, rw = get_fd(d.sock, "alpha", "rw")
        ok(rw is not None and os.pread(rw, len(PATTERN), 0) == PATTERN and not is_owner_file(rw),
           "alpha holds what was written before, through a new sharer's descriptor", reply)
        if rw is not None:
            os.close(rw)
        listed = call(d.sock, {"version": 1, "op": "containers"})[0].get("containers", [])
        ok([c["id"] for c in listed] == ["k1"] and listed[0]["pid"] == sleeper.pid,
           "the container's registration was adopted", listed)
        r = cg.run_in("keep1", lambda: call(path, {"version": 1, "op": "get", "region": "beta", "mode": "rw"})[0])
        ok(r.get("status") == "ok", "and its channel serves it again", r)
        store.drain(0.2)
        same = [n for n in store.names() if not n.startswith("store-state-")] == \
            [n for n in names_down if not n.startswith("store-state-")]
        ok(same and store_kinds(store)["state"] == 2, "the store holds the same entries, and two newer states",
           (names_down, store.names()))
        ok("Adopted 4 regions and 1 container from the fd store." in d.log_text(), "the journal says what was adopted")
    ok(len(set(pids)) == 3 and open_fds(d.proc.pid, fds_first) == fds_first,
       f"three daemons, the last with as many descriptors as the first ({fds_first})",
       (pids, open_fds(d.proc.pid)))

    # The container ends while the daemon is down: systemd drops the pidfd
    # (EPOLLHUP once reaped); the next start drops the channel.
    d.kill()
    sleeper.kill()
    sleeper.wait()
    store.hangups()
    ok(store_kinds(store).get("pidfd") is None, "systemd (the harness) dropped the reaped container's pidfd")
    d.start(binary, ["--timeout", "30"])
    store.drain(0.2)
    listed = call(d.sock, {"version": 1, "op": "containers"})[0].get("containers")
    ok(listed == [] and "channel" not in store_kinds(store)
       and "Container k1, pid %d: its process exited while mshare-owner was not running" % sleeper.pid in d.log_text(),
       "a container gone while the daemon was down is dropped, its socket out of the store",
       (listed, store.names()))

    # A container that dies while the daemon runs leaves the store at once.
    sleeper, pidfd, ls, path = start_container(cg, tmp, "keep2", 120)
    reply, sk = register(d, "k2", [("beta", "ro")], ls, pidfd)
    sk.close()
    ls.close()
    os.close(pidfd)
    sleeper.kill()
    sleeper.wait()
    ok(wait_until(lambda: call(d.sock, {"version": 1, "op": "containers"})[0]["containers"] == []),
       "a registered container exits: dropped")
    store.drain(0.3)
    ok("channel" not in store_kinds(store) and "pidfd" not in store_kinds(store),
       "its socket and pidfd left the store (FDSTOREREMOVE)", store.names())
    try:
        connect(path).close()
        refused = False
    except ConnectionRefusedError:
        refused = True
    ok(refused, "connecting to its socket is refused: nothing holds it any more")
    return d, store


def test_restart_config(binary, d, store, ctl):
    """A region whose configuration changed or vanished while the daemon
    was down: the reload rules, with a journal line naming it and what
    changed."""
    before = region_inodes(d.sock)
    d.stop()
    d.write_config("main.conf", CONFIG.format(nobody=NOBODY)
                   .replace("Name=gamma\nSize=6M", "Name=gamma\nSize=8M")
                   .replace("[Region]\nName=huge\nSize=4M\nBacking=hugetlbfs\n", ""))
    with open(d.attached, "w") as f:
        f.write("2")
    d.start(binary, ["--timeout", "30"])
    rs = regions(d.sock)
    log = d.log_text()
    ok(rs["gamma"]["state"] == "changed" and rs["gamma"]["size"] == 6 << 20 and rs["gamma"]["inode"] == before["gamma"],
       "gamma, resized while the daemon was down and still attached: kept as it was, state changed", rs["gamma"])
    ok("Region 'gamma', adopted from the fd store after a restart, no longer matches its configuration" in log
       and "(Size= 6291456 -> 8388608)" in log, "the journal names gamma and what changed",
       [line for line in log.splitlines() if "gamma" in line][-3:])
    ok(rs["huge"]["state"] == "retiring" and get_fd(d.sock, "huge", "rw")[0].get("errno") == "ENOENT",
       "huge, removed while the daemon was down and attached: retiring, no longer handed out", rs["huge"])
    ok("Region 'huge', adopted from the fd store after a restart, is no longer configured" in log,
       "the journal names huge")
    with open(d.attached, "w") as f:
        f.write("0")
    os.kill(d.proc.pid, signal.SIGHUP)
    ok(wait_until(lambda: "huge" not in regions(d.sock) and regions(d.sock)["gamma"]["state"] == "active"),
       "once nothing has them attached, huge is destroyed and gamma replaced", regions(d.sock))
    store.drain(0.3)
    inodes = stored_inodes(store)
    ok("huge" not in inodes and inodes.get("gamma") == regions(d.sock)["gamma"]["inode"] != before["gamma"]
       and regions(d.sock)["gamma"]["size"] == 8 << 20,
       "the store follows: huge is out of it, gamma's entry is the new region", inodes)

    # Removed and unattached while down: destroyed at the start.
    d.stop()
    d.write_config("main.conf", CONFIG.format(nobody=NOBODY)
                   .replace("Name=gamma\nSize=6M", "Name=gamma\nSize=8M")
                   .replace("[Region]\nName=huge\nSize=4M\nBacking=hugetlbfs\n", "")
                   .replace("[Region]\nName=beta\nSize=2M\nBacking=memfd\n", "")
                   .replace("Region=beta", "Region=alpha"))
    d.start(binary, ["--timeout", "30"])
    store.drain(0.3)
    ok("beta" not in regions(d.sock) and "beta" not in stored_inodes(store)
       and "Region 'beta' destroyed: it was removed from the configuration" in d.log_text(),
       "a region removed while the daemon was down, and unattached, is destroyed at the start",
       store.names())

    # A configuration with errors at a restart: the adopted regions are kept.
    d.stop()
    d.write_config("zz-broken.conf", "[Region]\nName=broken\nSize=12Q\n")
    d.start(binary, ["--timeout", "30"])
    store.drain(0.3)
    reply, fd = get_fd(d.sock, "alpha", "ro")
    ok(d.alive() and set(regions(d.sock)) == {"alpha", "gamma"} and reply.get("errno") == "EACCES"
       and "Configuration errors" in (store.status() or ""),
       "a broken configuration at a restart: the regions are kept, nothing is handed out",
       (reply, store.status()))
    ok(set(stored_inodes(store)) == {"alpha", "gamma"}, "and they stay in the store", store.names())
    os.unlink(os.path.join(d.conf, "zz-broken.conf"))
    out = subprocess.run([ctl, "-s", d.sock, "reload"], capture_output=True, text=True)
    reply, fd = get_fd(d.sock, "alpha", "ro")
    ok(out.returncode == 0 and fd is not None, "a reload with the error fixed serves them again",
       out.stdout + out.stderr)
    if fd is not None:
        os.close(fd)


def test_destroy(d, store, ctl):
    """mshare-ctl destroy: the explicit end of a region, out of the store."""
    before = region_inodes(d.sock)
    r = as_user(NOBODY, lambda: call(d.sock, {"version": 1, "op": "destroy", "region": "alpha"})[0])
    ok(r.get("errno") == "EPERM", "destroy by a non-root peer: EPERM", r)
    out = subprocess.run([ctl, "-s", d.sock, "destroy", "nosuch"], capture_output=True, text=True)
    ok(out.returncode == 1 and "ENOENT" in out.stderr, "destroy of an unknown region: ENOENT", out.stderr)
    with open(d.attached, "w") as f:
        f.write("3")
    out = subprocess.run([ctl, "-s", d.sock, "destroy", "alpha"], capture_output=True, text=True)
    ok(out.returncode == 1 and "EBUSY" in out.stderr and "attached by 3 processes" in out.stderr
       and "--force" in out.stderr, "destroy of an attached region: EBUSY, naming --force", out.stderr)
    ok(region_inodes(d.sock)["alpha"] == before["alpha"], "and alpha is untouched")
    out = subprocess.run([ctl, "-s", d.sock, "destroy", "--force", "alpha"], capture_output=True, text=True)
    after = region_inodes(d.sock)
    store.drain(0.3)
    ok(out.returncode == 0 and after["alpha"] != before["alpha"] and f"inode {before['alpha']}" in out.stdout
       and "created anew" in out.stdout, "destroy --force: alpha is destroyed and created anew (new inode)",
       out.stdout + out.stderr)
    ok(stored_inodes(store).get("alpha") == after["alpha"] and len([n for n in store.names() if n == "store-region-alpha"]) == 1,
       "the store holds the new alpha only", store.names())
    reply, rw = get_fd(d.sock, "alpha", "rw")
    ok(rw is not None and os.pread(rw, len(PATTERN), 0) == bytes(len(PATTERN)), "the new alpha is empty")
    if rw is not None:
        os.close(rw)
    with open(d.attached, "w") as f:
        f.write("0")
    d.write_config("main.conf", CONFIG.format(nobody=NOBODY)
                   .replace("Name=gamma\nSize=6M", "Name=gamma\nSize=8M")
                   .replace("[Region]\nName=huge\nSize=4M\nBacking=hugetlbfs\n", "")
                   .replace("[Region]\nName=beta\nSize=2M\nBacking=memfd\n", "")
                   .replace("Region=beta", "Region=alpha")
                   .replace("[Region]\nName=gamma\nSize=8M\nPopulate=yes\n", ""))
    with open(d.attached, "w") as f:
        f.write("1")
    subprocess.run([ctl, "-s", d.sock, "reload"], capture_output=True)
    with open(d.attached, "w") as f:
        f.write("0")
    ok(regions(d.sock)["gamma"]["state"] == "retiring", "gamma removed from the configuration: retiring")
    out = subprocess.run([ctl, "-s", d.sock, "--json", "destroy", "gamma"], capture_output=True, text=True)
    store.drain(0.3)
    ok(out.returncode == 0 and "no longer configured" in json.loads(out.stdout).get("message", "")
       and "gamma" not in regions(d.sock) and "gamma" not in stored_inodes(store),
       "destroy of a retiring region: gone, not created again, out of the store", out.stdout + out.stderr)
    d.write_config("main.conf", CONFIG.format(nobody=NOBODY))
    subprocess.run([ctl, "-s", d.sock, "reload"], capture_output=True)


def test_crashes(binary, tmp, cg):
    """A crash at each step that must leave something a restart can adopt:
    right after a region's owner file was stored (before the state names
    it), in the middle of populating, right after a registration's
    descriptors were stored (before the state), and after the state but
    before the reply."""
    store = FdStore(tmp, "crash-notify")
    d = Daemon(binary, tmp, "crash", ["--timeout", "30"], store=store,
               env={"FAKE_MSHARE_CRASH": "region-stored"}, wait=False)
    d.proc.wait(10)
    store.drain(0.3)
    alpha = stored_inodes(store).get("alpha")
    ok(d.proc.returncode == -signal.SIGKILL and alpha and store.state() is None,
       "killed right after storing alpha's owner file: the store has it, no state", store.names())
    d.start(binary, ["--timeout", "30"])
    store.drain(0.3)
    ok("Region 'alpha' adopted from the fd store by its name" in d.log_text()
       and region_inodes(d.sock)["alpha"] == alpha and stored_inodes(store)["alpha"] == alpha,
       "the next start adopts that descriptor by its name: alpha is configured with its size", store.names())
    ok(len([n for n in store.names() if n == "store-region-alpha"]) == 1, "one alpha in the store")
    d.stop()
    store.stop()

    d.start(binary, ["--timeout", "30"], env={"FAKE_MSHARE_CRASH": "populate"}, wait=False)
    d.proc.wait(10)
    store.drain(0.3)
    st = store.state() or {}
    gamma = {r["config"]["name"]: r for r in st.get("regions", [])}.get("gamma", {})
    ok(d.proc.returncode == -signal.SIGKILL and gamma.get("populated") is False
       and gamma.get("inode") == stored_inodes(store).get("gamma"),
       "killed while populating gamma: the state has gamma, not populated", st)
    d.start(binary, ["--timeout", "30"])
    store.drain(0.3)
    gamma2 = {r["config"]["name"]: r for r in (store.state() or {}).get("regions", [])}.get("gamma", {})
    ok("Region 'gamma': populating it was interrupted" in d.log_text() and "Region 'gamma' populated" in d.log_text()
       and region_inodes(d.sock)["gamma"] == gamma["inode"] and gamma2.get("populated") is True,
       "the next start adopts gamma and finishes populating it", gamma2)

    sleeper, pidfd, ls, path = start_container(cg, tmp, "crash1", 120)
    d.stop()
    d.start(binary, ["--timeout", "30"], env={"FAKE_MSHARE_CRASH": "register-stored"})
    reply, sk = register(d, "c1", [("beta", "rw")], ls, pidfd)
    sk.close()
    d.proc.wait(10)
    store.drain(0.3)
    ok(reply is None and d.proc.returncode == -signal.SIGKILL and store_kinds(store).get("channel") == 1
       and not (store.state() or {}).get("containers"),
       "killed during a registration, after storing its descriptors: no reply, no state of it",
       (reply, store.names()))
    d.start(binary, ["--timeout", "30"])
    store.drain(0.3)
    ok(call(d.sock, {"version": 1, "op": "containers"})[0]["containers"] == []
       and store_kinds(store).get("channel") == 1 and store_kinds(store).get("pidfd") == 1
       and "but no saved state names its registration" in d.log_text(),
       "the next start holds them, unserved, while the container lives: no state says what it registered",
       store.names())
    ok(not answered(path), "nothing is served on its channel")
    ls.close()
    os.close(pidfd)
    sleeper.kill()
    sleeper.wait()
    ok(wait_until(lambda: store.drain() or not {"channel", "pidfd"} & set(store_kinds(store)))
       and "held without a registration: its process exited" in d.log_text(),
       "once its process exits, they leave the store", store.names())

    sleeper = cg.popen("crash1", ["sleep", "120"])
    pidfd = os.pidfd_open(sleeper.pid)
    ls, _ = channel_socket(tmp, "crash1b.sock")
    d.stop()
    d.start(binary, ["--timeout", "30"], env={"FAKE_MSHARE_CRASH": "register-saved"})
    reply, sk = register(d, "c1", [("beta", "rw")], ls, pidfd)
    sk.close()
    d.proc.wait(10)
    store.drain(0.3)
    ok(reply is None and [c["id"] for c in (store.state() or {}).get("containers", [])] == ["c1"],
       "killed after saving a registration, before the reply: the state has it", reply)
    d.start(binary, ["--timeout", "30"])
    listed = call(d.sock, {"version": 1, "op": "containers"})[0]["containers"]
    ok([c["id"] for c in listed] == ["c1"], "the next start serves it (the hook failed the container, whose "
       "exit ends it)", listed)
    sleeper.kill()
    sleeper.wait()
    ok(wait_until(lambda: call(d.sock, {"version": 1, "op": "containers"})[0]["containers"] == []),
       "and the container's exit ends it")
    os.close(pidfd)
    ls.close()
    d.stop()
    store.close()


def test_store_hygiene(binary, tmp):
    """What else may be in the store: stale and broken states, descriptors
    the state does not name, kinds of a newer version, the socket passed by
    name among them."""
    store = FdStore(tmp, "hygiene-notify")
    d = Daemon(binary, tmp, "hygiene", ["--timeout", "30"], store=store)
    d.stop()
    gen = (store.state() or {}).get("generation", 0)
    junk = os.memfd_create("junk", os.MFD_CLOEXEC)
    os.write(junk, b'{"version":1,"generation":99}')
    store.add("store-state-99", junk)
    old = os.memfd_create("old", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.write(old, json.dumps({"version": 1, "generation": 1, "next_serial": 0, "regions": [],
                              "containers": []}).encode())
    fcntl.fcntl(old, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK)
    store.add("store-state-1", old)
    store.add("store-region-ghost", os.memfd_create("ghost", os.MFD_CLOEXEC))
    store.add("store-lease-1", os.memfd_create("lease", os.MFD_CLOEXEC))
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ls.bind(os.path.join(tmp, "hygiene-passed.sock"))
    ls.listen(16)
    d.start(binary, ["--timeout", "30"], listen=(ls, "mshare-owner.socket"))
    store.drain(0.3)
    log = d.log_text()
    reply, _ = call(os.path.join(tmp, "hygiene-passed.sock"), {"version": 1, "op": "hello"})
    ok(reply.get("status") == "ok", "the socket passed by name among the store's entries is served", reply)
    ok("Ignoring store-state-99 in the fd store" in log and f"Restoring from store-state-{gen}" in log,
       f"an unsealed state is ignored; the newest valid one (generation {gen}) is used",
       [line for line in log.splitlines() if "state" in line][-4:])
    names = store.names()
    ok("store-state-99" not in names and "store-state-1" not in names
       and [n for n in names if n.startswith("store-state-")] == ["store-state-100", f"store-state-{gen}"],
       "stale states leave the store; the next one is generation 100, the one restored from stays", names)
    ok("store-region-ghost" not in names and "Region 'ghost': the descriptor in the fd store" in log,
       "a region descriptor that is no region's owner file is dropped", names)
    ok("store-lease-1" in names and "Leaving store-lease-1 in the fd store alone" in log,
       "an entry of a kind this daemon does not know is left alone", names)
    d.stop()
    ls2 = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ls2.bind(os.path.join(tmp, "hygiene-other.sock"))
    ls2.listen(1)
    store.add("other.socket", os.dup(ls2.fileno()))
    names = store.names()
    d.start(binary, ["--timeout", "30"], listen=(ls, "mshare-owner.socket"), wait=False)
    up = came_up(d)
    store.drain(0.3)
    ok(up and "Two sockets were passed" in d.log_text() and (store.status() or "").startswith("Degraded")
       and store.names() == names, "two sockets passed: the daemon runs degraded, and leaves the store alone",
       d.log_text()[-500:])
    rc = d.stop()
    ok(rc == 0 and store.names() == names, "and ends on SIGTERM without touching it", rc)
    store.remove("other.socket")
    ls2.close()
    d.start(binary, ["--timeout", "30"], listen=(ls, "mshare-owner.socket"))
    ok(set(region_inodes(os.path.join(tmp, "hygiene-passed.sock"))) == {"alpha", "beta", "gamma", "huge"},
       "and then starts with its regions")
    d.stop()
    ls.close()
    store.close()


def sealed_state(obj):
    """A state memfd as the daemon stores one: sealed against any change."""
    fd = os.memfd_create("state", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.write(fd, json.dumps(obj).encode())
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK)
    return fd


def state_gens(store):
    return sorted(int(n.rsplit("-", 1)[1]) for n in store.names() if n.startswith("store-state-"))


def write_alpha(d, name="alpha"):
    _, rw = get_fd(d.sock, name, "rw")
    if rw is None:
        return False
    os.pwrite(rw, PATTERN, 0)
    os.close(rw)
    return True


def alpha_holds_pattern(d, name="alpha"):
    _, fd = get_fd(d.sock, name, "ro")
    if fd is None:
        return False
    try:
        return os.pread(fd, len(PATTERN), 0) == PATTERN
    finally:
        os.close(fd)


def came_up(d):
    """Whether a daemon started with wait=False says it is ready."""
    try:
        d.wait_ready()
        return True
    except RuntimeError:
        return False


def test_state_generations(binary, tmp, ctl):
    """systemd may drop a new state without a word (its store full): the
    one before stays in the store until a newer one is saved, and the next
    start uses it; a region no state names is adopted by its name."""
    store = FdStore(tmp, "gen-notify")
    d = Daemon(binary, tmp, "gen", ["--timeout", "30"], store=store)
    store.drain(0.2)
    gens = state_gens(store)
    newest = gens[-1] if gens else None
    ok(len(gens) == 2 and newest == (store.state() or {}).get("generation"),
       "the store holds the newest state and the one before it", store.names())
    before = region_inodes(d.sock)
    ok(write_alpha(d), "alpha written")
    store.refuse = lambda name: name.startswith("store-state-")
    d.write_config("main.conf", CONFIG.format(nobody=NOBODY) + "\n[Region]\nName=delta\nSize=2M\n")
    out = subprocess.run([ctl, "-s", d.sock, "reload"], capture_output=True, text=True)
    store.drain(0.3)
    delta = stored_inodes(store).get("delta")
    ok(out.returncode == 0 and delta and state_gens(store) == [newest],
       "a reload stores delta; systemd drops the state that names it, the one before stays",
       (out.stdout + out.stderr, store.names()))
    store.refuse = None
    d.kill()
    mark = len(d.log_text())
    d.start(binary, ["--timeout", "30"])
    store.drain(0.3)
    after = region_inodes(d.sock)
    log = d.log_text()[mark:]
    ok(f"Restoring from store-state-{newest}" in log, "the next start restores from it",
       [line for line in log.splitlines() if "state" in line][-4:])
    ok(all(after.get(n) == i for n, i in before.items()) and alpha_holds_pattern(d),
       "every region it names is adopted: the same ones, with their contents", (before, after))
    ok(after.get("delta") == delta and "Region 'delta' adopted from the fd store by its name" in log,
       "delta, which it does not name, is adopted by its name", (delta, after))
    ok(len(state_gens(store)) == 2 and newest in state_gens(store),
       "the state it restored from stays next to the one it saved", store.names())
    d.stop()
    store.close()


def test_unsaved_regions(binary, tmp, ctl):
    """Owner files that no saved state names (the state lost): adopted by
    name if configured with their size, without populating them again;
    else the reload rules (a changed region is replaced, a removed one
    retired, once nothing has them attached)."""
    store = FdStore(tmp, "unsaved-notify")
    d = Daemon(binary, tmp, "unsaved", ["--timeout", "30"], store=store)
    before = region_inodes(d.sock)
    ok(write_alpha(d) and write_alpha(d, "gamma"), "alpha and gamma written")
    d.stop()
    for n in [n for n in store.names() if n.startswith("store-state-")]:
        store.remove(n)
    d.write_config("main.conf", CONFIG.format(nobody=NOBODY)
                   .replace("Name=beta\nSize=2M", "Name=beta\nSize=4M")
                   .replace("[Region]\nName=huge\nSize=4M\nBacking=hugetlbfs\n", ""))
    with open(d.attached, "w") as f:
        f.write("2")
    mark = len(d.log_text())
    d.start(binary, ["--timeout", "30"])
    store.drain(0.3)
    rs = regions(d.sock)
    log = d.log_text()[mark:]
    ok(all(rs[n]["inode"] == before[n] and rs[n]["state"] == "active" for n in ("alpha", "gamma"))
       and alpha_holds_pattern(d), "no state: alpha and gamma, configured with their size, are adopted "
       "by name, with their contents", (before, rs))
    ok("Region 'alpha' adopted from the fd store by its name" in log and "destroying it" not in log
       and "Region 'alpha' populated" not in log, "the journal says so",
       [line for line in log.splitlines() if "by its name" in line])
    ok("it is populated again (read faults only)" in log and "Region 'gamma' populated" in log
       and alpha_holds_pattern(d, "gamma"), "gamma (Populate=yes) is populated again, its contents kept",
       [line for line in log.splitlines() if "gamma" in line])
    beta, huge = rs.get("beta", {}), rs.get("huge", {})
    ok(beta.get("state") == "changed" and beta.get("inode") == before["beta"]
       and beta.get("size") == 2 << 20 and "(Size= 2097152 -> 4194304)" in log,
       "beta, resized meanwhile and attached: kept as it is, changed", beta)
    ok(huge.get("state") == "retiring" and huge.get("inode") == before["huge"],
       "huge, no longer configured and attached: retiring", huge)
    ok(stored_inodes(store) == before, "all four stay in the store", store.names())
    with open(d.attached, "w") as f:
        f.write("0")
    os.kill(d.proc.pid, signal.SIGHUP)
    ok(wait_until(lambda: "huge" not in regions(d.sock) and regions(d.sock)["beta"]["state"] == "active")
       and regions(d.sock)["beta"]["size"] == 4 << 20,
       "once unattached, huge is destroyed and beta replaced", regions(d.sock))
    store.drain(0.3)
    inodes = stored_inodes(store)
    ok("huge" not in inodes and inodes.get("beta") not in (None, before["beta"])
       and inodes.get("alpha") == before["alpha"], "the store follows", inodes)
    d.stop()
    store.close()


def test_fdstore_max(binary, tmp, ctl, cg):
    """--fdstore-max: no region or container past what the store keeps,
    counting three states (the two kept, and a third while a new one goes
    in before the oldest leaves). The store enforces the same limit, as
    systemd does, and must never have to refuse."""
    store = FdStore(tmp, "max-notify", max=8)
    d = Daemon(binary, tmp, "max", ["--timeout", "30", "--fdstore-max", "8"], store=store, wait=False)
    ok(came_up(d), "--fdstore-max=8: 4 regions and 3 states fit", d.log_text()[-500:])
    if not d.alive():
        store.close()
        return
    conf = CONFIG.format(nobody=NOBODY) + "\n[Region]\nName=delta\nSize=2M\n"
    d.write_config("main.conf", conf)
    out = subprocess.run([ctl, "-s", d.sock, "reload"], capture_output=True, text=True)
    ok(out.returncode == 0 and regions(d.sock)["delta"]["state"] == "active", "a fifth region fits",
       out.stdout + out.stderr)
    d.write_config("main.conf", conf + "\n[Region]\nName=epsilon\nSize=2M\n")
    out = subprocess.run([ctl, "-s", d.sock, "reload"], capture_output=True, text=True)
    store.drain(0.3)
    reply, fd = get_fd(d.sock, "epsilon", "rw")
    ok(regions(d.sock)["epsilon"]["state"] == "failed" and "--fdstore-max" in out.stdout
       and reply.get("errno") == "ENXIO" and "epsilon" not in stored_inodes(store),
       "a sixth is not created; the reload's reply says why", (out.stdout, reply))
    ok("Region 'epsilon' (" in d.log_text() and "not created: the service manager's fd store" in d.log_text(),
       "and the journal")
    sleeper = subprocess.Popen(["sleep", "60"])
    pidfd = os.pidfd_open(sleeper.pid)
    ls, _ = channel_socket(tmp, "max-channel.sock")
    reply, sk = register(d, "m1", [("beta", "rw")], ls, pidfd)
    sk.close()
    ok(reply and reply.get("errno") == "ENOSPC" and "--fdstore-max" in reply.get("message", ""),
       "a container is not registered past it, and told why", reply)
    ls.close()
    os.close(pidfd)
    sleeper.kill()
    sleeper.wait()
    d.stop()
    ok(store.refused == [], "the store never had to refuse an entry", store.refused)
    store.close()

    # A registration that would fill the store to the limit, or one more:
    # what the daemon confirms must survive a crash.
    cg.make("max1")
    sleeper = cg.popen("max1", ["sleep", "120"])
    pidfd = os.pidfd_open(sleeper.pid)
    for limit, fits in ((8, False), (9, True)):
        store = FdStore(tmp, f"max{limit}-notify", max=limit)
        d = Daemon(binary, tmp, f"max{limit}", ["--timeout", "30", "--fdstore-max", str(limit)], store=store)
        ls, _ = channel_socket(tmp, f"max{limit}-channel.sock")
        reply, sk = register(d, "m2", [("beta", "rw")], ls, pidfd)
        sk.close()
        store.drain(0.3)
        ok(reply and reply.get("status" if fits else "errno") == ("ok" if fits else "ENOSPC")
           and store.refused == [], f"--fdstore-max={limit}, 4 regions: a registration "
           + ("fills the store" if fits else "would need one entry more: ENOSPC") + "; the store refuses nothing",
           (reply, store.refused))
        d.kill()
        d.start(binary, ["--timeout", "30", "--fdstore-max", str(limit)])
        listed = call(d.sock, {"version": 1, "op": "containers"})[0].get("containers")
        ok([c["id"] for c in listed] == (["m2"] if fits else []),
           "after a crash the next start serves " + ("it again" if fits else "no container"), listed)
        d.stop()
        store.close()
        ls.close()
    os.close(pidfd)
    sleeper.kill()
    sleeper.wait()


def test_lost_states(binary, tmp, cg):
    """The two generations protect against one save that systemd refuses;
    after two in a row no state is left, and what no state names is the
    second line: regions adopted by name, channels of containers still
    running held (their registration was in the lost states only), not
    served, until their process exits."""
    store = FdStore(tmp, "lost-notify")
    d = Daemon(binary, tmp, "lost", ["--timeout", "30"], store=store)
    sleeper, pidfd, ls, path = start_container(cg, tmp, "lost1", 120)
    reply, sk = register(d, "l1", [("beta", "rw")], ls, pidfd)
    sk.close()
    ok(reply and reply.get("status") == "ok" and answered(path), "a container registered, its channel served",
       reply)
    store.refuse = lambda name: name.startswith("store-state-")
    d.write_config("main.conf", CONFIG.format(nobody=NOBODY)
                   + "\n[Region]\nName=delta\nSize=2M\n\n[Region]\nName=epsilon\nSize=2M\n")
    os.kill(d.proc.pid, signal.SIGHUP)
    ok(wait_until(lambda: {"delta", "epsilon"} <= set(regions(d.sock))) and store.drain(0.3) is None
       and state_gens(store) == [], "two regions stored, and both saves naming them refused: no state is left",
       store.names())
    store.refuse = None
    before = region_inodes(d.sock)
    d.kill()
    mark = len(d.log_text())
    d.start(binary, ["--timeout", "30"])
    store.drain(0.3)
    log = d.log_text()[mark:]
    ok(region_inodes(d.sock) == before, "the next start adopts every region by its name", (before, log[-800:]))
    ok(call(d.sock, {"version": 1, "op": "containers"})[0]["containers"] == []
       and store_kinds(store).get("channel") == 1 and store_kinds(store).get("pidfd") == 1
       and "but no saved state names its registration" in log,
       "the container's channel, still running, is held in the store, and the journal says why", store.names())
    ok(not answered(path), "nothing is served on it")
    ls.close()
    os.close(pidfd)
    sleeper.kill()
    sleeper.wait()
    ok(wait_until(lambda: store.drain() or not {"channel", "pidfd"} & set(store_kinds(store))),
       "once the container's process exits, its channel leaves the store", store.names())
    d.stop()
    store.close()


def test_early_signals(binary, tmp):
    """A SIGHUP (systemctl reload) racing the start, right after the
    daemon received the store's descriptors, must not kill it: systemd
    would take that for a clean exit and empty the store."""
    store = FdStore(tmp, "early-notify")
    d = Daemon(binary, tmp, "early", ["--timeout", "30"], store=store)
    before = region_inodes(d.sock)
    d.stop()
    mark = len(d.log_text())
    d.start(binary, ["--timeout", "30"], env={"FAKE_MSHARE_SIGHUP": "received"}, wait=False)
    up = came_up(d)
    log = d.log_text()[mark:]
    ok(up and d.alive(), "a SIGHUP right after receiving the store's descriptors does not kill the daemon",
       (d.proc.returncode, log[-500:]))
    if up:
        ok(region_inodes(d.sock) == before and wait_until(lambda: "Reloading the configuration (SIGHUP" in d.log_text()),
           "it adopts every region, then reloads")
    d.stop()
    store.close()


def test_usage_error(binary, tmp):
    """A bad option (from a drop-in, say) when the store passed its
    entries: exiting would make systemd start the daemon into the same
    error until StartLimitBurst= empties the store. It runs degraded."""
    out = subprocess.run([binary, "--bogus-option"], capture_output=True, text=True)
    ok(out.returncode == 2 and "--bogus-option" in out.stderr, "a bad option, nothing passed: exit status 2",
       (out.returncode, out.stderr))
    store = FdStore(tmp, "usage-notify")
    d = Daemon(binary, tmp, "usage", ["--timeout", "30"], store=store)
    d.stop()
    names = store.names()
    mark = len(d.log_text())
    d.start(binary, ["--timeout", "30", "--bogus-option"], wait=False)
    up = came_up(d)
    store.drain(0.3)
    status, log = store.status() or "", d.log_text()[mark:]
    ok(up and d.alive() and status.startswith("Degraded") and "--bogus-option" in status
       and "invalid command line: unknown option, or one without its argument: --bogus-option" in log,
       "with the store's entries passed: degraded, naming the bad option", (status, log[-500:]))
    ok(store.names() == names, "the store is left alone", store.names())
    ok(d.stop() == 0 and store.names() == names, "SIGTERM ends it with status 0")
    store.close()


def test_hold_enomem(binary, tmp):
    """Memory running out while a region from the store is recorded as
    held: the daemon must not close its owner file (the first load would
    create a second region of its name, and the next start destroy the
    first): it runs degraded, holding everything."""
    store = FdStore(tmp, "enomem-notify")
    d = Daemon(binary, tmp, "enomem", ["--timeout", "30"], store=store)
    before = region_inodes(d.sock)
    ok(write_alpha(d), "alpha written")
    d.stop()
    names = store.names()
    d.start(binary, ["--timeout", "30"], env={"FAKE_MSHARE_ENOMEM": "hold"}, wait=False)
    up = came_up(d)
    store.drain(0.3)
    ok(up and (store.status() or "").startswith("Degraded") and store.names() == names,
       "no memory to hold a region from the store: degraded, the store as it was", (store.status(), store.names()))
    ok(d.stop() == 0, "SIGTERM ends it")
    d.start(binary, ["--timeout", "30"])
    ok(region_inodes(d.sock) == before and alpha_holds_pattern(d), "the next start adopts every region as it was")
    d.stop()
    store.close()


def test_degraded(binary, tmp):
    """A daemon that cannot start but was passed the store's entries does
    not exit (systemd would empty the store): it holds them, degraded,
    serves nothing, ignores SIGHUP, and exits 0 on SIGTERM."""
    store = FdStore(tmp, "degraded-notify")
    d = Daemon(binary, tmp, "degraded", ["--timeout", "30"], store=store)
    before = region_inodes(d.sock)
    d.stop()
    gen = max(state_gens(store))
    store.add(f"store-state-{gen + 5}", sealed_state({"version": 2, "generation": gen + 5}))
    names = store.names()
    d.start(binary, ["--timeout", "30"], wait=False)
    up = came_up(d)
    store.drain(0.3)
    log = d.log_text()
    ok(up and d.alive() and (store.status() or "").startswith("Degraded"),
       "a state of a newer version: the daemon stays up, degraded, and says so in its status",
       (store.status(), log[-600:]))
    ok("written by a newer mshare-owner" in log and "running degraded" in log and store.names() == names,
       "the journal says what is wrong; the store is left alone", store.names())
    ok(not answered(d.sock), "nothing is served")
    os.kill(d.proc.pid, signal.SIGHUP)
    ok(wait_until(lambda: "Ignoring SIGHUP" in d.log_text()) and d.alive() and store.names() == names,
       "SIGHUP is ignored", d.log_text()[-300:])
    rc = d.stop()
    ok(rc == 0 and store.names() == names, "SIGTERM ends it with status 0; the store still holds everything", rc)
    store.remove(f"store-state-{gen + 5}")
    d.start(binary, ["--timeout", "30"])
    ok(region_inodes(d.sock) == before, "without that state, the next start adopts every region")
    d.stop()
    store.close()


def saved_region(store, name):
    """Region name of the newest state in the store, or None."""
    return {r["config"]["name"]: r for r in (store.state() or {}).get("regions", [])}.get(name)


def test_adopt_retry(binary, tmp, ctl):
    """A region that cannot be adopted for now (here: its sharers'
    descriptors cannot be opened) is held, stays in the store and in the
    saved state (across restarts too), and is adopted on a later try: the
    periodic one (every 10 seconds; the test waits for it) or a reload."""
    store = FdStore(tmp, "retry-notify")
    d = Daemon(binary, tmp, "retry", ["--timeout", "30"], store=store)
    before = region_inodes(d.sock)
    ok(write_alpha(d), "alpha written")
    d.stop()
    alpha = next(fd for n, fd in store.entries() if n == "store-region-alpha")
    mode = os.fstat(alpha).st_mode & 0o7777
    os.fchmod(alpha, 0)
    mark = len(d.log_text())
    d.start(binary, ["--timeout", "30"])
    store.drain(0.3)
    log = d.log_text()[mark:]
    ok("alpha" not in regions(d.sock) and stored_inodes(store).get("alpha") == before["alpha"],
       "alpha cannot be adopted now (EACCES): it is held, and stays in the store", store.names())
    ok("Region 'alpha': cannot adopt it from the fd store now" in log,
       "the journal says so", [line for line in log.splitlines() if "alpha" in line])
    ok((saved_region(store, "alpha") or {}).get("inode") == before["alpha"],
       "the saved state still names it", store.state())
    d.stop()
    mark = len(d.log_text())
    d.start(binary, ["--timeout", "30"])
    store.drain(0.3)
    log = d.log_text()[mark:]
    ok("alpha" not in regions(d.sock) and stored_inodes(store).get("alpha") == before["alpha"]
       and (saved_region(store, "alpha") or {}).get("inode") == before["alpha"]
       and "by its name" not in log, "a restart finds it held as it was: in the store and in the state",
       (store.names(), [line for line in log.splitlines() if "alpha" in line]))
    os.fchmod(alpha, mode)
    ok(wait_until(lambda: "alpha" in regions(d.sock), timeout=15)
       and regions(d.sock)["alpha"]["inode"] == before["alpha"] and alpha_holds_pattern(d),
       "the periodic retry adopts it, without a reload: the same region, with its contents")
    d.stop()
    os.fchmod(alpha, 0)
    d.start(binary, ["--timeout", "30"])
    ok("alpha" not in regions(d.sock), "held again after another restart")
    os.fchmod(alpha, mode)
    out = subprocess.run([ctl, "-s", d.sock, "reload"], capture_output=True, text=True)
    ok(out.returncode == 0 and regions(d.sock).get("alpha", {}).get("inode") == before["alpha"]
       and alpha_holds_pattern(d), "a reload adopts it too", out.stdout + out.stderr)
    d.stop()
    store.close()


def test_store_safety(binary, tmp, ctl, cg):
    test_state_generations(binary, tmp, ctl)
    test_unsaved_regions(binary, tmp, ctl)
    test_fdstore_max(binary, tmp, ctl, cg)
    test_lost_states(binary, tmp, cg)
    test_early_signals(binary, tmp)
    test_usage_error(binary, tmp)
    test_hold_enomem(binary, tmp)
    test_degraded(binary, tmp)
    test_adopt_retry(binary, tmp, ctl)


def test_restarts(binary, tmp, ctl, cg):
    d, store = test_restart_keeps(binary, tmp, ctl, cg)
    try:
        test_restart_config(binary, d, store, ctl)
        test_destroy(d, store, ctl)
    finally:
        d.stop()
    ok(set(n.split("-")[1] for n in store.names()) <= {"region", "state"},
       "at the end the store holds regions and a state", store.names())
    store.stop()  # systemctl stop
    store.close()
    test_crashes(binary, tmp, cg)
    test_store_hygiene(binary, tmp)
    test_store_safety(binary, tmp, ctl, cg)


def main():
    binary, ctl, stress = sys.argv[1], sys.argv[2], sys.argv[3]
    cg = Cgroups()
    with tempfile.TemporaryDirectory(prefix="mshare-test-") as tmp:
        os.chmod(tmp, 0o755)  # other users connect to sockets in here
        d = Daemon(binary, tmp, "owner", ["--timeout", "1"])
        try:
            test_basics(d, ctl)
            test_get(d, ctl)
            test_malformed(d)
            test_many(binary, tmp, 2000)
            test_busy(d)
            test_stress_tool(d, stress)
            names = set(regions(d.sock))
            ok(names == {"alpha", "beta", "gamma", "huge"}, "every region intact after the abuse", names)
            test_reload(d, ctl)
            test_containers(d, ctl, cg)
            test_log_escape(d)
        finally:
            rc = d.stop()
            log = open(d.log).read()
        ok(rc == 0 and not os.path.exists(d.sock), "SIGTERM: clean exit, socket removed", rc)
        ok("Destroying" in log, "the regions are destroyed at exit")
        test_cap(binary, tmp)
        test_limits(binary, tmp, ctl, cg)
        test_fd_budget(binary, tmp)
        test_restarts(binary, tmp, ctl, cg)
    cg.cleanup()
    return finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A stand-in for mshare-owner's main socket, for tests/test-hook.sh.

fake-owner.py SOCKET LOG MODE [ERRNO MESSAGE]

Listens on SOCKET (SOCK_SEQPACKET) and serves connections one after the
other. MODE:
  silent   accepts nothing: connections wait in the backlog
  ok       answers every request with ok
  error    answers hello with ok and every other request with the error
           ERRNO (a name) and MESSAGE
Each request goes to LOG as one JSON line: the request, the number of
descriptors that came with it and, for two, what they are: whether the first
is a listening unix SOCK_SEQPACKET socket and whether the second is a pidfd.
In mode ok, the channel of a register request is kept; a client connecting
to it is accepted and logged as {"channel": "accepted"}.
"""
import json
import os
import socket
import sys
import threading


def describe(fds):
    info = {"n_fds": len(fds)}
    if len(fds) == 2:
        s = socket.socket(fileno=os.dup(fds[0]))
        try:
            info["fd0_listening"] = bool(s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
            info["fd0_seqpacket"] = s.type == socket.SOCK_SEQPACKET and s.family == socket.AF_UNIX
        finally:
            s.close()
        info["fd1"] = os.readlink(f"/proc/self/fd/{fds[1]}")
    return info


def log(path, entry):
    with open(path, "a") as f:
        f.write(json.dumps(entry) + "\n")


def serve_channel(fd, logpath):
    s = socket.socket(fileno=fd)
    s.settimeout(30)
    try:
        c, _ = s.accept()
        log(logpath, {"channel": "accepted"})
        c.close()
    except OSError as e:
        log(logpath, {"channel": str(e)})


def main():
    path, logpath, mode = sys.argv[1:4]
    errno_name, message = (sys.argv[4], sys.argv[5]) if mode == "error" else (None, None)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(16)
    log(logpath, {"listening": path})
    if mode == "silent":
        threading.Event().wait()
    while True:
        conn, _ = srv.accept()
        while True:
            try:
                msg, fds, _, _ = socket.recv_fds(conn, 65536, 8)
            except OSError:
                break
            if not msg:
                break
            req = json.loads(msg)
            entry = {"request": req}
            entry.update(describe(fds))
            log(logpath, entry)
            if req.get("op") == "hello" or mode == "ok":
                reply = {"version": 1, "status": "ok"}
            else:
                reply = {"version": 1, "status": "error", "errno": errno_name, "message": message}
            if mode == "ok" and req.get("op") == "register" and len(fds) == 2:
                threading.Thread(target=serve_channel, args=(fds[0], logpath), daemon=True).start()
                os.close(fds[1])
            else:
                for fd in fds:
                    os.close(fd)
            conn.send(json.dumps(reply).encode())
        conn.close()


if __name__ == "__main__":
    main()

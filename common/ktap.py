# SPDX-License-Identifier: LGPL-2.1-or-later
"""KTAP version 1 output for the Python test producers.

The format and its rules are common/ktap.sh's (the shell producers') and
tap.h's (the C ones): a `KTAP version 1` header with the first line,
`ok N DESC` / `not ok N DESC` a check, `ok N DESC # SKIP WHY` for a check
that cannot run here, `# ` for diagnostics, the plan `1..N` at the end.
A test imports it with its directory on sys.path:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../common"))
    from ktap import ok, skip, diag, finish
"""

import sys

_count = 0
_failed = 0


def _result(status, rest):
    global _count
    if not _count:
        print("KTAP version 1")
    _count += 1
    print(f"{status} {_count} {rest}", flush=True)


def diag(text):
    """Each line of text as a diagnostic."""
    for line in str(text).splitlines():
        print(f"# {line}", flush=True)


def ok(cond, what, detail=None):
    """A check: passes if cond is true; detail is shown when it fails."""
    global _failed
    if not cond:
        _failed += 1
    _result("ok" if cond else "not ok", what)
    if not cond and detail is not None:
        diag(detail)
    return cond


def skip(what, why):
    """A check that cannot run here: counted as skipped, never as passed."""
    _result("ok", f"{what} # SKIP {why}")


def finish():
    """The plan; the exit status: 1 if a check failed or none ran."""
    if not _count:
        print("KTAP version 1")
    print(f"1..{_count}", flush=True)
    return 1 if _failed or not _count else 0

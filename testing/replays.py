"""`python -m engine replay` as the replay tests run it: in this process (``engine``'s
``main`` with its own stdin, stdout and stderr), or, for the test that reads a file, as a
real process, so that the command line itself is covered too."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any
from unittest import mock

from engine.__main__ import main

ROOT = Path(__file__).resolve().parent.parent


def run(text: str, *, file: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The command on ``text`` (its stdin) or on ``file`` (then in a process of its own)."""
    args = [sys.executable, "-m", "engine", "replay", str(file) if file else "-"]
    if file is not None:
        return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=60)
    stdin = io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.object(sys, "stdin", stdin), redirect_stdout(out), redirect_stderr(err):
        code = main(args[3:])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def ok(record: dict[str, Any]) -> dict[str, Any]:
    """The command's output on a well-formed ``record``: exit 0, nothing on stderr."""
    done = run(json.dumps(record))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def malformed(text: str) -> str:
    """The command's one line on stderr for a malformed record: exit 2, nothing on stdout."""
    done = run(text)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.strip()
    return done.stderr

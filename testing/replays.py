"""`python -m engine replay` as the replay tests run it: in this process (``engine``'s
``main`` with its own stdin, stdout and stderr), or, for the test that reads a file, as a
real process, so that the command line itself is covered too."""

from __future__ import annotations

import io
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
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

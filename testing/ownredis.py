"""A redis-server process of a test's own, on a free port, which the test may stop,
freeze and start again (the shared Redis is never touched); the ``own_redis`` fixture of
tests/conftest.py."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry


class OwnRedis:
    """A redis-server process this test starts, stops, freezes and starts again."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        with socket.socket() as probe:  # a free port, so that parallel runs never meet
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
        )
        probe = redis.Redis(port=self.port, socket_timeout=1)
        for _ in range(500):
            try:
                probe.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.01)  # a process starting: nothing to wait on but the port
        probe.close()

    def stop(self) -> None:
        """Shut down, saving the data for the next start."""
        assert self.process is not None
        probe = redis.Redis(port=self.port, socket_timeout=1, retry=Retry(NoBackoff(), 0))
        probe.shutdown(save=True)
        probe.close()
        self.process.wait(timeout=10)

    def freeze(self, frozen: bool) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP if frozen else signal.SIGCONT)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
            self.process.wait(timeout=10)

"""A redis-server process of a test's own (testing/redis_servers.py), which the test may
stop, freeze and start again (the shared Redis is never touched); the ``own_redis``
fixture of tests/conftest.py."""

from __future__ import annotations

from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from testing.redis_servers import HOST, Server, free_ports


class OwnRedis(Server):
    """A server on a free port of the run's that keeps its data over a :meth:`stop`."""

    keeps_data = True

    def __init__(self, directory: Path) -> None:
        (port,) = free_ports(1)
        super().__init__(port, directory, "--port", str(port), "--bind", HOST, "--save", "")

    def database(self, number: int) -> str:
        """The URL of its database ``number`` (of 16): cases of one test that run side by
        side (testing.waits.side_by_side) each keep their keys and streams in one."""
        return f"redis://{HOST}:{self.port}/{number}"

    def stop(self) -> None:
        """Shut down, saving the data for the next start."""
        assert self.process is not None
        # The save may take seconds on a machine busy with the rest of the run.
        probe = redis.Redis(port=self.port, socket_timeout=10, retry=Retry(NoBackoff(), 0))
        probe.shutdown(save=True)
        probe.close()
        self.process.wait(timeout=10)

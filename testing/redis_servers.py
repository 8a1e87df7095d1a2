"""A primary and its replica, two redis-server processes of a test's own (the shared
Redis is never touched), and a way to hold the replica back.

Holding back: the replica logs in to its primary as the ACL user :data:`REPLICA_USER`.
:meth:`Pair.hold_back` disables that user and kills the replica's link, so that the
primary takes writes the replica never gets (it cannot log in again) until
:meth:`Pair.let_go`. Stopping the replica with SIGSTOP would not do: what the primary has
already sent waits in the socket and is read when the replica goes on, and a replica
promoted then would hold writes it should not.

Ports: each server takes a free one of ``REDIS_TEST_PORTS`` (``first-last``, default
7300-7399), so that parallel runs and other people's servers never meet.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import redis

REPLICA_USER = "replica"
REPLICA_PASSWORD = "replica-secret"
# What a replica needs of its primary (PSYNC, REPLCONF, PING), and nothing else.
REPLICA_RIGHTS = ["+psync", "+replconf", "+ping"]
START_WAIT = 10.0  # seconds a server, or the replica's first sync, may take


def available() -> str | None:
    """Why these servers cannot run here (one line), or None."""
    if shutil.which("redis-server") is None:
        return "no redis-server to run"
    return None


def _ports() -> range:
    """The ports of the range this test process may take: a share of it for each
    pytest-xdist worker, so that two workers never pick the same port."""
    first, _, last = os.environ.get("REDIS_TEST_PORTS", "7300-7399").partition("-")
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return range(int(first) + worker, int(last) + 1, max(workers, 1))


def free_port(taken: frozenset[int] = frozenset()) -> int:
    """A port of the range that nothing listens on (tried by binding it)."""
    for port in _ports():
        if port in taken:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port left in REDIS_TEST_PORTS")


@dataclass
class Server:
    """One redis-server process."""

    directory: Path
    port: int
    args: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=5)

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", str(self.directory)]
        self.process = subprocess.Popen(
            [*command, *self.args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        probe = redis.Redis(port=self.port, socket_timeout=1)
        deadline = time.monotonic() + START_WAIT
        while True:
            try:
                probe.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"redis-server on {self.port} did not start") from None
                time.sleep(0.01)  # a process starting: nothing to wait on but its port
        probe.close()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
            self.process.wait(timeout=10)

    def freeze(self, frozen: bool) -> None:
        """SIGSTOP / SIGCONT: the server stops reading (and acknowledging) anything."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP if frozen else signal.SIGCONT)


@dataclass
class Pair:
    """A primary and one replica of it (see the module docstring)."""

    primary: Server
    replica: Server

    def start(self) -> None:
        # A replica's first sync at once (the default waits 5 s for more replicas).
        self.primary.args += ["--repl-diskless-sync-delay", "0"]
        self.primary.start()
        with contextlib.closing(self.primary.client()) as primary:
            primary.acl_setuser(
                REPLICA_USER,
                enabled=True,
                passwords=[f"+{REPLICA_PASSWORD}"],
                commands=REPLICA_RIGHTS,
            )
        self.replica.args += ["--repl-diskless-sync-delay", "0"]  # it serves a sync too
        self.replica.args += ["--replicaof", "127.0.0.1", str(self.primary.port)]
        self.replica.args += ["--masteruser", REPLICA_USER, "--masterauth", REPLICA_PASSWORD]
        self.replica.start()
        self.wait_synced()

    def wait_synced(self) -> None:
        """Until the replica is linked and has everything the primary wrote (up to a
        write of this connection's own: WAIT counts no other's)."""
        deadline = time.monotonic() + START_WAIT
        with contextlib.closing(self.primary.client()) as primary:
            primary.set("testing:synced", 1)
            while primary.wait(1, 100) < 1:
                if time.monotonic() > deadline:
                    raise RuntimeError("the replica did not catch up")

    def hold_back(self) -> None:
        """Writes from now on reach the primary only (see the module docstring)."""
        with contextlib.closing(self.primary.client()) as primary:
            primary.acl_setuser(REPLICA_USER, enabled=False)
            primary.client_kill_filter(user=REPLICA_USER)
            deadline = time.monotonic() + START_WAIT
            while primary.info("replication")["connected_slaves"]:
                if time.monotonic() > deadline:
                    raise RuntimeError("the replica's link did not go")
                time.sleep(0.01)

    def let_go(self) -> None:
        """The replica may log in again; it catches up (:meth:`wait_synced`)."""
        with contextlib.closing(self.primary.client()) as primary:
            primary.acl_setuser(REPLICA_USER, enabled=True)

    def lose_unreplicated(self) -> None:
        """What a failover to the held-back replica leaves, at the primary's own address
        (where the bot's client stays): the primary drops every write the replica never
        got and goes on from the replica's copy, which follows it again. On the way it is
        a replica for a moment (writes to it fail with READONLY)."""
        with (
            contextlib.closing(self.primary.client()) as primary,
            contextlib.closing(self.replica.client()) as replica,
        ):
            replica.replicaof("NO", "ONE")
            primary.replicaof("127.0.0.1", self.replica.port)
            deadline = time.monotonic() + START_WAIT
            while True:
                info = primary.info("replication")
                if info.get("master_link_status") == "up" and not info.get(
                    "master_sync_in_progress"
                ):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("the primary did not take the replica's copy")
                time.sleep(0.01)
            primary.replicaof("NO", "ONE")
            self.let_go()
            replica.replicaof("127.0.0.1", self.primary.port)
        self.wait_synced()

    def promote(self) -> None:
        """The replica becomes a primary of its own (what a failover does)."""
        with contextlib.closing(self.replica.client()) as replica:
            replica.replicaof("NO", "ONE")

    def kill(self) -> None:
        self.replica.kill()
        self.primary.kill()


@contextlib.contextmanager
def pair(directory: Path) -> Iterator[Pair]:
    """A running :class:`Pair` in ``directory``, killed at the end."""
    first = free_port()
    second = free_port(frozenset({first}))
    servers = Pair(Server(directory / "primary", first), Server(directory / "replica", second))
    try:
        servers.start()
        yield servers
    finally:
        servers.kill()


@contextlib.contextmanager
def alone(directory: Path) -> Iterator[Server]:
    """One running redis-server that never had a replica, killed at the end."""
    server = Server(directory / "alone", free_port())
    try:
        server.start()
        yield server
    finally:
        server.kill()


@dataclass
class Cluster:
    """A Redis Cluster of three primaries with a replica each (``redis-cli --cluster
    create``); the replica of each primary found by :meth:`replica_of`."""

    servers: list[Server]

    @property
    def url(self) -> str:
        return self.servers[0].url

    def start(self) -> None:
        for server in self.servers:
            server.args += ["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"]
            server.args += ["--cluster-config-file", "nodes.conf"]
            server.args += ["--repl-diskless-sync-delay", "0"]
            server.start()
        nodes = [f"127.0.0.1:{server.port}" for server in self.servers]
        create = ["redis-cli", "--cluster", "create", *nodes, "--cluster-replicas", "1"]
        subprocess.run(
            [*create, "--cluster-yes"],
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=START_WAIT * 3,
        )
        deadline = time.monotonic() + START_WAIT * 3
        for server in self.servers:  # every node sees the whole cluster, every replica in sync
            with contextlib.closing(server.client()) as client:
                while client.cluster("info").get("cluster_state") != "ok" or (
                    client.info("replication")["role"] == "slave"
                    and client.info("replication")["master_link_status"] != "up"
                ):
                    if time.monotonic() > deadline:
                        raise RuntimeError("the cluster did not come up")
                    time.sleep(0.05)

    def replica_of(self, port: int) -> Server:
        with contextlib.closing(redis.Redis(port=port, socket_timeout=5)) as primary:
            replica = primary.info("replication")["slave0"]["port"]
        return next(server for server in self.servers if server.port == int(replica))

    def kill(self) -> None:
        for server in self.servers:
            server.kill()


@contextlib.contextmanager
def cluster(directory: Path) -> Iterator[Cluster]:
    """A running :class:`Cluster` in ``directory``, killed at the end."""
    if shutil.which("redis-cli") is None:
        raise RuntimeError("no redis-cli to create a cluster with")
    ports: list[int] = []
    for _ in range(6):
        ports.append(free_port(frozenset(ports)))
    servers = Cluster([Server(directory / f"node{port}", port) for port in ports])
    try:
        servers.start()
        yield servers
    finally:
        servers.kill()

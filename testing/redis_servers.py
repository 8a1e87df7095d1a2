"""Redis servers of a test's own (the shared Redis is never touched), on the run's ports:
one :class:`Server`, a primary and its replica (:class:`Pair`), a Redis Cluster
(:class:`Cluster`: 3 primaries, with a replica each or none) and a primary with a replica
behind 3 Sentinels (:class:`Sentinels`); :func:`running` starts one and always tears it
down. :func:`why_not` says in one line why they cannot run here (no ``redis-server``), so
that a test skips and a benchmark stops.

Tests may share one cluster (:func:`reused`): a new one takes 2 s to form (Redis' own
wait before a new primary takes writes), :meth:`Cluster.restore` puts it back between
tests in a fraction of that. :class:`Ahead` starts the next test's servers while a test runs.

What a test does to them:

- ``kill(port)``: ``kill -9`` of a server; its replica takes over once the others have
  found it gone (the cluster's node timeout here is :data:`NODE_TIMEOUT_MS`, Sentinel's
  down-after the same: a failover takes a second or two), or at once when told
  (:meth:`Cluster.take_over`, ``SENTINEL FAILOVER``);
- the graceful failover, ``CLUSTER FAILOVER`` on a replica (or :meth:`Sentinels.failover`):
  the replica catches up, then the two swap (behind Sentinel, the old primary turns
  replica a second or so later: :data:`SENTINEL_PERIODS_MS`);
- ``hold_back(...)``: the replica stops hearing from its primary, while both stay up and
  the cluster still counts the replica as healthy: a write the primary takes then reaches
  no replica, and is lost when the primary dies. How: replicas authenticate to their
  primary as the ACL user :data:`REPLICATION_USER`; the primary switches that user off and
  drops its links (the replica's reconnections are refused) until ``let_through``. SIGSTOP
  of the replica would not do: what the primary had sent already waits in the socket, and
  is applied on SIGCONT.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

HOST = "127.0.0.1"
NODE_TIMEOUT_MS = 500  # how long until the others take a server for gone
# How often a Sentinel reads each server's INFO, and says hello to the others (Redis'
# defaults: 10 s, 2 s). After a graceful SENTINEL FAILOVER a Sentinel turns the old
# primary into a replica once its INFO has said "master" for 4 hello periods: until then
# it still takes writes, which no replica confirms. 8 to 10 s of that made the graceful
# case the slowest of the failover tests, at the edge of its bound (BACK_WITHIN); and the
# Sentinels, saying hello more often, know each other a second or two sooner at start.
SENTINEL_PERIODS_MS = {"INFO-PERIOD": 500, "PUBLISH-PERIOD": 250}
SENTINEL_DEFAULT_PERIODS_MS = {"INFO-PERIOD": 10000, "PUBLISH-PERIOD": 2000}  # Redis' own
REPLICATION_USER, REPLICATION_PASSWORD = "replication", "replication-secret"
SENTINEL_MASTER = "cards"
UP_WITHIN = 30.0  # seconds for a cluster or Sentinels to form
FAILOVER_WITHIN = 15.0  # seconds for a replica to take over


def why_not() -> str | None:
    """Why these servers cannot run here (one line), or None."""
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        return "redis-server and redis-cli are not installed: no Redis of a test's own here"
    return None


def _share() -> range:
    """The ports of REDIS_TEST_PORTS (else 200 of the run's own from REDIS_TEST_DB) this
    process may take: a share for each pytest-xdist worker, so that two never meet."""
    base = 20000 + 200 * int(os.environ.get("REDIS_TEST_DB", "14"))
    given = os.environ.get("REDIS_TEST_PORTS") or f"{base}-{base + 199}"
    first, _, last = given.partition("-")
    ports = range(int(first), int(last or first) + 1)
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    workers = max(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")), 1)
    share = len(ports) // workers
    return range(ports.start + share * worker, ports.start + share * (worker + 1))


# The ports handed out until their server is killed: one starting (in a thread: Ahead)
# may not listen yet when the next are asked for.
_HANDED_OUT: set[int] = set()


def free_ports(count: int) -> list[int]:
    """``count`` ports of this process's share that nothing listens on (tried by binding
    each) and that are not handed out already."""
    found: list[int] = []
    for port in _share():
        if port in _HANDED_OUT:
            continue
        with socket.socket() as probe:
            # As redis-server binds: a port a killed server left in TIME_WAIT is free.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((HOST, port))
            except OSError:
                continue
        found.append(port)
        if len(found) == count:
            _HANDED_OUT.update(found)
            return found
    raise RuntimeError(f"not {count} free ports left in REDIS_TEST_PORTS")


def _probe(port: int, timeout: float = 1.0) -> redis.Redis:
    return redis.Redis(host=HOST, port=port, socket_timeout=timeout, retry=Retry(NoBackoff(), 0))


def _wait(what: str, ready: object, within: float) -> None:
    """Poll ``ready()`` (errors count as not yet) until true, or fail naming ``what``."""
    deadline = time.monotonic() + within
    last: object = None
    while time.monotonic() < deadline:
        try:
            if ready():  # type: ignore[operator]
                return
        except (redis.RedisError, OSError) as exc:
            last = exc
        time.sleep(0.01)  # a server starting or electing: nothing to wait on but asking
    raise AssertionError(f"{what} within {within} s (last error: {last})")


class Server:
    """One redis-server process (a cluster node, a primary, a replica or a Sentinel) in
    ``directory``, logging to server.log there; ``args`` follow ``redis-server``."""

    # Whether a start loads the dump in its folder (testing/ownredis.py: a test's own
    # server keeps its data over a stop); otherwise every start is empty.
    keeps_data = False

    def __init__(self, port: int, directory: Path, *args: str) -> None:
        self.port, self.directory, self.args = port, directory, list(args)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    def start(self) -> None:
        self.launch()
        self.wait_up()

    def launch(self) -> None:
        """The process started (:meth:`wait_up` waits until it answers): servers that do
        not need each other to start start side by side. Unless it :attr:`keeps_data`, it
        starts empty: the dump a full sync left in its folder (``--repl-diskless-sync no``)
        is removed, else a server started again there (:meth:`Cluster.restore`) would load
        the keys of that sync."""
        _HANDED_OUT.add(self.port)  # again, when a killed one starts again
        self.directory.mkdir(parents=True, exist_ok=True)
        if not self.keeps_data:
            (self.directory / "dump.rdb").unlink(missing_ok=True)
        log = (self.directory / "server.log").open("ab")
        self.process = subprocess.Popen(
            ["redis-server", *self.args],
            cwd=self.directory,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()

    def wait_up(self) -> None:
        def up() -> bool:
            assert self.alive, f"redis-server on port {self.port} exited:\n{self.log()}"
            return bool(self.client().ping())

        _wait(f"redis-server on port {self.port} answers", up, UP_WITHIN)

    def client(self, timeout: float = 5.0) -> redis.Redis:
        return _probe(self.port, timeout)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """``kill -9``: no goodbye to its replicas or the cluster. Its port is free again."""
        if self.alive:
            assert self.process is not None
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
            self.process.wait(10)
        _HANDED_OUT.discard(self.port)

    stop = kill

    def freeze(self, frozen: bool) -> None:
        """SIGSTOP / SIGCONT: the server stops reading (and acknowledging) anything."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP if frozen else signal.SIGCONT)

    def log(self) -> str:
        path = self.directory / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _start_all(servers: Iterable[Server]) -> None:
    """Each of ``servers`` started side by side."""
    servers = list(servers)
    for server in servers:
        server.launch()
    for server in servers:
        server.wait_up()


def data_args(port: int) -> list[str]:
    """A server that saves nothing to disk of its own (a full sync writes a dump, which
    :meth:`Server.launch` removes) and lets replicas in as REPLICATION_USER."""
    return [
        "--port",
        str(port),
        "--bind",
        HOST,
        "--save",
        "",
        "--appendonly",
        "no",
        "--user",
        *f"{REPLICATION_USER} on >{REPLICATION_PASSWORD} ~* &* +@all".split(),
        "--masteruser",
        REPLICATION_USER,
        "--masterauth",
        REPLICATION_PASSWORD,
        "--repl-ping-replica-period",
        "1",
        "--repl-diskless-sync-delay",  # a replica's first sync at once, not after 5 s
        "0",
        # A replica synced through a file is online at once; one synced over the socket
        # (Redis 7's default) only once it has acknowledged, which it does once a second:
        # until then no WAIT counts it, and a pair just started confirmed nothing for up
        # to a second.
        "--repl-diskless-sync",
        "no",
    ]


def hold_back(primary: redis.Redis) -> None:
    """Its replicas hear nothing more from ``primary`` (see the module docstring)."""
    primary.acl_setuser(REPLICATION_USER, enabled=False)
    primary.client_kill_filter(user=REPLICATION_USER)
    _wait(
        "the replicas' links are down",
        lambda: not primary.info("replication")["connected_slaves"],
        FAILOVER_WITHIN,
    )


def wait_caught_up(primary: Server, replica: Server) -> None:
    """Until ``replica`` has all that ``primary`` had written when asked."""
    with primary.client() as p, replica.client() as r:
        written = int(p.info("replication")["master_repl_offset"])
        _wait(
            f"the replica on {replica.port} caught up",
            lambda: int(r.info("replication")["master_repl_offset"]) >= written,
            UP_WITHIN,
        )


def let_through(primary: redis.Redis) -> None:
    """Its replicas may log in to ``primary`` again, and catch up."""
    primary.acl_setuser(REPLICATION_USER, enabled=True)


def _linked(replica: redis.Redis) -> bool:
    return bool(replica.info("replication")["master_link_status"] == "up")


def _role(client: redis.Redis) -> str:
    return str(client.info("replication")["role"])


@dataclass
class Cluster:
    """``primaries`` primaries, each with ``replicas`` replicas (0 or 1), on free ports
    (each server's and its cluster bus port). :attr:`url` names one node; the client
    learns the rest."""

    directory: Path
    primaries: int = 3
    replicas: int = 1
    servers: dict[int, Server] = field(default_factory=dict)
    # each node's ACL users and CONFIG as started (restore puts neither back)
    settings: dict[int, object] = field(default_factory=dict, init=False)
    settled: tuple[int, list[int]] | None = field(default=None, init=False)  # (_state)

    def __post_init__(self) -> None:
        count = self.primaries * (1 + self.replicas)
        self.ports = free_ports(2 * count)
        for port, bus in zip(self.ports[:count], self.ports[count:], strict=True):
            args = [
                *data_args(port),
                "--cluster-enabled",
                "yes",
                "--cluster-port",
                str(bus),
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                str(NODE_TIMEOUT_MS),
                # a replica that has not heard from its primary for a while still takes
                # over (the held-back case); Redis' default refuses it after some seconds
                "--cluster-replica-validity-factor",
                "0",
                "--cluster-require-full-coverage",
                "yes",
            ]
            self.servers[port] = Server(port, self.directory / str(port), *args)

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.ports[0]}/0"

    def start(self) -> None:
        _start_all(self.servers.values())
        nodes = [f"{HOST}:{port}" for port in self.servers]
        create = ["--cluster", "create", *nodes, "--cluster-replicas", str(self.replicas)]
        create.append("--cluster-yes")
        subprocess.run(
            ["redis-cli", *create],
            check=True,
            capture_output=True,
            timeout=UP_WITHIN,
        )
        self.wait_ok()
        self.settings, self.settled = self._settings(), self._state()

    def stop(self) -> None:
        for server in self.servers.values():
            server.kill()
        _HANDED_OUT.difference_update(self.ports)  # the bus ports

    def _live(self) -> list[Server]:
        return [s for s in self.servers.values() if s.alive]

    def nodes(self) -> dict[int, dict[str, object]]:
        """Each node as a live node sees it (CLUSTER NODES): port -> flags, primary's id,
        node id, slots, connected."""
        for server in self._live():
            with contextlib.suppress(redis.RedisError), server.client() as node:
                found = node.cluster("NODES")
                return {int(addr.split("@")[0].rsplit(":", 1)[1]): v for addr, v in found.items()}
        raise AssertionError("no node of the cluster answers")

    def primary_ports(self) -> list[int]:
        found = []
        for server in self._live():
            with server.client() as node:
                if _role(node) == "master":
                    found.append(server.port)
        return sorted(found)

    def replica_of(self, primary: int) -> int:
        nodes = self.nodes()
        node_id = nodes[primary]["node_id"]
        found = [p for p, n in nodes.items() if n["master_id"] == node_id and self.servers[p].alive]
        assert found, f"the primary on {primary} has no live replica"
        return found[0]

    def primary_of(self, replica: int) -> int:
        nodes = self.nodes()
        primary_id = nodes[replica]["master_id"]
        return next(p for p, n in nodes.items() if n["node_id"] == primary_id)

    def primary_for(self, key: str) -> int:
        """The port of the primary that holds ``key``'s slot now."""
        with self._live()[0].client() as c:
            slot = int(c.cluster("KEYSLOT", key))
        for port, node in self.nodes().items():
            if not self.servers[port].alive or "master" not in str(node["flags"]):
                continue
            for first, *last in node["slots"]:  # type: ignore[attr-defined]
                if int(first) <= slot <= int(last[0] if last else first):
                    return port
        raise AssertionError(f"no live primary holds slot {slot}")

    def wait_ok(self, within: float = UP_WITHIN) -> None:
        """Every live node says the cluster is ok, and every replica's link is up."""

        def ok() -> bool:
            for server in self._live():
                with server.client() as c:
                    state, info = c.cluster("INFO")["cluster_state"], c.info("replication")
                if state != "ok":
                    return False
                if info["role"] == "slave" and info["master_link_status"] != "up":
                    return False
            return True

        _wait("the cluster is ok", ok, within)

    def restore(self) -> None:
        """The cluster as started, but for which server of each pair is the primary (for
        a test of its own on a cluster another test used): every node in touch with every
        other, every replica let through, no key and no script left anywhere. A node's ACL
        users and CONFIG are not put back (a primary that was not killed keeps what a test
        set): when they differ from the start, restore fails (:func:`reused`).

        A killed server is started again (the replica of the one that took over), and
        each replica anew: one that has run an election keeps its votes for 4 s (twice
        Redis' 2 s auth timeout) and, its primary gone again meanwhile, "wins" with them,
        for an epoch the others refuse (no primary for its slots then). None is, when each
        is up and nothing failed over since the cluster was last started or restored (the
        same primaries, no new epoch): a test may restore it itself as it ends."""
        if len(self._live()) < len(self.servers) or self._state() != self.settled:
            self._anew()
        for port in self.primary_ports():
            with self.servers[port].client() as primary:
                let_through(primary)
        self.wait_ok()
        for port in self.primary_ports():
            with self.servers[port].client() as primary:
                primary.flushall()  # and its replica soon after
        for server in self.servers.values():
            with server.client() as node:
                node.script_flush()
                _wait("no key is left", lambda: node.dbsize() == 0, UP_WITHIN)
        changed = sorted(p for p, now in self._settings().items() if now != self.settings[p])
        assert not changed, f"a test left an ACL user or CONFIG changed on {changed}"
        self.settled = self._state()

    def _state(self) -> tuple[int, list[int]]:
        """The greatest epoch a node knows (a failover, or a replica's bid for one, raises
        it) and the primaries' ports."""
        epochs = []
        for server in self._live():
            with server.client() as node:
                epochs.append(int(node.cluster("INFO")["cluster_current_epoch"]))
        return max(epochs), self.primary_ports()

    def _anew(self) -> None:
        """Each killed primary's replica takes over, each replica and each killed server
        starts again, and every node is in touch with every other (:meth:`restore`)."""
        self.take_over()
        for server in self._live():
            with server.client() as node:
                replica = _role(node) == "slave"
            if replica:
                self._down(server)
        _start_all([s for s in self.servers.values() if not s.alive])

        def whole() -> bool:
            for server in self.servers.values():
                with server.client() as node:
                    seen = node.cluster("NODES").values()
                masters = [n for n in seen if "master" in str(n["flags"])]
                if len(masters) != self.primaries or len(seen) != len(self.servers):
                    return False
                if any("fail" in str(n["flags"]) or not n["connected"] for n in seen):
                    return False
            return True

        _wait("every node is back", whole, UP_WITHIN)

    def take_over(self) -> None:
        """Each killed primary's live replica takes over now (CLUSTER FAILOVER TAKEOVER, as
        an operator would), not once the others have found the primary gone and elected it
        (a second or two). Before a restore: the primary, started again as one, would say
        the cluster is not ok for 2 s (Redis's own wait after a primary's restart)."""
        nodes = self.nodes()
        port_of = {n["node_id"]: p for p, n in nodes.items()}
        for port, node in nodes.items():
            primary = port_of.get(node["master_id"])
            if primary and self.servers[port].alive and not self.servers[primary].alive:
                with contextlib.suppress(redis.ResponseError), self.servers[port].client() as r:
                    r.cluster("FAILOVER", "TAKEOVER")  # (an error: it took over meanwhile)

    def _settings(self) -> dict[int, object]:
        """Each node's ACL users and CONFIG now (but whom it follows: a failover's)."""
        found: dict[int, object] = {}
        for server in self.servers.values():
            with server.client() as node:
                every = node.config_get("*").items()
                config = {k: v for k, v in every if k not in ("replicaof", "slaveof")}
                found[server.port] = (node.acl_list(), config)
        return found

    def kill(self, port: int) -> int:
        """``kill -9`` of the server on ``port``; when it was a primary, the port of the
        replica that takes over (not waited for)."""
        replica = self.replica_of(port) if port in self.primary_ports() else port
        self._down(self.servers[port])
        return replica

    def _down(self, server: Server) -> None:
        """``kill -9`` of ``server``; its port stays the cluster's (:meth:`restore`)."""
        server.kill()
        _HANDED_OUT.add(server.port)

    def hold_back(self, replica: int) -> None:
        """The replica hears nothing more from its primary (see the module docstring)."""
        hold_back(self.servers[self.primary_of(replica)].client())
        _wait(
            f"{replica}'s link is down",
            lambda: (
                self.servers[replica].client().info("replication")["master_link_status"] == "down"
            ),
            FAILOVER_WITHIN,
        )


@dataclass
class Sentinels:
    """A primary and its replica, watched by 3 Sentinels, on ``ports`` (5 of them). The
    bot finds the primary through the Sentinels (:attr:`addresses`, :data:`SENTINEL_MASTER`).
    ``periods``: the Sentinels' once they are up (:data:`SENTINEL_PERIODS_MS`; empty:
    Redis' defaults, as in production); until then the short ones, so that they find each
    other within a second, not two or three."""

    directory: Path
    periods: dict[str, int] = field(default_factory=lambda: dict(SENTINEL_PERIODS_MS))
    servers: dict[int, Server] = field(default_factory=dict)
    sentinels: list[Server] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ports = free_ports(5)
        primary, replica = self.ports[0], self.ports[1]
        self.servers[primary] = Server(primary, self.directory / str(primary), *data_args(primary))
        self.servers[replica] = Server(replica, self.directory / str(replica), *data_args(replica))
        for port in self.ports[2:5]:
            where = self.directory / str(port)
            self.sentinels.append(Server(port, where, str(where / "sentinel.conf"), "--sentinel"))

    @property
    def addresses(self) -> str:
        """REDIS_SENTINELS."""
        return ",".join(f"{HOST}:{s.port}" for s in self.sentinels)

    def start(self) -> None:
        self.launch()
        self.wait_ok()
        if self.periods != SENTINEL_PERIODS_MS:
            self._debug({**SENTINEL_DEFAULT_PERIODS_MS, **self.periods})

    def launch(self) -> None:
        """Every server and Sentinel answering, the replica linked, each Sentinel in touch
        with the primary (a bot may start now: they name it) but not ready yet
        (:meth:`wait_ok`). One that has not heard the primary within its down-after (a
        slow start) takes it for down, and a bot asking it then stops: "No master found"."""
        primary = self.ports[0]
        for sentinel in self.sentinels:
            sentinel.directory.mkdir(parents=True, exist_ok=True)
            (sentinel.directory / "sentinel.conf").write_text(
                f"port {sentinel.port}\nbind {HOST}\ndir {sentinel.directory}\n"
                f"sentinel monitor {SENTINEL_MASTER} {HOST} {primary} 2\n"
                f"sentinel down-after-milliseconds {SENTINEL_MASTER} {NODE_TIMEOUT_MS}\n"
                f"sentinel failover-timeout {SENTINEL_MASTER} 2000\n"
            )
        _start_all(self.servers.values())
        # The replica follows the primary once both answer (it links at once: told at its
        # start, before the primary listened, it would try again a second later), and the
        # Sentinels start once it is linked: one that reads its INFO before (the link
        # still down) reads it again only a second later (Redis' own period for a replica
        # whose link was down), and is not ready until then.
        with self.servers[self.ports[1]].client() as replica:
            replica.replicaof(HOST, primary)
            _wait("the replica is linked", lambda: _linked(replica), UP_WITHIN)
        _start_all(self.sentinels)
        self._debug(SENTINEL_PERIODS_MS)  # they find each other sooner

        def reached(sentinel: Server) -> bool:  # the primary's INFO read, not down
            with sentinel.client() as asked:
                seen = asked.sentinel_master(SENTINEL_MASTER)
            return int(seen["info-refresh"]) < 1000 and "down" not in str(seen["flags"])

        _wait(
            "the Sentinels reach the primary", lambda: all(map(reached, self.sentinels)), UP_WITHIN
        )

    def _debug(self, periods: dict[str, int]) -> None:
        for sentinel in self.sentinels:
            debug = sentinel.client().execute_command  # untyped in redis-py
            args = [x for pair in periods.items() for x in pair]
            debug("SENTINEL", "DEBUG", *args)  # type: ignore[no-untyped-call]

    def stop(self) -> None:
        for server in [*self.sentinels, *self.servers.values()]:
            server.kill()

    def master(self) -> dict[str, Any]:
        """SENTINEL MASTER as the first Sentinel that answers sees it."""
        for sentinel in self.sentinels:
            if sentinel.alive:
                with contextlib.suppress(redis.RedisError), sentinel.client() as asked:
                    found = asked.sentinel_master(SENTINEL_MASTER)
                    assert isinstance(found, dict)
                    return found
        raise AssertionError("no Sentinel answers")

    def primary(self) -> int:
        """The port the Sentinels name as the primary, once every live one names the same:
        right after a failover one of them may still name the old primary for a moment."""
        named: set[int] = set()

        def agreed() -> bool:
            named.clear()
            for sentinel in self.sentinels:
                if sentinel.alive:
                    with sentinel.client() as asked:
                        found = asked.sentinel_master(SENTINEL_MASTER)
                    assert isinstance(found, dict)
                    named.add(int(found["port"]))
            return len(named) == 1

        _wait("the Sentinels name one primary", agreed, UP_WITHIN)
        return named.pop()

    def replica(self) -> int:
        return next(p for p in self.servers if p != self.primary())

    def wait_ok(self, within: float = UP_WITHIN) -> None:
        """The Sentinels know each other and the replica, whose link is up."""

        def ok() -> bool:
            seen = self.master()
            if int(seen["num-other-sentinels"]) < 2 or int(seen["num-slaves"]) < 1:
                return False
            if "down" in str(seen["flags"]):
                return False
            replica = self.servers[self.replica()]
            with replica.client() as asked:
                info = asked.info("replication")
            if info["role"] != "slave" or info["master_link_status"] != "up":
                return False
            return all(_promotable(s) for s in self.sentinels if s.alive)

        _wait("the Sentinels are ready", ok, within)

    def kill(self, port: int) -> None:
        self.servers[port].kill()

    def wait_promoted(self, port: int, within: float = FAILOVER_WITHIN) -> float:
        """Wait until the Sentinels name ``port`` the primary and it acts as one."""
        started = time.monotonic()

        def promoted() -> bool:
            return self.primary() == port and _role(self.servers[port].client()) == "master"

        _wait(f"{port} is the primary", promoted, within)
        return time.monotonic() - started

    def failover(self, within: float = FAILOVER_WITHIN) -> float:
        """``SENTINEL FAILOVER``: the replica takes over; the seconds it took."""
        replica = self.replica()
        sentinel = next(s for s in self.sentinels if s.alive)
        sentinel.client().sentinel_failover(SENTINEL_MASTER)
        return self.wait_promoted(replica, within)

    def hold_back(self) -> None:
        hold_back(self.servers[self.primary()].client())


def _promotable(sentinel: Server) -> bool:
    """Whether ``sentinel`` knows a replica it would promote: linked, up, its INFO read
    lately. One that only heard of it from the primary answers SENTINEL FAILOVER with
    NOGOODSLAVE."""
    with sentinel.client() as asked:
        known = asked.sentinel_slaves(SENTINEL_MASTER)
    return any(
        r["is_slave"]
        and not (r["is_sdown"] or r["is_disconnected"])
        and r["master-link-status"] == "ok"
        and r["info-refresh"] < 1000
        for r in known
    )


def single(directory: Path) -> Server:
    """One server on a free port, not started yet."""
    (port,) = free_ports(1)
    return Server(port, directory, *data_args(port))


@dataclass
class Pair:
    """A primary and one replica of it, on free ports in ``directory``."""

    directory: Path
    primary: Server = field(init=False)
    replica: Server = field(init=False)

    def __post_init__(self) -> None:
        first, second = free_ports(2)
        self.primary = Server(first, self.directory / "primary", *data_args(first))
        self.replica = Server(second, self.directory / "replica", *data_args(second))

    def start(self) -> None:
        """Both started side by side; then the replica follows the primary (told once
        both answer: one told at start that came up first would try again a second later)."""
        _start_all((self.primary, self.replica))
        self._follow()
        self.wait_synced()

    def _follow(self) -> None:
        """The replica follows the primary from now on, and links at once."""
        with self.replica.client() as replica:
            replica.replicaof("NO", "ONE")  # else REPLICAOF of its primary does nothing
            replica.replicaof(HOST, self.primary.port)

    def wait_synced(self) -> None:
        """Until the replica is linked and has everything the primary wrote (up to a
        write of this connection's own: WAIT counts no other's)."""
        with self.primary.client() as primary:
            primary.set("testing:synced", 1)
            _wait("the replica caught up", lambda: primary.wait(1, 10) >= 1, UP_WITHIN)

    def hold_back(self) -> None:
        """Writes from now on reach the primary only (see the module docstring)."""
        with self.primary.client() as primary:
            hold_back(primary)

    def let_go(self) -> None:
        """The replica may log in again; it catches up (:meth:`wait_synced`). It is told
        to follow the primary afresh (a full sync), so that it links at once: left alone,
        it would try again only a second after its last refused try."""
        with self.primary.client() as primary:
            let_through(primary)
        self._follow()

    def lose_unreplicated(self) -> None:
        """What a failover to the held-back replica leaves, at the primary's own address
        (where the bot's client stays): the primary drops every write the replica never
        got and goes on from the replica's copy, which follows it again. On the way it is
        a replica for a moment (writes to it fail with READONLY)."""
        with (
            self.primary.client() as primary,
            self.replica.client() as replica,
        ):
            replica.replicaof("NO", "ONE")
            primary.replicaof(HOST, self.replica.port)

            def synced() -> bool:
                info = primary.info("replication")
                return bool(
                    info.get("master_link_status") == "up"
                    and not info.get("master_sync_in_progress")
                )

            _wait("the primary took the replica's copy", synced, UP_WITHIN)
            primary.replicaof("NO", "ONE")
        self.let_go()  # the replica follows the primary again
        self.wait_synced()

    def promote(self) -> None:
        """The replica becomes a primary of its own, as a failover makes it."""
        with self.replica.client() as replica:
            replica.replicaof("NO", "ONE")

    def stop(self) -> None:
        self.replica.kill()
        self.primary.kill()


@contextlib.contextmanager
def reused(made: list[Cluster], directory: Path) -> Iterator[Cluster]:
    """The cluster of ``made`` for one of the tests that share it (a new one, in
    ``directory``, when there is none), restored after the test (:meth:`Cluster.restore`).
    One that fails to start or to be restored is stopped and dropped: the next test has a
    new one. Whoever made the list stops what is left in it.

    A test may kill, fail over and hold back its servers (restore brings each back, which
    of a pair is the primary aside), and write keys and load scripts (restore drops them);
    nothing else: an ACL user it adds or a CONFIG SET would outlive it on the primaries
    restore does not restart, so restore fails then (the test errors at its teardown) and
    the cluster is dropped."""
    if not made:
        made.append(Cluster(directory))
        try:
            made[0].start()
        except BaseException:
            made.pop().stop()
            raise
    cluster = made[0]
    try:
        yield cluster
    finally:
        try:
            cluster.restore()
        except BaseException:
            made.remove(cluster)
            cluster.stop()
            raise


class Runs(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


Started = TypeVar("Started", bound=Runs)


class Ahead(Generic[Started]):
    """Servers started one ahead, in a thread, each in a folder of its own (``make``: a
    :class:`Pair`, or :class:`Sentinels`): while a test runs on its own, the next is
    started, so that the next test finds it up rather than wait for it. :meth:`close`
    stops the one left over."""

    def __init__(self, directory: Path, make: Callable[[Path], Started]) -> None:
        self.directory, self.make, self.made = directory, make, itertools.count()
        self.thread = ThreadPoolExecutor(1, "ahead")
        self.next = self._start()

    def _start(self) -> tuple[Started, Future[None]]:
        made = self.make(self.directory / str(next(self.made)))
        return made, self.thread.submit(made.start)

    def take(self) -> Started:
        """Servers started (the next start meanwhile): the caller stops them."""
        (made, started), self.next = self.next, self._start()
        try:
            started.result()
        except BaseException:
            self._stop(made)
            raise
        return made

    def _stop(self, made: Started) -> None:
        """``made`` stopped by the thread that starts them, once its start is over:
        stopped from here while the thread still launches it (a Ctrl-C or a test's timeout
        in :meth:`take`), a server launched just after would outlive the run. The thread
        is joined at exit (Python's own), whatever interrupts this one."""
        self.thread.submit(made.stop)

    def close(self) -> None:
        self._stop(self.next[0])
        self.thread.shutdown()


def started(made: Started) -> Started:
    """``made`` started; the caller stops it."""
    made.start()
    return made


@contextlib.contextmanager
def running(made: Started) -> Iterator[Started]:
    """``made`` (a :class:`Server`, :class:`Pair`, :class:`Cluster` or :class:`Sentinels`)
    started, and torn down after, whatever happens."""
    try:
        made.start()
        yield made
    finally:
        made.stop()

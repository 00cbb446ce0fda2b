"""Other machines for the tests: network namespaces on a private bridge, and forwarders to this machine's services.

Each host is a network namespace with its own address on a bridge in
10.213.0.0/16 (addresses that exist only on this machine) and, when a command
runs in it, its own host name (a UTS namespace), so what it records as its
host name is its own. A host reaches nothing of this machine but the bridge's
address: PostgreSQL and Redis listen on 127.0.0.1, which inside a namespace is
the namespace's own loopback. A `TcpForwarder` in the test process listens on
the bridge's address and pipes each connection to one of this machine's
services, remembering the address every connection came from: the proof of
where the clients ran.

Creating namespaces needs root, iproute2's `ip` and util-linux's `unshare`;
`host_network` skips the test, saying why, when it cannot. Everything it made
is removed on the way out, failed test or not; names carry the test process's
id and a random tag, so two runs never collide, and what a test process killed
before its clean-up left (namespaces, the processes still in them, bridges) is
removed by the next run.
"""

import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

PRIVATE_PREFIX = "10.213"
NAME_PREFIX = "assessor-test"  # of the namespaces, and of the bridges' descriptions (their names are too short)


@dataclass(frozen=True)
class Host:
    name: str  # its host name
    netns: str  # its network namespace
    address: str  # its address on the bridge

    def command(self, args: list[str]) -> list[str]:
        """`args` run on this host: in its network namespace, under its own host name."""
        set_name_then_run = 'hostname "$0" && exec "$@"'
        return ["ip", "netns", "exec", self.netns, "unshare", "--uts", "sh", "-c", set_name_then_run, self.name, *args]


@dataclass(frozen=True)
class HostNetwork:
    gateway: str  # this machine's address on the bridge: where the hosts find its services
    hosts: list[Host]


def _ip(*args: str) -> None:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {result.stderr.strip()}")


def _free_subnet() -> str:
    """A 10.213.N.0/24 that no interface of this machine uses yet (another run may hold one)."""
    used_addresses = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True).stdout
    used = {int(n) for n in re.findall(rf"inet {re.escape(PRIVATE_PREFIX)}\.(\d+)\.", used_addresses)}
    free = [n for n in range(1, 255) if n not in used]
    if not free:
        pytest.skip(f"every {PRIVATE_PREFIX}.N.0/24 is in use on this machine")
    return f"{PRIVATE_PREFIX}.{random.choice(free)}"


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def leftovers_remove() -> None:
    """Remove the namespaces (and what runs in them) and bridges of test processes that are gone."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    for netns in (line.split()[0] for line in listed.splitlines() if line.strip()):
        made_by = re.fullmatch(rf"{NAME_PREFIX}-(\d+)-[0-9a-f]{{6}}-.+", netns)
        if made_by and _process_gone(int(made_by.group(1))):
            pids = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["ip", "netns", "delete", netns], capture_output=True)
    bridges = subprocess.run(["ip", "-j", "link", "show", "type", "bridge"], capture_output=True, text=True).stdout
    for link in json.loads(bridges or "[]"):
        made_by = re.fullmatch(rf"{NAME_PREFIX} (\d+)", link.get("ifalias", ""))
        if made_by and _process_gone(int(made_by.group(1))):
            subprocess.run(["ip", "link", "delete", link["ifname"]], capture_output=True)


def host_network_or_skip() -> None:
    if os.geteuid() != 0:
        pytest.skip("making network namespaces for the worker hosts needs root")
    for tool, package in (("ip", "iproute2"), ("unshare", "util-linux")):
        if shutil.which(tool) is None:
            pytest.skip(f"the worker-host tests need the `{tool}` command (package {package})")


@contextmanager
def host_network(names: list[str]) -> Iterator[HostNetwork]:
    """One bridge on this machine and a namespace per name, each with a veth on the bridge; removed on exit."""
    host_network_or_skip()
    leftovers_remove()
    tag = uuid.uuid4().hex[:6]
    subnet = _free_subnet()
    bridge = f"asb{tag}"
    made_namespaces: list[str] = []
    try:
        try:
            _ip("link", "add", bridge, "type", "bridge")
        except RuntimeError as exc:
            pytest.skip(f"cannot make network interfaces here: {exc}")
        _ip("link", "set", "dev", bridge, "alias", f"{NAME_PREFIX} {os.getpid()}")
        _ip("addr", "add", f"{subnet}.1/24", "dev", bridge)
        _ip("link", "set", bridge, "up")
        hosts = []
        for number, name in enumerate(names, start=2):
            netns = f"{NAME_PREFIX}-{os.getpid()}-{tag}-{name}"
            outside, inside = f"asv{tag}{number}h", f"asv{tag}{number}n"
            _ip("netns", "add", netns)
            made_namespaces.append(netns)
            _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            _ip("link", "set", inside, "netns", netns)
            _ip("link", "set", outside, "master", bridge)
            _ip("link", "set", outside, "up")
            address = f"{subnet}.{number}"
            _ip("-n", netns, "addr", "add", f"{address}/24", "dev", inside)
            _ip("-n", netns, "link", "set", inside, "up")
            _ip("-n", netns, "link", "set", "lo", "up")
            hosts.append(Host(name=name, netns=netns, address=address))
        yield HostNetwork(gateway=f"{subnet}.1", hosts=hosts)
    finally:
        # A namespace's end of its veth pair goes with it, and takes the other end along.
        for netns in made_namespaces:
            subprocess.run(["ip", "netns", "delete", netns], capture_output=True)
        subprocess.run(["ip", "link", "delete", bridge], capture_output=True)


class TcpForwarder:
    """Listens on `address` (any free port) and pipes each connection to `target` (host, port).

    `peers` counts the connections by the address they came from.
    """

    def __init__(self, address: str, target: tuple[str, int]):
        self.target = target
        self.peers: Counter[str] = Counter()
        self._listener = socket.create_server((address, 0))
        self._listener.settimeout(0.2)
        self.port: int = self._listener.getsockname()[1]
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept_loop, daemon=True)

    def start(self) -> "TcpForwarder":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                # Shut down, not only closed: a pipe thread blocked in recv() keeps a merely closed socket open,
                # and with it a database session the test database's teardown then finds still connected.
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
            self._sockets.clear()

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                client, (peer, _port) = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                target = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            target.settimeout(None)
            with self._lock:
                self.peers[peer] += 1
                self._sockets.update((client, target))
            for source, sink in ((client, target), (target, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(1 << 16):
                sink.sendall(chunk)
        except OSError:
            pass
        # Either side closing (or dying) closes both: the other pipe's recv ends too.
        for sock in (source, sink):
            with self._lock:
                self._sockets.discard(sock)
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

"""Real servers on free loopback ports for the limits-rl tests: Redis 7.0
with rl's module, Valkey 9.1 with only the function library, Valkey with
neither; standalone, as a one-node cluster, or (Cluster) three primaries.
A missing binary fails the test with what to do (never a skip)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

# For the harness's own calls that expect a refused or closed connection
# (waiting for a start, SHUTDOWN): redis-py's default retries with back-off
# would add seconds to each.
NO_RETRY = Retry(NoBackoff(), 0)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
REDIS7 = os.environ.get("RL_REDIS7", "/usr/bin/redis-server")
REDIS8 = os.environ.get("RL_REDIS8", os.path.join(ROOT, ".deps/redis8/redis-server"))
VALKEY9 = os.environ.get("RL_VALKEY9", os.path.join(ROOT, ".deps/valkey/valkey-server"))
MODULE = os.environ.get("RL_MODULE", os.path.join(ROOT, "target/release/librl.so"))
LIBRARY = os.path.join(ROOT, "functions", "rl.lua")


def need(path: str, what: str, fix: str) -> str:
    if not os.path.isfile(path):
        raise RuntimeError(f"{what} not found at {path}: {fix}")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One server process; `flavor` is what it has: "module" (Redis 7.0 +
    librl.so), "library" (Valkey 9.1 + FUNCTION LOAD functions/rl.lua) or
    "bare" (Valkey 9.1, neither); "module-redis8" and "module-valkey9" are
    Redis 8.2 and Valkey 9.1 with the module (servers with module ACL
    categories); "library-redis7" is Redis 7.0 with only the library.
    `slots`: the first and last slot a cluster node serves (all of them by
    default); None leaves them to a Cluster, which then waits for the
    cluster itself."""

    def __init__(self, flavor: str, cluster: bool = False, tls: bool = False, port: int | None = None,
                 slots: tuple[int, int] | None = (0, 16383)):
        self.flavor, self.cluster, self.tls = flavor, cluster, tls
        if flavor.startswith("module"):
            binary = {
                "module": lambda: need(REDIS7, "Redis 7.0 (redis-server)", "run make deps or set RL_REDIS7"),
                "module-redis8": lambda: need(REDIS8, "Redis 8.2 (redis-server)", "run make deps or set RL_REDIS8"),
                "module-valkey9": lambda: need(VALKEY9, "Valkey 9.1 (valkey-server)", "run make deps or set RL_VALKEY9"),
            }[flavor]()
            extra = ["--loadmodule", need(MODULE, "rl's module", "run cargo build --release")]
        elif flavor == "library-redis7":
            binary = need(REDIS7, "Redis 7.0 (redis-server)", "run make deps or set RL_REDIS7")
            extra = []
        else:
            binary = need(VALKEY9, "Valkey 9.1 (valkey-server)", "run make deps or set RL_VALKEY9")
            extra = []
        if cluster:
            # The bus on a port of its own: the default (port + 10000) may be taken or too high.
            self.bus_port = free_port()
            extra += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                      "--cluster-port", str(self.bus_port)]
        self.dir = tempfile.mkdtemp(prefix="rl-py-")
        if tls:
            cert, key = os.path.join(self.dir, "cert.pem"), os.path.join(self.dir, "key.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                           check=True, capture_output=True)
            self.ca = cert
            extra += ["--tls-cert-file", cert, "--tls-key-file", key, "--tls-auth-clients", "no"]
        for _ in range(5):
            self.port = port or free_port()
            log = os.path.join(self.dir, f"server-{self.port}.log")
            ports = ["--port", "0", "--tls-port", str(self.port)] if tls else ["--port", str(self.port)]
            cmd = [binary, *ports, "--bind", "127.0.0.1", "--dir", self.dir,
                   "--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", log,
                   "--enable-debug-command", "yes", *extra]
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._ready():
                break
            self.proc.kill()
            self.proc.wait()
            text = open(log).read() if os.path.exists(log) else ""
            if "Address already in use" not in text:
                raise RuntimeError(f"{binary} did not start; its log:\n{text}")
            time.sleep(0.2 if port else 0)
        else:
            raise RuntimeError(f"{binary}: no free port")
        c = self.client()
        if cluster and slots is not None:
            c.execute_command("CLUSTER", "ADDSLOTSRANGE", *slots)
        if cluster and slots == (0, 16383):
            deadline = time.monotonic() + 20
            while c.execute_command("CLUSTER", "INFO").decode().find("cluster_state:ok") < 0:
                if time.monotonic() > deadline:
                    raise RuntimeError("one-node cluster did not reach cluster_state:ok")
                time.sleep(0.05)
        if flavor.startswith("library"):
            with open(LIBRARY) as f:
                c.function_load(f.read(), replace=True)

    def _ready(self) -> bool:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if self.client(socket_timeout=2, retry=NO_RETRY).ping():
                    return True
            except redis.ConnectionError:
                time.sleep(0.02)
        return False

    def client(self, **kw) -> redis.Redis:
        kw.setdefault("socket_timeout", 30)
        if self.tls:
            kw.update(ssl=True, ssl_ca_certs=self.ca)
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    @property
    def uri(self) -> str:
        if self.cluster:
            return f"rl+cluster://127.0.0.1:{self.port}"
        return f"{'rls' if self.tls else 'rl'}://127.0.0.1:{self.port}"

    def calls(self) -> dict[str, int]:
        """Commands the server ran, by name (INFO commandstats)."""
        stats = self.client().info("commandstats")
        return {k.removeprefix("cmdstat_"): v["calls"] for k, v in stats.items()}

    def restart(self, flavor: str) -> None:
        """Stops this server and starts one of `flavor` on the same port: the
        server changes under the clients connected to that address."""
        # Killed, not SHUTDOWN: redis-py would retry the SHUTDOWN whose
        # connection closes (seconds of back-off), and nothing here is kept.
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
        self.__init__(flavor, cluster=self.cluster, tls=self.tls, port=self.port)

    def stop(self) -> None:
        try:
            self.client(socket_timeout=5, retry=NO_RETRY).shutdown(nosave=True)
        except redis.ConnectionError:
            pass  # the connection closes as the server stops
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Cluster:
    """Three primaries of `flavor`, the slots split evenly: keys spread
    over the nodes, so a cluster client routes each call by its key."""

    def __init__(self, flavor: str, n: int = 3):
        self.nodes: list[Server] = []
        try:
            per = -(-16384 // n)
            for i in range(n):
                self.nodes.append(Server(flavor, cluster=True, slots=None))
                self.nodes[-1].client().execute_command(
                    "CLUSTER", "ADDSLOTSRANGE", i * per, min(16383, (i + 1) * per - 1))
            first = self.nodes[0].client()
            for node in self.nodes[1:]:
                first.execute_command("CLUSTER", "MEET", "127.0.0.1", node.port, node.bus_port)
            deadline = time.monotonic() + 30
            while not all(self._ready(node) for node in self.nodes):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the {flavor} cluster did not reach cluster_state:ok")
                time.sleep(0.05)
        except BaseException:
            self.stop()
            raise

    def _ready(self, node: Server) -> bool:
        c = node.client()
        known = c.execute_command("CLUSTER", "NODES").decode().strip().splitlines()
        return b"cluster_state:ok" in c.execute_command("CLUSTER", "INFO") and len(known) == len(self.nodes)

    def uri(self, userinfo: str = "") -> str:
        at = f"{userinfo}@" if userinfo else ""
        return "rl+cluster://" + at + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


class Commands:
    """The commands clients send to `server` while the block runs, read with
    MONITOR: those a script or function runs inside (`[0 lua]`) are not
    round trips and are left out."""

    END = "limits-rl-monitor-end"

    def __init__(self, server: Server):
        self.server = server
        self.sent: list[str] = []

    def __enter__(self):
        import threading

        self._end = self.server.client()
        self._end.ping()  # connected before MONITOR starts
        self._monitor = self.server.client().monitor()
        self._conn = self._monitor.__enter__()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        return self

    def _read(self):
        while True:
            cmd = self._conn.next_command()
            if self.END in cmd["command"]:
                return
            if cmd.get("client_type") != "lua" and cmd["command"] != "MONITOR":
                self.sent.append(cmd["command"])

    def __exit__(self, *exc):
        self._end.echo(self.END)
        self._thread.join(timeout=10)
        self._monitor.__exit__(*exc)

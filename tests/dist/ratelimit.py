"""rl-ratelimit's release files, for dist_test.py: the two static binaries,
the envoy.md beside each, whose links lead inside its tarball, and the
amd64 one run from its tarball alone against a server loading the
release's module, answering Envoy's /json endpoint."""

import json
import os
import signal
import socket
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.request

import release_docs

ARCHES = {"amd64": "x86-64", "arm64": "ARM aarch64"}


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


def tarball(version, arch):
    return f"rl-ratelimit-{version}-linux-{arch}.tar.gz"


def unpack(work, version, arch):
    """Unpacks the tarball into a fresh folder; returns its top folder."""
    dest = tempfile.mkdtemp(prefix="rl-ratelimit-", dir=work)
    with tarfile.open(os.path.join(work, tarball(version, arch))) as t:
        # The "data" filter where this Python has it (3.11.4+).
        t.extractall(dest, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return os.path.join(dest, f"rl-ratelimit-{version}-linux-{arch}")


def binaries_are_static(work, version):
    for arch, machine in ARCHES.items():
        name = tarball(version, arch)
        check(os.path.isfile(os.path.join(work, name)), f"{name} not in the release")
        top = unpack(work, version, arch)
        for f in ("rl-ratelimit", "LICENSE", "envoy.md"):
            check(os.path.isfile(os.path.join(top, f)), f"{name} holds no {f}")
        kind = subprocess.run(["file", "-L", os.path.join(top, "rl-ratelimit")], capture_output=True, text=True).stdout
        check(machine in kind and "statically linked" in kind, f"{name}'s rl-ratelimit: {kind}")


def docs_links_lead_inside(work, version):
    """envoy.md, shipped alone beside the binary: every relative link leads
    to a heading of its own (its links to the repository's other files
    made plain text, as the module tarballs' are)."""
    for arch in ARCHES:
        top = unpack(work, version, arch)
        bad = release_docs.broken_links(top)
        check(not bad, f"{len(bad)} broken links in {tarball(version, arch)}:\n" + "\n".join(bad[:20]))
        text = open(os.path.join(top, "envoy.md"), encoding="utf-8").read()
        check(release_docs.relative_links(text), f"{tarball(version, arch)}'s envoy.md has no link left (its contents?)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/json", data=json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def serves_json(work, version, redis_port):
    """The amd64 binary with envoyproxy/ratelimit's settings: a limit of 2
    per minute admits 2 of 3 over /json, then SIGTERM ends it with 0."""
    top = unpack(work, version, "amd64")
    runtime = tempfile.mkdtemp(prefix="runtime-", dir=work)
    os.makedirs(os.path.join(runtime, "config"))
    with open(os.path.join(runtime, "config", "config.yaml"), "w") as f:
        f.write("domain: dist\ndescriptors:\n  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 2}\n")
    port, grpc, debug = free_port(), free_port(), free_port()
    env = {"PATH": os.environ.get("PATH", ""), "REDIS_SOCKET_TYPE": "tcp", "REDIS_URL": f"127.0.0.1:{redis_port}",
           "RUNTIME_ROOT": runtime, "RUNTIME_WATCH_ROOT": "false", "USE_STATSD": "false", "HOST": "127.0.0.1",
           "PORT": str(port), "GRPC_HOST": "127.0.0.1", "GRPC_PORT": str(grpc), "DEBUG_HOST": "127.0.0.1",
           "DEBUG_PORT": str(debug)}
    proc = subprocess.Popen([os.path.join(top, "rl-ratelimit")], cwd=top, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                raise Failure(f"rl-ratelimit exited {proc.returncode}:\n{proc.stdout.read()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthcheck", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            check(time.monotonic() < deadline, "rl-ratelimit not healthy within 20 s")
            time.sleep(0.1)
        body = {"domain": "dist", "descriptors": [{"entries": [{"key": "user", "value": "a"}]}]}
        codes = [post(port, body)[0] for _ in range(3)]
        check(codes == [200, 200, 429], f"/json answered {codes}, want [200, 200, 429]")
        proc.send_signal(signal.SIGTERM)
        check(proc.wait(timeout=15) == 0, f"exit {proc.returncode} after SIGTERM")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

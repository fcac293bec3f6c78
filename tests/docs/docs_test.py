"""Runs every example in README.md and docs/*.md against a real server.

- A ```python block is executed twice, with redis-py speaking RESP2 and then
  RESP3: `redis.Redis(...)` is pointed at the test server whatever the
  snippet passes, and `time.sleep(s)` moves the server's clock by `s`
  instead of sleeping. Then once more on a server with the real clock,
  sleeping for real, as a reader runs it: what it asserts and prints must
  hold there too.
- A session block (lines `127.0.0.1:6379> CMD` or `$ redis-cli ARGS`, each
  followed by the output shown) is replayed through redis-cli, one command
  at a time, and every output is compared exactly.
- A `$ ` line of a session that uses the shell (a pipe, a redirection, a
  command substitution, `NAME=...`) runs as written in bash, from the
  repository's root, with its output on a terminal (a pty), as a reader
  sees it: `redis-cli` is the test server's, `HOST:PORT` and
  `-h HOST -p PORT` name it. A line that only sets a variable prints
  nothing, and the block's later lines see the variable.
- Every relative link must lead to a file, and its `#anchor` to a heading.
- README.md stays under 455 lines.

The server is Valkey with the module and the function library, under libfaketime with a stopped
clock: every block starts at BASE_TIME on an empty keyspace, and time moves
only when a marker says so. Markers are HTML comments right before a block:

    <!-- docs-test: advance 1500ms -->       before the block's first command
    <!-- docs-test: advance 1500ms before 3 -->   before its third command
    <!-- docs-test: continue -->             keep the previous block's keys and clock
    <!-- docs-test: fresh -->                a new server (INFO counters at zero)
    <!-- docs-test: load-args NOTIFY-DENIED on -->   a server loading rl with these
    <!-- docs-test: cluster -->              a one-node cluster (all slots)
    <!-- docs-test: prints -->               this block is the stdout of the python block before
    <!-- docs-test: skip: <why> -->          not run (the reason is required)

Several directives go in one marker, separated by `;`. An expected output
line ending in ` (about)` matches any line whose numbers are within 10%; one
ending in ` (varies)`, any non-empty value of the same `name:` (a commit).

Usage: python tests/docs/docs_test.py [FILE.md ...]   (default: README.md docs/*.md)
Env: RL_VALKEY9 (server), RL_MODULE (module), RL_FAKETIME_LIB.
"""

import contextlib
import datetime
import glob
import io
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE_TIME = datetime.datetime(2026, 12, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
BASE_MS = int(BASE_TIME.timestamp() * 1000)
PROMPT = "127.0.0.1:6379> "
SHELL_CLI = "$ redis-cli"
# Prompt styles the docs no longer use; a block showing one fails.
OLD_PROMPTS = re.compile(r"^(redis-cli> |> [A-Z]|127\.0\.0\.1:\d+> )")
SNIPPET_SECONDS = 20
# The README stays one short read; details live in docs/.
README_MAX_LINES = 450
_real_sleep = time.sleep


def die(message):
    print(f"docs: {message}", file=sys.stderr)
    sys.exit(2)


def need_file(path, what, fix):
    if not os.path.isfile(path):
        die(f"{what} not found at {path} ({fix})")
    return path


# ---------------------------------------------------------------- markdown


@dataclass
class Block:
    path: str
    line: int  # 1-based line of the opening fence
    info: str
    text: str
    directives: dict = field(default_factory=dict)

    @property
    def where(self):
        return f"{os.path.relpath(self.path, ROOT)}:{self.line}"

    def kind(self):
        lines = self.text.splitlines()
        if self.info == "python":
            return "python"
        if any(l.startswith(PROMPT) or is_cli_line(l) for l in lines):
            return "session"
        return "other"


# `$ ` lines that run redis-cli, alone or in a pipeline, substitution or
# variable assignment.
CLI_WORD = re.compile(r"(?:^|[|;&(]\s*|=\$\()\s*redis-cli(?:\s|$)")
SHELL_SYNTAX = re.compile(r"[|<>;&`]|\$\(|\$\w|^\w+=")


def is_cli_line(line):
    return line.startswith("$ ") and CLI_WORD.search(line[2:]) is not None


def is_shell_line(line):
    return is_cli_line(line) and (SHELL_SYNTAX.search(line[2:]) is not None or "HOST" in line)


MARKER = re.compile(r"^<!--\s*docs-test:(.*?)-->\s*$")


def parse_directives(text, where):
    out = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        if part.startswith("skip:"):
            reason = part[len("skip:") :].strip()
            if not reason:
                raise ValueError(f"{where}: a skip marker must say why")
            out["skip"] = reason
        elif part in ("continue", "fresh", "prints", "cluster"):
            out[part] = True
        elif part.startswith("load-args "):
            out["load-args"] = part[len("load-args ") :].split()
        elif m := re.fullmatch(r"advance (\d+)ms(?: before (\d+))?", part):
            out.setdefault("advance", []).append((int(m[2] or 1), int(m[1])))
        else:
            raise ValueError(f"{where}: unknown docs-test directive '{part}'")
    return out


def read_blocks(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    blocks, pending, i = [], {}, 0
    while i < len(lines):
        line = lines[i]
        if m := MARKER.match(line.strip()):
            pending.update(parse_directives(m[1], f"{path}:{i + 1}"))
        elif line.startswith("```"):
            info = line[3:].strip()
            start, body = i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            blocks.append(Block(path, start, info, "\n".join(body), pending))
            pending = {}
        elif line.strip() and pending:
            raise ValueError(f"{path}:{i + 1}: a docs-test marker must come right before a block")
        i += 1
    return blocks


LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading):
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    text = re.sub(r"^```.*?^```", "", open(path, encoding="utf-8").read(), flags=re.M | re.S)
    return {slug(m[1]) for m in re.finditer(r"^#+ (.*)$", text, flags=re.M)}


def broken_links(path):
    """Relative links to files or headings that do not exist."""
    text = re.sub(r"^```.*?^```", "", open(path, encoding="utf-8").read(), flags=re.M | re.S)
    bad = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # another site
        file, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            bad.append(f"{target}: no such file")
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            bad.append(f"{target}: no such heading")
    return bad


# ------------------------------------------------------------------ server


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """Valkey with the module and the function edition (functions/rl.lua),
    its clock stopped at a time we write to a file."""

    def __init__(self, binary, module, faketime, load_args, cluster=False, real_clock=False):
        self.dir = tempfile.mkdtemp(prefix="rl-docs-")
        self.real_clock = real_clock
        self.clock_file = os.path.join(self.dir, "faketime")
        self.load_args = list(load_args)
        self.cluster = cluster
        # The bus on a port of its own: port + 10000 may be taken or too high.
        node = ["--cluster-enabled", "yes", "--cluster-port", str(free_port())] if cluster else []
        self.set_clock(BASE_MS)
        env = dict(
            os.environ,
            TZ="UTC",
            LD_PRELOAD=faketime,
            FAKETIME_TIMESTAMP_FILE=self.clock_file,
            FAKETIME_NO_CACHE="1",
            # The monotonic clock stops too: Valkey adds it to the wall clock
            # for microseconds (RL.THROTTLE). Its timers (serverCron) then
            # wait for the clock to move, which nothing here needs.
        )
        if real_clock:
            env = dict(os.environ, TZ="UTC")
        for _ in range(5):
            self.port = free_port()
            log = os.path.join(self.dir, f"server-{self.port}.log")
            cmd = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                   "--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", log,
                   *node, "--loadmodule", module, *self.load_args]
            self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            if self._ready():
                break
            self.proc.kill()
            self.proc.wait()
            text = open(log).read() if os.path.exists(log) else ""
            if "Address already in use" not in text:
                die(f"{binary} did not start; its log:\n{text}")
        else:
            die(f"{binary} found no free port")
        self.client = self.connect()
        if cluster:
            self.client.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
            deadline = time.monotonic() + 20
            while b"cluster_state:ok" not in self.client.execute_command("CLUSTER", "INFO"):
                if time.monotonic() > deadline:
                    self.stop()
                    die("the one-node cluster did not reach cluster_state:ok")
                # The cluster's state is updated by timers, which wait for
                # the stopped clock to move.
                self.set_clock(self.now_ms + 100)
                _real_sleep(0.05)
            self.set_clock(BASE_MS)
        now = self.client.time()
        if not real_clock and now != (BASE_MS // 1000, 0):
            self.stop()
            die(f"the server's clock is not the stopped one ({now}): is {faketime} working?")
        # FLUSHALL between blocks keeps functions: loaded once per server.
        with open(os.path.join(ROOT, "functions", "rl.lua")) as f:
            self.client.function_load(f.read(), replace=True)

    def _ready(self):
        import redis

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if redis.Redis(port=self.port, socket_timeout=2).ping():
                    return True
            except redis.ConnectionError:
                _real_sleep(0.02)
        return False

    def connect(self):
        import redis

        return redis.Redis(port=self.port, socket_timeout=30)

    def set_clock(self, ms):
        self.now_ms = ms
        if self.real_clock:
            return
        t = datetime.datetime.fromtimestamp(ms // 1000, tz=datetime.timezone.utc)
        part = self.clock_file + ".part"
        with open(part, "w") as f:
            # libfaketime reads the fraction as a double: 500 ns more keeps
            # .267 from coming out as 266.999999 ms (and µs stay whole).
            f.write(t.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d}000500\n")
        os.replace(part, self.clock_file)  # the server never reads half a file

    def reset(self):
        self.client.flushall()
        self.set_clock(BASE_MS)

    def stop(self):
        # Through redis-cli: redis-py would retry the closed connection.
        subprocess.run(["redis-cli", "-p", str(self.port), "SHUTDOWN", "NOSAVE"],
                       capture_output=True, timeout=10)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


# ------------------------------------------------------------------ runners


class Failure(Exception):
    pass


def run_python(block, server, protocol, expected, real_clock=False):
    import redis

    original = redis.Redis.__init__

    def pointed_at_test_server(self, *args, **kw):
        # Whatever host and port the snippet names (positional or not).
        kw.update(host="127.0.0.1", port=server.port, protocol=protocol)
        original(self, *args[2:], **kw)

    def sleep_on_server_clock(seconds):
        server.set_clock(server.now_ms + int(round(seconds * 1000)))

    def timeout(*_):
        raise Failure(f"still running after {SNIPPET_SECONDS} s")

    out = io.StringIO()
    redis.Redis.__init__ = pointed_at_test_server
    if not real_clock:
        time.sleep = sleep_on_server_clock
    signal.signal(signal.SIGALRM, timeout)
    signal.alarm(SNIPPET_SECONDS)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(block.text, block.where, "exec"), {"__name__": "__docs__"})
    except Failure:
        raise
    except BaseException as e:  # a snippet's own exit or error is a failure
        lines = [f.lineno for f in traceback.extract_tb(e.__traceback__)
                 if f.filename == block.where]
        at = f" (snippet line {lines[-1]})" if lines else ""
        raise Failure(f"RESP{protocol}: {type(e).__name__}: {e}{at}") from e
    finally:
        signal.alarm(0)
        time.sleep = _real_sleep
        redis.Redis.__init__ = original
    if expected is not None and not same_output(expected, out.getvalue()):
        raise Failure(f"RESP{protocol}: printed\n{indent(out.getvalue())}\nthe docs show\n"
                      f"{indent(expected)}")


def session_steps(block):
    """(command line, expected output) pairs."""
    steps = []
    for line in block.text.splitlines():
        if line.startswith(PROMPT) or is_cli_line(line):
            steps.append([line, []])
        elif OLD_PROMPTS.match(line) or (line.startswith("$ ") and steps):
            raise Failure(f"'{line}': sessions use `{PROMPT}` (or `$ redis-cli`), one command a line")
        elif not steps:
            raise Failure(f"'{line}' comes before the first command")
        else:
            steps[-1][1].append(line)
    return [(cmd, "\n".join(out)) for cmd, out in steps]


def in_shell(server, command, assignments):
    """A shell line as written, on a terminal, with `redis-cli` the test
    server's: what it printed."""
    import pty

    wrapper = os.path.join(server.dir, "bin")
    if not os.path.isdir(wrapper):
        os.makedirs(wrapper)
        cli = os.path.join(wrapper, "redis-cli")
        with open(cli, "w") as f:
            f.write(f'#!/bin/sh\nexec {shutil.which("redis-cli")} -p {server.port} "$@"\n')
        os.chmod(cli, 0o755)
    line = (command[len("$ ") :].replace("-h HOST -p PORT", f"-h 127.0.0.1 -p {server.port}")
            .replace("HOST:PORT", f"127.0.0.1:{server.port}"))
    script = "\n".join([*assignments, line])
    master, slave = pty.openpty()
    proc = subprocess.Popen(["bash", "-eo", "pipefail", "-c", script], cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave,
                            env=dict(os.environ, PATH=wrapper + os.pathsep + os.environ["PATH"]))
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    proc.wait(timeout=30)
    return out.decode().replace("\r\n", "\n")


def redis_cli(server, command):
    base = ["redis-cli", "-p", str(server.port), "--no-raw"]
    if command.startswith(PROMPT):
        # Through the prompt's own line splitting (quotes as typed).
        run = subprocess.run(base, input=command[len(PROMPT) :] + "\n", capture_output=True,
                             text=True, timeout=30)
    else:
        args = shlex.split(command[len("$ ") :])[1:]
        # `-p 6379` names the default server, as `make run` prints it; any
        # other address is not the test server.
        if args[:2] == ["-p", "6379"]:
            args = args[2:]
        if any(a in ("-p", "-h", "-u") for a in args):
            raise Failure(f"'{command}': the docs talk to the default server; only -p 6379")
        run = subprocess.run(base + args, capture_output=True, text=True, timeout=30)
    return run.stdout + run.stderr


def run_session(block, server):
    advance = dict(block.directives.get("advance", []))
    assignments = []
    for n, (command, expected) in enumerate(session_steps(block), start=1):
        if n in advance:
            server.set_clock(server.now_ms + advance[n])
        if is_shell_line(command):
            got = in_shell(server, command, assignments)
            if re.match(r"^\$ \w+=", command):
                assignments.append(command[len("$ ") :])
            expected = expected.replace("HOST:PORT", f"127.0.0.1:{server.port}")
        else:
            got = redis_cli(server, command)
        if not same_output(expected, got):
            raise Failure(f"command {n}: {command}\n  got:\n{indent(got)}\n  the docs show:\n"
                          f"{indent(expected)}")


NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def same_line(expected, got):
    if expected.endswith(" (varies)"):
        # `rl_commit:4628ff7a1b2c (varies)`: the build's own value.
        name = expected.split(":", 1)[0] + ":"
        return got.startswith(name) and len(got) > len(name)
    if expected.endswith(" (about)"):
        expected = expected[: -len(" (about)")].rstrip()
        if NUMBER.sub("#", expected) != NUMBER.sub("#", got):
            return False
        pairs = zip(NUMBER.findall(expected), NUMBER.findall(got))
        return all(abs(float(a) - float(b)) <= abs(float(a)) * 0.1 for a, b in pairs)
    return expected == got


def same_output(expected, got):
    e = [l.rstrip() for l in expected.rstrip("\n").splitlines()]
    g = [l.rstrip() for l in got.rstrip("\n").splitlines()]
    return len(e) == len(g) and all(same_line(a, b) for a, b in zip(e, g))


def indent(text):
    return "\n".join("    | " + l for l in text.rstrip("\n").splitlines()) or "    | (nothing)"


# --------------------------------------------------------------------- main


def main(argv):
    try:
        import redis
    except ImportError:
        die("redis-py is missing from this Python: run make deps (tests use .deps/venv)")
    if int(redis.__version__.split(".")[0]) < 8:
        die(f"redis-py {redis.__version__} found, the docs target redis-py 8: run make deps")
    binary = need_file(os.environ.get("RL_VALKEY9", os.path.join(ROOT, ".deps/valkey/valkey-server")),
                       "valkey-server", "run make deps or set RL_VALKEY9")
    module = os.path.abspath(need_file(
        os.environ.get("RL_MODULE", os.path.join(ROOT, "target/release/librl.so")),
        "the module", "run make build or set RL_MODULE"))
    faketime = need_file(os.environ.get("RL_FAKETIME_LIB",
                                        "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"),
                         "libfaketime", "run make deps (apt-get install faketime)")
    if shutil.which("redis-cli") is None:
        die("redis-cli not found (run make deps)")

    files = argv or [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "*.md")))
    blocks = []
    try:
        for path in files:
            blocks += read_blocks(path)
    except ValueError as e:
        die(str(e))

    passed, failed, skipped = 0, 0, []
    for path in files:
        for bad in broken_links(path):
            failed += 1
            print(f"FAIL {os.path.relpath(path, ROOT)}: broken link {bad}")
        if os.path.relpath(path, ROOT) == "README.md":
            lines = open(path, encoding="utf-8").read().count("\n")
            if lines >= README_MAX_LINES:
                failed += 1
                print(f"FAIL README.md: {lines} lines, at most {README_MAX_LINES - 1}: "
                      "details belong in docs/, the README keeps a line and a link")
    server, previous_python = None, None
    started = time.monotonic()
    try:
        for block in blocks:
            d, kind = block.directives, block.kind()
            if "prints" in d:
                continue  # compared with the python block before it
            if kind == "other":
                bad = [l for l in block.text.splitlines() if OLD_PROMPTS.match(l)]
                if bad:
                    failed += 1
                    print(f"FAIL {block.where}: '{bad[0]}' is not a session line "
                          f"(sessions start with `{PROMPT}` or `$ redis-cli`)")
                continue
            if "skip" in d:
                skipped.append(f"{block.where} ({d['skip']})")
                continue
            args = d.get("load-args", [])
            cluster = bool(d.get("cluster"))
            if server is None or d.get("fresh") or args != server.load_args or cluster != server.cluster:
                if server:
                    server.stop()
                server = Server(binary, module, faketime, args, cluster)
            elif not d.get("continue"):
                server.reset()
            try:
                if kind == "python":
                    expected = printed_by(blocks, block)
                    run_python(block, server, 2, expected)
                    server.reset()
                    run_python(block, server, 3, expected)
                else:
                    run_session(block, server)
                passed += 1
                print(f"ok   {block.where} {kind}")
            except Failure as e:
                failed += 1
                print(f"FAIL {block.where} {kind}: {e}")
        # Again on a server with the real clock and real sleeps, as a reader
        # runs them: an example must not hold only on the stopped clock.
        if server:
            server.stop()
        server = None
        for block in blocks:
            d = block.directives
            if block.kind() != "python" or "skip" in d or "prints" in d:
                continue
            args = d.get("load-args", [])
            if server is None or args != server.load_args:
                if server:
                    server.stop()
                server = Server(binary, module, faketime, args, real_clock=True)
            else:
                server.reset()
            try:
                run_python(block, server, 3, printed_by(blocks, block), real_clock=True)
                passed += 1
                print(f"ok   {block.where} python (real clock)")
            except Failure as e:
                failed += 1
                print(f"FAIL {block.where} python (real clock): {e}")
    finally:
        if server:
            server.stop()
    for s in skipped:
        print(f"skip {s}")
    print(f"docs: {len(skipped)} skipped, {time.monotonic() - started:.1f} s")
    print(f"docs: {passed} snippets/sessions passed, {failed} failed")
    return 1 if failed else 0


def printed_by(blocks, block):
    """The block marked `prints` right after this python block, if any."""
    i = blocks.index(block)
    if i + 1 < len(blocks) and "prints" in blocks[i + 1].directives:
        return blocks[i + 1].text
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

'use strict';
// Real servers on free loopback ports, one directory each under
// target/test-servers/, stopped by the test that started them.
//   redis7:  /usr/bin/redis-server with the module (target/release/librl.so)
//   redis8:  .deps/redis8/redis-server with the module
//   valkey9: .deps/valkey/valkey-server with only the function library
//            (FUNCTION LOAD of functions/rl.lua), or bare (neither edition),
//            or with the module (valkey9-module)
//   redis7-library: Redis 7.0 with only the function library
const fs = require('fs');
const net = require('net');
const path = require('path');
const { spawn } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const BINARIES = {
  redis7: process.env.RL_REDIS7 || '/usr/bin/redis-server',
  redis8: process.env.RL_REDIS8 || path.join(ROOT, '.deps', 'redis8', 'redis-server'),
  valkey9: process.env.RL_VALKEY9 || path.join(ROOT, '.deps', 'valkey', 'valkey-server'),
};
const MODULE = process.env.RL_MODULE || path.join(ROOT, 'target', 'release', 'librl.so');
const LIBRARY = path.join(ROOT, 'functions', 'rl.lua');
const FAKETIME = process.env.RL_FAKETIME_LIB || '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

function need(file, what, fix) {
  if (!fs.existsSync(file)) throw new Error(`${what} not found at ${file} (${fix})`);
  return file;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// A minimal RESP client for the tests' own checks (independent of the
// clients under test): send one command, read one reply.
function encode(args) {
  let out = `*${args.length}\r\n`;
  for (const a of args) {
    const b = Buffer.from(String(a));
    out += `$${b.length}\r\n${b}\r\n`;
  }
  return out;
}

function parse(buf, i = 0) {
  const end = buf.indexOf('\r\n', i);
  if (end < 0) return null;
  const type = String.fromCharCode(buf[i]);
  const line = buf.toString('utf8', i + 1, end);
  const next = end + 2;
  if (type === '+') return { value: line, next };
  if (type === '-') return { value: new Error(line), next };
  if (type === ':') return { value: Number(line), next };
  if (type === '$') {
    const n = Number(line);
    if (n < 0) return { value: null, next };
    if (buf.length < next + n + 2) return null;
    return { value: buf.toString('utf8', next, next + n), next: next + n + 2 };
  }
  if (type === '*') {
    const n = Number(line);
    if (n < 0) return { value: null, next };
    const arr = [];
    let at = next;
    for (let k = 0; k < n; k++) {
      const item = parse(buf, at);
      if (!item) return null;
      arr.push(item.value);
      at = item.next;
    }
    return { value: arr, next: at };
  }
  throw new Error(`unexpected reply type ${type}`);
}

class Raw {
  constructor(port) {
    this.port = port;
  }

  connect() {
    return new Promise((resolve, reject) => {
      this.sock = net.connect(this.port, '127.0.0.1', () => resolve(this));
      this.sock.once('error', reject);
      this.buf = Buffer.alloc(0);
      this.waiting = [];
      this.sock.on('data', (d) => {
        this.buf = Buffer.concat([this.buf, d]);
        for (;;) {
          if (this.onLine) {
            const nl = this.buf.indexOf('\r\n');
            if (nl < 0) break;
            this.onLine(this.buf.toString('utf8', 0, nl));
            this.buf = this.buf.subarray(nl + 2);
            continue;
          }
          const r = this.buf.length ? parse(this.buf) : null;
          if (!r) break;
          this.buf = this.buf.subarray(r.next);
          const w = this.waiting.shift();
          if (w) w(r.value);
        }
      });
    });
  }

  call(...args) {
    return new Promise((resolve, reject) => {
      this.waiting.push((v) => (v instanceof Error ? reject(v) : resolve(v)));
      this.sock.write(encode(args));
    });
  }

  close() {
    if (this.sock) this.sock.destroy();
  }
}

async function raw(port) {
  return new Raw(port).connect();
}

// MONITOR on its own connection: the commands clients send, without those a
// script or function runs inside the server (Redis and Valkey tag those
// `[0 lua]`), and without the monitor's own.
async function monitor(port) {
  const m = new Raw(port);
  await m.connect();
  await m.call('MONITOR');
  const lines = [];
  m.onLine = (line) => {
    if (line.startsWith('+') && !/\[\d+ lua\]/.test(line)) lines.push(line.slice(1));
  };
  return {
    lines,
    // Commands seen so far (a PING marker makes sure the stream caught up).
    async settle() {
      const marker = `rl-marker-${Math.random()}`;
      const r = await raw(port);
      await r.call('ECHO', marker);
      r.close();
      const deadline = Date.now() + 5000;
      while (!lines.some((l) => l.includes(marker))) {
        if (Date.now() > deadline) throw new Error('MONITOR did not show the marker');
        await new Promise((res) => setTimeout(res, 10));
      }
      const seen = lines.splice(0).filter((l) => !l.includes(marker));
      return seen.map((l) => l.replace(/^\S+ \[[^\]]*\] /, ''));
    },
    close: () => m.close(),
  };
}

// `ms` as libfaketime's absolute time: `YYYY-MM-DD HH:MM:SS.mmm000500`
// (half a µs past the ms, so the double it is read as is not a µs short).
function faketimeText(ms) {
  const d = new Date(ms);
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)}000500\n`;
}

let serial = 0;

/**
 * kind: 'redis7', 'redis8', 'valkey9-module' (module) | 'valkey9',
 * 'redis7-library' (library) | 'valkey9-bare' (neither).
 * clock: stop the server's clock (Valkey only), moved with advance(ms).
 * port: this port (a server restarted under running clients), else a free one.
 */
async function start(kind, { clock = false, args: extra = [], port: fixedPort } = {}) {
  const flavor = kind.startsWith('valkey9') ? 'valkey9' : kind.replace(/-library$/, '');
  const binary = need(BINARIES[flavor], `the ${flavor} server`, 'run make deps');
  const args = [];
  if (['redis7', 'redis8', 'valkey9-module'].includes(kind)) args.push('--loadmodule', need(MODULE, 'the module', 'run cargo build --release'));
  if (clock && flavor !== 'valkey9') throw new Error('a stopped clock needs Valkey (Redis 7.0 crashes under libfaketime)');
  const dir = path.join(ROOT, 'target', 'test-servers', `node-${process.pid}-${kind}-${serial++}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const env = { ...process.env };
  let now = Date.now();
  const clockFile = path.join(dir, 'faketime');
  if (clock) {
    need(FAKETIME, 'libfaketime', 'run make deps: apt-get install faketime');
    fs.writeFileSync(clockFile, faketimeText(now));
    Object.assign(env, { TZ: 'UTC', LD_PRELOAD: FAKETIME, FAKETIME_TIMESTAMP_FILE: clockFile, FAKETIME_NO_CACHE: '1' });
  }
  let lastLog = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = fixedPort || (await freePort());
    const log = path.join(dir, `server-${port}.log`);
    const child = spawn(binary, ['--port', port, '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', log, ...args, ...extra].map(String), {
      env,
      stdio: 'ignore',
    });
    let exited = false;
    child.on('exit', () => {
      exited = true;
    });
    const deadline = Date.now() + 20000;
    let up = false;
    while (!exited && Date.now() < deadline) {
      try {
        const r = await raw(port);
        const pong = await r.call('PING');
        r.close();
        if (pong === 'PONG') {
          up = true;
          break;
        }
      } catch {
        // not listening yet
      }
      await new Promise((res) => setTimeout(res, 25));
    }
    if (up) {
      const server = {
        kind,
        port,
        url: `redis://127.0.0.1:${port}`,
        dir,
        raw: () => raw(port),
        monitor: () => monitor(port),
        async call(...a) {
          const r = await raw(port);
          try {
            return await r.call(...a);
          } finally {
            r.close();
          }
        },
        now: () => now,
        // Moves a stopped clock; renamed into place so the server never reads half a file.
        advance(ms) {
          if (!clock) throw new Error('this server runs on the real clock');
          now += ms;
          fs.writeFileSync(`${clockFile}.part`, faketimeText(now));
          fs.renameSync(`${clockFile}.part`, clockFile);
        },
        // Kills the server and removes its directory (its log included:
        // a failing test's message carries what it needs).
        async stop() {
          if (!exited) {
            const gone = new Promise((res) => child.once('exit', res));
            child.kill('SIGKILL');
            await gone;
          }
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
      if (kind === 'valkey9' || kind.endsWith('-library')) await server.call('FUNCTION', 'LOAD', fs.readFileSync(LIBRARY, 'utf8'));
      if (clock) {
        const [s, us] = await server.call('TIME');
        if (Number(s) * 1000 + Math.floor(Number(us) / 1000) !== now) {
          await server.stop();
          throw new Error(`the server's clock is not the stopped one: is ${FAKETIME} working?`);
        }
      }
      return server;
    }
    lastLog = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
    child.kill('SIGKILL');
    if (!lastLog.includes('Address already in use')) break;
    if (fixedPort) await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error(`${kind} did not start; its log:\n${lastLog}`);
}

// Stops `server` and starts one of `kind` on its port: the server changes
// under clients that stay connected to that address (and reconnect).
async function restartAs(server, kind) {
  await server.stop();
  return start(kind, { port: server.port });
}

// A cluster of `n` primaries, each a server of `kind`, slots split evenly.
async function startCluster(kind, n = 3) {
  const nodes = [];
  try {
    for (let i = 0; i < n; i++) nodes.push(await start(kind, { args: ['--cluster-enabled', 'yes', '--cluster-node-timeout', '5000'] }));
    const per = Math.ceil(16384 / n);
    for (let i = 0; i < n; i++) {
      await nodes[i].call('CLUSTER', 'ADDSLOTSRANGE', i * per, Math.min(16383, (i + 1) * per - 1));
    }
    for (let i = 1; i < n; i++) await nodes[0].call('CLUSTER', 'MEET', '127.0.0.1', nodes[i].port);
    const deadline = Date.now() + 30000;
    for (;;) {
      const states = await Promise.all(nodes.map(async (node) => {
        const info = await node.call('CLUSTER', 'INFO');
        const known = (await node.call('CLUSTER', 'NODES')).trim().split('\n').length;
        return /cluster_state:ok/.test(info) && known === n;
      }));
      if (states.every(Boolean)) break;
      if (Date.now() > deadline) throw new Error(`the ${kind} cluster did not come up`);
      await new Promise((res) => setTimeout(res, 100));
    }
  } catch (err) {
    for (const node of nodes) await node.stop();
    throw err;
  }
  return {
    nodes,
    rootNodes: nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
    stop: async () => {
      for (const node of nodes) await node.stop();
    },
  };
}

module.exports = { start, restartAs, startCluster, raw, ROOT, LIBRARY };

'use strict';
// 8 processes share one limit: exactly `limit` admitted in the window, on
// either edition, through each adapter.
const path = require('path');
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('child_process');
const servers = require('./helpers/servers');

const WORKERS = 8;
const LIMIT = 37;
const TRIES = 10;

function startWorker(args) {
  const child = spawn(process.execPath, [path.join(__dirname, 'helpers', 'worker.js'), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', () => out.includes('ready\n') && resolve());
    child.once('close', (code) => reject(new Error(`worker exited ${code} before it was ready: ${err}`)));
  });
  // 'close', not 'exit': a child may exit before its last output is read.
  const done = new Promise((resolve, reject) => {
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`worker exited ${code}: ${err}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()).admitted);
      } catch (e) {
        reject(new Error(`worker printed no count (${e.message}): ${out}${err}`));
      }
    });
  });
  return { ready, done, go: () => child.stdin.write('go\n') };
}

const CASES = [
  ['redis7', 'flexible', 'ioredis'],
  ['redis7', 'express', 'redis5'],
  ['valkey9', 'flexible', 'redis4'],
  ['valkey9', 'express', 'ioredis'],
];

for (const [kind, mode, client] of CASES) {
  test(`${kind}, ${mode} (${client}): ${WORKERS} processes sharing a limit of ${LIMIT} admit exactly ${LIMIT}`, async () => {
    const server = await servers.start(kind);
    try {
      const workers = Array.from({ length: WORKERS }, () => startWorker([mode, server.url, client, LIMIT, TRIES]));
      await Promise.all(workers.map((w) => w.ready));
      for (const w of workers) w.go();
      const admitted = await Promise.all(workers.map((w) => w.done));
      assert.equal(admitted.reduce((a, b) => a + b, 0), LIMIT, `admitted per process: ${admitted}`);
      // The hits were spread over the processes, not taken by the first one.
      assert.ok(admitted.filter((n) => n > 0).length > 1, `admitted per process: ${admitted}`);
    } finally {
      await server.stop();
    }
  });
}

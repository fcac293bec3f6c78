'use strict';
// The docs' ```js blocks, and the code that drives a block's limiter or app
// past its limit once it has run (appended to the block, in its module).
const fs = require('fs');
const path = require('path');
const assert = require('node:assert/strict');
const servers = require('./servers');

function jsBlocks(file, from, to) {
  const text = fs.readFileSync(path.join(servers.ROOT, file), 'utf8');
  const start = text.indexOf(from);
  assert.ok(start >= 0, `${file} has no "${from}"`);
  const end = to ? text.indexOf(to, start + from.length) : -1;
  const section = text.slice(start, end < 0 ? undefined : end);
  const before = text.slice(0, start).split('\n').length;
  const blocks = [];
  const re = /^```js\n([\s\S]*?)^```$/gm;
  let m;
  while ((m = re.exec(section))) {
    blocks.push({ where: `${file}:${before + section.slice(0, m.index).split('\n').length - 1}`, code: m[1] });
  }
  return blocks;
}

// Runs after the snippet, in its module: drives what it set up.
const DRIVER = `
;{
  const { RateLimiterRes } = await import('rate-limiter-flexible');
  let checked = 0;
  if (typeof limiter !== 'undefined') {
    let admitted = 0;
    for (let i = 0; i <= limiter.points; i++) {
      try { await limiter.consume('docs-user'); admitted++; }
      catch (e) { if (!(e instanceof RateLimiterRes)) throw e; }
    }
    if (admitted !== limiter.points) throw new Error('limiter admitted ' + admitted + ' of ' + limiter.points);
    checked++;
  }
  if (typeof app !== 'undefined') {
    const limit = Number(process.env.DOCS_LIMIT);
    const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    const codes = [];
    for (let i = 0; i <= limit; i++) {
      const res = await fetch('http://127.0.0.1:' + server.address().port + '/');
      await res.text();
      codes.push(res.status);
    }
    server.close();
    const passed = codes.filter((c) => c !== 429).length;
    if (passed !== limit || codes[limit] !== 429) throw new Error('app: ' + passed + ' of ' + limit + ' passed, then ' + codes[limit]);
    checked++;
  }
  if (checked === 0) throw new Error('the snippet set up neither a limiter nor an app');
  process.exit(0);
}
`;

// The `$ ` lines of the first plain block of `file` after the line holding `marker`.
function shellLines(file, marker) {
  const text = fs.readFileSync(path.join(servers.ROOT, file), 'utf8');
  const at = text.indexOf(marker);
  assert.ok(at >= 0, `${file} has no "${marker}"`);
  const m = /^```\n([\s\S]*?)^```$/m.exec(text.slice(at));
  assert.ok(m, `${file}: no block after "${marker}"`);
  return m[1].split('\n').filter((l) => l.startsWith('$ ')).map((l) => l.slice(2));
}

module.exports = { jsBlocks, shellLines, DRIVER };

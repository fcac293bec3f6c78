'use strict';
// Which edition of rl a server runs, found once per client (or store) and
// remembered: the module's commands (RL.*) where it is loaded, else the
// function library (FCALL rl_*), else the library loaded here when the user
// allowed it, else an error saying how to load one of them.
const fs = require('fs');
const path = require('path');

// The library this package ships. Installed from a checkout of the
// repository as a link (`npm install ./clients/node`), the package is the
// checkout's clients/node and the library is the checkout's
// functions/rl.lua, whatever an earlier `npm pack` left beside
// package.json; packed, it is the rl.lua `npm pack` copied in.
function libraryPath() {
  const pkg = path.join(__dirname, '..');
  const checkout = path.join(pkg, '..', '..', 'functions', 'rl.lua');
  const inCheckout = path.basename(pkg) === 'node' && path.basename(path.dirname(pkg)) === 'clients';
  const candidates = inCheckout ? [checkout] : [path.join(pkg, 'rl.lua')];
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) {
    throw new Error(`rl-stores: the function library is not in this package (looked for ${candidates.join(', ')})`);
  }
  return found;
}

function libraryCode() {
  return fs.readFileSync(libraryPath(), 'utf8');
}

const str = (args) => args.map(String);

// The module: RL.SLIDE key ..., RL.PEEK SLIDE key ..., RL.ALL n keys... clauses...
const MODULE = {
  name: 'module',
  command: (name, key, params) => str([`RL.${name.toUpperCase()}`, key, ...params]),
  named: (verb, limiter, key, params) => str([`RL.${verb.toUpperCase()}`, limiter, key, ...params]),
  all: (keys, clauses) => str(['RL.ALL', keys.length, ...keys, ...clauses]),
};

// The library: FCALL rl_slide 1 key ..., FCALL_RO rl_peek 1 key SLIDE ..., FCALL rl_all n keys... clauses...
const FUNCTIONS = {
  name: 'functions',
  command: (name, key, params) => str(['FCALL', `rl_${name.toLowerCase()}`, 1, key, ...params]),
  named: (verb, limiter, key, params) =>
    str([verb === 'peek' ? 'FCALL_RO' : 'FCALL', `rl_${verb}`, 1, key, limiter, ...params]),
  all: (keys, clauses) => str(['FCALL', 'rl_all', keys.length, ...keys, ...clauses]),
};

class RlNotLoadedError extends Error {}

function notLoaded() {
  return new RlNotLoadedError(
    'rl is not loaded on this server: it has neither the module (RL.SLIDE, ...) nor the function library (FCALL rl_slide). ' +
      'Load the module (`loadmodule /path/to/librl.so` in the server\'s config, or MODULE LOAD), ' +
      'or the library (`redis-cli -x FUNCTION LOAD REPLACE < functions/rl.lua`, on every primary of a cluster), ' +
      'or pass `loadFunctions: true` to let rl-stores load the copy it ships.'
  );
}

const message = (err) => String((err && err.message) || err);

// The probe is a read through rl itself, on a key under the adapter's
// prefix, so a user granted only rl's commands and keys (`+@ratelimit
// ~rl:*`) can make it: COMMAND is outside @ratelimit. It writes nothing.
// A server without the module answers "unknown command" before any ACL
// check; a user refused RL.PEEK may still be allowed the library's FCALL.
async function hasModule(transport, probeKey) {
  try {
    await transport.send(probeKey, ['RL.PEEK', 'SLIDE', probeKey, '1', '1000'], true);
    return true;
  } catch (err) {
    if (/unknown command|^NOPERM/i.test(message(err))) return false;
    throw err;
  }
}

async function hasLibrary(transport) {
  try {
    await transport.keyless(['FCALL_RO', 'rl_version', '0']);
    return true;
  } catch (err) {
    if (/Function not found|unknown command/i.test(message(err))) return false;
    throw err;
  }
}

async function loadLibrary(transport) {
  const code = libraryCode();
  for (const node of await transport.primaries()) {
    try {
      await node.keyless(['FUNCTION', 'LOAD', code]);
    } catch (err) {
      // Another process loaded it first: the same library, or a newer one
      // someone loaded on purpose; either is kept.
      if (!/already exists/i.test(message(err))) throw err;
    }
  }
}

async function detect(transport, { loadFunctions, probeKey }) {
  if (await hasModule(transport, probeKey)) return MODULE;
  if (await hasLibrary(transport)) return FUNCTIONS;
  if (!loadFunctions) throw notLoaded();
  await loadLibrary(transport);
  if (await hasLibrary(transport)) return FUNCTIONS;
  throw notLoaded();
}

// Per owner (a client object, or a store): one detection at a time, and its
// result kept. A failure is not kept, so a server that was down, or got rl
// loaded since, is probed again by the next call.
const found = new WeakMap();

function editionFor(owner, transport, options) {
  let pending = found.get(owner);
  if (!pending) {
    pending = detect(transport, options);
    found.set(owner, pending);
    pending.catch(() => {
      if (found.get(owner) === pending) found.delete(owner);
    });
  }
  return pending;
}

module.exports = { editionFor, libraryPath, libraryCode, MODULE, FUNCTIONS, RlNotLoadedError };

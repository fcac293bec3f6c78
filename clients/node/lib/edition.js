'use strict';
// Which edition of rl a server runs, found once per client (or store) and
// remembered: the module's commands (RL.*) where it is loaded, else the
// function library (FCALL rl_*), else the library loaded here when the user
// allowed it, else an error saying how to load one of them. Found again when
// the server answers that the remembered edition is not there (a server
// restarted with the other edition under a running app).
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

const VERSION = require('../package.json').version;

function notLoaded() {
  return new RlNotLoadedError(
    'rl is not loaded on this server: it has neither the module (RL.SLIDE, ...) nor the function library (FCALL rl_slide). ' +
      'Load the module (`loadmodule /path/to/librl.so` in the server\'s config, or MODULE LOAD), ' +
      `or the library: \`redis-cli -x FUNCTION LOAD REPLACE < rl-${VERSION}.lua\` (the release's file; ` +
      'from a checkout of rl, functions/rl.lua or `make load-functions`), on every primary of a cluster; ' +
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

// Per owner (a client object, or a store): one detection at a time, shared
// by every call that needs it (a burst of first calls sends one probe), and
// its result kept. A failure is not kept, so a server that was down, or got
// rl loaded since, is probed again by the next call.
const found = new WeakMap();
// Owners told (once, until an edition is found again) that rl is not loaded:
// the warning says what to load and how; each call still rejects.
const warned = new WeakSet();

function editionFor(owner, transport, options) {
  let entry = found.get(owner);
  if (!entry) {
    const mine = { edition: undefined };
    mine.pending = detect(transport, options).then(
      (edition) => {
        mine.edition = edition;
        warned.delete(owner);
        return edition;
      },
      (err) => {
        if (found.get(owner) === mine) found.delete(owner);
        if (err instanceof RlNotLoadedError && !warned.has(owner)) {
          warned.add(owner);
          process.emitWarning(err.message, { code: 'RL_NOT_LOADED' });
        }
        throw err;
      }
    );
    found.set(owner, mine);
    entry = mine;
  }
  return entry.pending;
}

// The server's answer when the edition a command was built for is not there:
// the module's command unknown, or the library's function (or FCALL) unknown.
function isMissing(err, edition) {
  const text = message(err);
  if (edition === MODULE) return /unknown command/i.test(text);
  return /Function not found|unknown command/i.test(text);
}

// Sends the command `build` makes for the owner's edition. When the server
// answers that this edition is not there (restarted with the other one, or
// with neither), the edition is found again, once for all the calls that
// met the same answer, and the command is sent once more in the edition
// found; with neither, the call rejects with RlNotLoadedError.
async function sendIn(owner, transport, find, key, build, readonly) {
  const edition = await find();
  try {
    return await transport.send(key, build(edition), readonly);
  } catch (err) {
    if (!isMissing(err, edition)) throw err;
    // Unless another call already found the edition again.
    const entry = found.get(owner);
    if (entry && entry.edition === edition) found.delete(owner);
    return transport.send(key, build(await find()), readonly);
  }
}

module.exports = { editionFor, sendIn, libraryPath, libraryCode, MODULE, FUNCTIONS, RlNotLoadedError };

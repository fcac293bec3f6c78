'use strict';
// The ACL recipes as the docs write them, read at test time so a test runs
// what a reader copies: the README's module recipe, docs/operations.md's
// function-edition recipe, and its line of grants for each cluster client.
const fs = require('fs');
const path = require('path');
const assert = require('node:assert/strict');
const { ROOT } = require('./servers');

function read(file) {
  return fs.readFileSync(path.join(ROOT, file), 'utf8');
}

// The README's `ACL SETUSER ...` line (the module's), as words.
function moduleRecipe() {
  const m = read('README.md').match(/`(ACL SETUSER [^`]+)`/);
  assert.ok(m, 'README.md has no `ACL SETUSER ...` recipe');
  return m[1].split(' ');
}

// docs/operations.md's `ACL SETUSER ... +fcall ...` session line, as words.
function libraryRecipe() {
  const m = read('docs/operations.md').match(/> (ACL SETUSER \S+ [^\n]*\+fcall [^\n]*)/);
  assert.ok(m, 'docs/operations.md has no `ACL SETUSER ... +fcall ...` line');
  return m[1].split(' ');
}

// The grants docs/operations.md lists for a cluster client (a line
// "- `+cluster|slots ...`: <client> ..." naming it), as words.
function clusterGrants(client) {
  const lines = read('docs/operations.md').split('\n')
    .map((l) => l.match(/^- `(\+[^`]+)`: (.*)$/))
    .filter((m) => m && m[2].includes(client));
  assert.equal(lines.length, 1, `docs/operations.md has no one line of cluster grants for ${client}`);
  return lines[0][1].split(' ');
}

// The user and password an `ACL SETUSER` line sets.
function credentials(recipe) {
  return { username: recipe[2], password: recipe.find((a) => a.startsWith('>')).slice(1) };
}

module.exports = { moduleRecipe, libraryRecipe, clusterGrants, credentials };

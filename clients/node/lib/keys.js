'use strict';
// The block key sits beside a limiter's key, in the same Cluster slot, so one
// RL.ALL (or FCALL rl_all) reads both.

// The key's hash tag as Redis Cluster reads it: the text between the first
// `{` and the first `}` after it, when that is not empty.
function hashTag(key) {
  const open = key.indexOf('{');
  if (open < 0) return null;
  const close = key.indexOf('}', open + 1);
  if (close < 0 || close === open + 1) return null;
  return key.slice(open + 1, close);
}

function blockKeyOf(key) {
  // A key with a tag keeps it when a suffix is added; a key without one
  // becomes the tag of its block key, which then hashes as the key does.
  if (hashTag(key) !== null) return `${key}:block`;
  if (!key.includes('}')) return `{${key}}:block`;
  // `a}b` (a `}` and no tag): no suffix or wrapper can keep its slot. Outside
  // Cluster this works; in Cluster RL.ALL answers CROSSSLOT (documented).
  return `${key}:block`;
}

module.exports = { hashTag, blockKeyOf };

'use strict';
// `npm pack` (prepack): the package ships functions/rl.lua and the
// repository's LICENSE as they are in the repository (npm packs a LICENSE
// beside package.json whatever "files" says). The copies are never edited:
// this is the only thing that writes them.
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..', '..', '..');
const here = path.join(__dirname, '..');
fs.copyFileSync(path.join(root, 'functions', 'rl.lua'), path.join(here, 'rl.lua'));
fs.copyFileSync(path.join(root, 'LICENSE'), path.join(here, 'LICENSE'));

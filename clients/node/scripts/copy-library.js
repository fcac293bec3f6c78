'use strict';
// `npm pack` (prepack): the package ships functions/rl.lua as it is in the
// repository. The copy is never edited: this is the only thing that writes it.
const fs = require('fs');
const path = require('path');

const source = path.join(__dirname, '..', '..', '..', 'functions', 'rl.lua');
const target = path.join(__dirname, '..', 'rl.lua');
fs.copyFileSync(source, target);

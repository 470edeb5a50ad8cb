'use strict';
// The part of `npm run build` that tsc does not do: files the relay reads at run time from beside its
// code (the compatibility hook's Python module, apps/relay/src/compat/svc_relay_compat.py) are copied
// into dist/ at the same relative path, so dist/apps/relay/src/compat/ holds it next to hook-source.js.
// Also run by test/support/dist.ts when a test builds dist/ itself.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const SOURCES = ['apps/relay/src'];
const ASSET = /\.py$/;

function copyAssets(root = ROOT) {
  const copied = [];
  const walk = (rel) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (ASSET.test(entry.name)) {
        const to = path.join(root, 'dist', child);
        fs.mkdirSync(path.dirname(to), { recursive: true });
        fs.copyFileSync(path.join(root, child), to);
        copied.push(child);
      }
    }
  };
  for (const dir of SOURCES) walk(dir);
  return copied;
}

module.exports = { copyAssets, ASSET };

if (require.main === module) copyAssets();

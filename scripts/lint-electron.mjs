#!/usr/bin/env node
/**
 * `npm run lint:electron`: Doyensec's Electronegativity (the Electron security linter) over the
 * desktop shell (main/shell/), the preload (preload/) and the page they load
 * (renderer/index.html, for its CSP), with package.json for the Electron version. Fails on any
 * finding above informational, and on any file it could not parse (a check it could not make).
 *
 * Findings reviewed and accepted are marked where they are, with Electronegativity's own
 * `eng-disable CHECK_ID` comments and a note saying why.
 *
 * The library's runner is used directly: its CLI needs a commander it does not declare.
 * AVAILABLE_SECURITY_FIXES_GLOBAL_CHECK is left out: it downloads Electron's release list.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const run = require('@doyensec/electronegativity/dist/runner.js');

const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-electronegativity-'));
try {
  for (const part of ['main/shell', 'preload', 'renderer/index.html', 'package.json']) {
    fs.cpSync(path.join(root, part), path.join(stage, part), { recursive: true });
  }
  const result = await run({
    input: stage,
    isRelative: true,
    excludeFromScan: ['AvailableSecurityFixesGlobalCheck'],
  });
  const rows = result.issues.map((i) => ({
    check: i.id,
    severity: i.severity.name,
    confidence: i.confidence.name,
    where: `${i.file}:${i.location.line}`,
    review: i.manualReview ? 'manual review' : '',
    what: i.description,
  }));
  console.log(`electronegativity: ${result.globalChecks} global and ${result.atomicChecks} atomic checks over main/shell, preload, renderer/index.html`);
  for (const r of rows) console.log(`  ${r.severity.padEnd(13)} ${r.check.padEnd(38)} ${r.where.padEnd(28)} ${r.what}${r.review ? ` (${r.review})` : ''}`);
  const failing = rows.filter((r) => r.severity !== 'INFORMATIONAL');
  const unparsed = result.errors.filter((e) => !e.tolerable);
  for (const e of result.errors) console.log(`  ${e.tolerable ? 'warning' : 'ERROR'}: could not fully parse ${path.relative(stage, e.file)}: ${e.message}`);
  if (failing.length > 0 || unparsed.length > 0) {
    console.error(`electronegativity: ${failing.length} finding(s) above informational, ${unparsed.length} file(s) not parsed: failing`);
    process.exitCode = 1;
  } else {
    console.log('electronegativity: no finding above informational');
  }
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}

#!/usr/bin/env node
// Runs npm scripts at the same time and fails if any of them fails. `npm test` runs the check (the
// type check, ESLint and prettier: `npm run check`) this way beside the build and then jest (docs/testing.md, "How long npm test takes"): tsc and
// eslint are single-threaded and jest mostly waits on servers, so on two cores they overlap instead
// of one waiting for the other, and every check still runs.
//   node scripts/run-parallel.mjs typecheck lint build            three at once
//   node scripts/run-parallel.mjs check --live test:jest           test:jest's output streams as it runs
// A script's output is printed whole when it ends (after the live one's, if there is one), so the
// outputs do not interleave.
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
const liveAt = args.indexOf('--live');
const live = liveAt >= 0 ? args[liveAt + 1] : undefined;
const buffered = liveAt >= 0 ? args.filter((_, i) => i !== liveAt && i !== liveAt + 1) : args;
if (buffered.length + (live ? 1 : 0) === 0 || (liveAt >= 0 && !live)) {
  console.error('usage: node scripts/run-parallel.mjs <npm script>... [--live <npm script>]');
  process.exit(2);
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const held = []; // buffered scripts' reports, printed after the live script's stream

function run(script, { streams }) {
  const started = Date.now();
  return new Promise((resolve) => {
    // --silent keeps a held report short; the live script is not silenced (npm passes its log level down).
    const child = spawn(npm, ['run', ...(streams ? [] : ['--silent']), script], {
      stdio: ['ignore', streams ? 'inherit' : 'pipe', streams ? 'inherit' : 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    let finished = false;
    const finish = (code) => {
      if (finished) return; // a child that cannot start reports 'error' and may then report 'close'
      finished = true;
      const seconds = ((Date.now() - started) / 1000).toFixed(0);
      const verdict = code === 0 ? 'passed' : `FAILED (exit ${code})`;
      const report = `${output}${output && !output.endsWith('\n') ? '\n' : ''}[${script}] ${verdict} in ${seconds} s\n`;
      if (live && !streams) held.push(report);
      else process.stdout.write(report);
      resolve(code === 0);
    };
    child.once('error', (err) => ((output += `${err.message}\n`), finish(1)));
    child.once('close', (code, signal) => finish(code ?? (signal ? 1 : 0)));
  });
}

const all = [...buffered.map((s) => [s, false]), ...(live ? [[live, true]] : [])];
const results = await Promise.all(all.map(([script, streams]) => run(script, { streams })));
for (const report of held) process.stdout.write(report);
const failed = all.filter((_, i) => !results[i]).map(([script]) => script);
if (failed.length > 0) {
  console.error(`failed: ${failed.join(', ')}`);
  process.exit(1);
}

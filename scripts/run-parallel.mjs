#!/usr/bin/env node
// Runs npm scripts at the same time and fails if any of them fails: `npm test` runs typecheck, lint
// and build this way before jest (docs/testing.md). Each is one single-threaded process (tsc,
// eslint then prettier, tsc then webpack), so on two cores the three take about half as long
// together as one after the other, and every check still runs. A script's output is printed whole
// when it ends, so the three do not interleave.
//   node scripts/run-parallel.mjs typecheck lint build
import { spawn } from 'node:child_process';

const scripts = process.argv.slice(2);
if (scripts.length === 0) {
  console.error('usage: node scripts/run-parallel.mjs <npm script>...');
  process.exit(2);
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(script) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    let finished = false;
    const finish = (code) => {
      if (finished) return; // a child that cannot start reports 'error' and may then report 'close'
      finished = true;
      const seconds = ((Date.now() - started) / 1000).toFixed(0);
      const verdict = code === 0 ? 'passed' : `FAILED (exit ${code})`;
      process.stdout.write(
        `${output}${output && !output.endsWith('\n') ? '\n' : ''}[${script}] ${verdict} in ${seconds} s\n`,
      );
      resolve(code === 0);
    };
    child.once('error', (err) => ((output += `${err.message}\n`), finish(1)));
    child.once('close', (code, signal) => finish(code ?? (signal ? 1 : 0)));
  });
}

const results = await Promise.all(scripts.map(run));
const failed = scripts.filter((_, i) => !results[i]);
if (failed.length > 0) {
  console.error(`failed: ${failed.join(', ')}`);
  process.exit(1);
}

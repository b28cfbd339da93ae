// `npm run test:durations`: runs jest once and writes each test file's duration (whole seconds) to
// test/support/test-durations.json, the order a fresh clone's run starts from (duration-sequencer.js).
// Run it when files are added or a file's duration changes much; a stale entry only costs ordering.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const output = join(root, '.data', 'jest-durations-run.json');
mkdirSync(dirname(output), { recursive: true });
const run = spawnSync('npx', ['jest', '--ci', '--json', `--outputFile=${output}`, ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
const { testResults } = JSON.parse(readFileSync(output, 'utf8'));
const durations = Object.fromEntries(
  testResults
    .map((r) => [
      relative(root, r.name).split('\\').join('/'),
      Math.max(1, Math.round((r.endTime - r.startTime) / 1000)),
    ])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
const file = join(root, 'test', 'support', 'test-durations.json');
writeFileSync(file, `${JSON.stringify(durations, null, 2)}\n`);
console.log(`${Object.keys(durations).length} durations written to ${relative(root, file)}`);
process.exit(run.status ?? 1);

// Every command block a reader of README.md or docs/events.md is meant to run is run by a test as
// written (test/ship/doc-commands.test.ts, from RUN_BLOCKS), or the sentence right above it says it
// is an illustration (issue #39 §2). A new block fails here until one of the two is true.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  COMMAND_PAGES,
  RUN_BLOCKS,
  blocksUnder,
  consoleBlocks,
  parseCommand,
  printedPattern,
  stepsOf,
  unaccountedBlocks,
} from '../support/doc-console-blocks';

const RUNNER = readFileSync(join(__dirname, 'doc-commands.test.ts'), 'utf8');

describe('the command blocks of README.md and docs/events.md', () => {
  it.each(COMMAND_PAGES)('%s: each is run by doc-commands.test.ts or marked as an illustration', (file) => {
    const stray = unaccountedBlocks(file).map((b) => `${b.file}:${b.line} (under "${b.heading}")`);
    expect(stray).toEqual([]);
  });

  it.each(RUN_BLOCKS.map((r) => [`${r.file}, "${r.heading}"`, r] as const))(
    '%s: the blocks it runs are there, and every command in them is one it can run',
    (_, r) => {
      const found = blocksUnder(r.file, r.heading);
      expect(found).toHaveLength(r.count);
      // The runner takes these blocks by their page and heading (and checks their count there).
      expect(RUNNER).toContain(`blocks('${r.file}', '${r.heading}')`);
      for (const block of found) expect(() => stepsOf(block)).not.toThrow();
    },
  );

  const page = (extra: string) =>
    ['# Page', '## Events to your backend', '```console', '$ npm run cli -- notify listen', '```', extra].join('\n');

  it('a new block under a heading no test runs, or one too many under one it runs, is reported', () => {
    const newHeading = page('## Elsewhere\n\n```console\n$ npm run cli -- notify list\n```\n');
    expect(unaccountedBlocks('README.md', newHeading).map((b) => b.line)).toEqual([8]);
    const second = page('Then:\n\n```bash\n$ npm run cli -- notify list\n```\n');
    expect(unaccountedBlocks('README.md', second).map((b) => b.line)).toEqual([8]);
    // A fence without a language that shows a prompt counts too; a diagram does not.
    const bare = page('## Elsewhere\n```\n$ npm start\n```\n```\n backend ──► Temporal\n```\n');
    expect(unaccountedBlocks('README.md', bare).map((b) => b.line)).toEqual([7]);
  });

  it('a block whose sentence right above says it is an illustration is not run', () => {
    const marked = page(
      '## Elsewhere\n\nAn illustration of the output (not meant to be run):\n\n```console\n$ rm -rf /\n```\n',
    );
    expect(consoleBlocks('README.md', marked).map((b) => b.illustration)).toEqual([false, true]);
    expect(unaccountedBlocks('README.md', marked)).toEqual([]);
  });

  it('a command is taken apart as a shell would, and a shape no test runs is refused', () => {
    expect(parseCommand('echo 1234 | npm run cli -- pay pin --ref ORD-1')).toMatchObject({
      stdin: '1234\n',
      program: 'cli',
      args: ['pay', 'pin', '--ref', 'ORD-1'],
      env: {},
    });
    expect(parseCommand('A=1 B=x/y npm start   # then this')).toMatchObject({
      env: { A: '1', B: 'x/y' },
      program: 'npm start',
      args: [],
      comment: 'then this',
    });
    expect(() => parseCommand('curl http://127.0.0.1:4100/events')).toThrow(/unsupported command/);
    expect(() => parseCommand('npm run cli -- pay card --file "a b.json"')).toThrow(/unsupported shell/);
    expect(() => parseCommand('npm run cli -- notify list | jq .')).toThrow(/unsupported pipe/);
  });

  it('a printed line matches whatever time, port and secret a run prints, and nothing else', () => {
    const p = printedPattern('give the worker: NOTIFY_URL=http://127.0.0.1:4100/events NOTIFY_SECRET=whsec_…');
    expect(p.test('give the worker: NOTIFY_URL=http://127.0.0.1:40123/events NOTIFY_SECRET=whsec_abc+/=')).toBe(true);
    expect(p.test('give the worker: NOTIFY_URL=http://10.0.0.1:4100/events NOTIFY_SECRET=whsec_abc')).toBe(false);
    const t = printedPattern('2026-11-26T16:02:11.402Z  payment.succeeded  card ORD-1  success 250000 NGN  seq 1');
    expect(t.test('2027-01-02T03:04:05.006Z  payment.succeeded  card ORD-1  success 250000 NGN  seq 1')).toBe(true);
    expect(t.test('2027-01-02T03:04:05.006Z  payment.succeeded  card ORD-1  success 25000 NGN  seq 1')).toBe(false);
    expect(printedPattern('[card X] success by=verify (final)').test('[card X] success by=webhook (final)')).toBe(true);
    // A flow the page shows confirming may have concluded by the time the command prints; it may not have failed.
    const c = printedPattern('[card ORD-1] confirming card=mastercard…4444');
    expect(c.test('[card ORD-1] confirming card=mastercard…4444')).toBe(true);
    expect(c.test('[card ORD-1] success card=mastercard…4444 by=webhook (final)')).toBe(true);
    expect(c.test('[card ORD-1] success card=mastercard…4444 by=verify (final)')).toBe(true);
    expect(c.test('[card ORD-1] failed card=mastercard…4444 by=verify (final)')).toBe(false);
    expect(c.test('[card ORD-2] success card=mastercard…4444 by=webhook (final)')).toBe(false);
  });
});

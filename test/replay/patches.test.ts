// The patches in use (docs/operations.md, "Patches in use and their retirement"): every patched(...)
// id in src/workflows has its row in the table, and no row names a patch that is gone. The retirement
// rehearsal (`npm run replay -- --retire <id>`) is shown on two patches: the worked example's
// (verify-while-waiting: no recorded history needs its old branch any more) and one whose pre-patch
// history still does (va-credit-durable-dedupe: virtual-account-credit).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config';
import { bundleWithPatchRetired, patchesInUse, patchIds } from '../../src/workers/patches';
import { loadFixtures, replayAll } from '../../src/workers/replay';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createLogger } from '../../src/logging/logger';
import { LogCapture } from '../support/stack';

jest.setTimeout(90_000);
installTemporalRuntime(createLogger({ destination: new LogCapture() }));

const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
const table = doc.slice(doc.indexOf('<!-- patches-table'), doc.indexOf('**Retirement plan'));
const rows = new Map(
  [...table.matchAll(/^\| `([^`]+)` \|(.*)\|\s*$/gm)].map((m) => [m[1], m[2].split('|').map((c) => c.trim())]),
);

it('finds the patches in the workflow code, each id resolved', () => {
  const uses = patchesInUse();
  expect(uses.length).toBeGreaterThan(10);
  expect(patchIds()).toEqual(
    expect.arrayContaining([
      'webhook-verified',
      'verify-while-waiting',
      'va-credit-durable-dedupe',
      'mandate-money-safety',
      'pos-sealed-card',
    ]),
  );
});

it('lists every patch in use in the operations guide, and none that is gone', () => {
  expect([...rows.keys()].sort()).toEqual(patchIds());
});

it.each([
  ['verify-while-waiting', []],
  ['va-credit-durable-dedupe', ['virtual-account-credit']],
])(
  'rehearses retiring %s: the fixtures that still need its old branch are the ones the guide names',
  async (id, expected) => {
    const outcomes = await replayAll(loadFixtures(), {
      encryption: loadConfig({}).encryption,
      workflowBundle: await bundleWithPatchRetired(id),
    });
    const failing = outcomes
      .filter((o) => o.error)
      .map((o) => o.name)
      .sort();
    expect(failing).toEqual(expected);
    const documented = rows.get(id)![3];
    expect(
      documented === '—'
        ? []
        : documented
            .split(',')
            .map((s) => s.trim().replace(/`/g, ''))
            .sort(),
    ).toEqual(expected);
  },
);

// Patches after 1.0 (docs/operations.md, "Patches in use and their retirement"): the 1.0 baseline has
// none; a patch is added only to an AUTO_UPGRADE type (src/workflows/steps/versioning.ts), and gets
// its row in the guide's table with its retirement plan. The scanner behind the table and behind
// `npm run replay -- --retire <id>` is shown on the Worker Versioning test's patched fixture.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWithPatchRetired, patchesInUse, patchIds } from '../../src/workers/patches';

const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
const table = doc.slice(doc.indexOf('<!-- patches-table'), doc.indexOf('**Retirement plan'));
const rows = [...table.matchAll(/^\| `([^`]+)` \|(.*)\|\s*$/gm)].map((m) => m[1]);

it('finds no patch in the 1.0 workflow code, and the guide lists none', () => {
  expect(patchIds()).toEqual([]);
  expect(rows).toEqual([]);
});

it('finds a patch and resolves its id (the versioning fixture v2 patches its auto-upgrade flow)', () => {
  const uses = patchesInUse(join(__dirname, '..', 'fixtures', 'versioned'));
  expect(uses).toEqual([{ id: 'tick-names-v2', file: 'v2.ts', call: "patched('tick-names-v2')" }]);
});

it('refuses to rehearse retiring a patch that is not in the workflow code', async () => {
  await expect(bundleWithPatchRetired('no-such-patch')).rejects.toThrow(
    /no patched\('no-such-patch'\) in src\/workflows/,
  );
});

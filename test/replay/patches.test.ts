// Patches after 1.0 (docs/operations.md, "Patches in use and their retirement"): the 1.0 baseline has
// none; a patch is added only to an AUTO_UPGRADE type (src/workflows/steps/versioning.ts) and gets its
// row in the guide's table, with its retirement plan. This checks that the table lists exactly the
// patch ids the workflow code asks for, and that the scanner finds a patch where there is one.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const CALL = /\bpatched\(\s*(?:'([^']+)'|([A-Z][A-Z0-9_]*))\s*\)/g;

/** The patch ids asked for in a folder's TypeScript (a constant's value resolved in its own file). */
function patchIdsIn(dir: string): { id: string; file: string }[] {
  const files = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(d, e.name)) : e.name.endsWith('.ts') ? [join(d, e.name)] : [],
    );
  return files(dir).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(CALL)].map((m) => ({
      id: m[1] ?? new RegExp(`const ${m[2]}\\s*=\\s*'([^']+)'`).exec(text)?.[1] ?? `unresolved ${m[2]}`,
      file: relative(ROOT, file),
    }));
  });
}

const doc = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
const table = doc.slice(doc.indexOf('<!-- patches-table'), doc.indexOf('**Retirement plan'));
const rows = [...table.matchAll(/^\| `([^`]+)` \|(.*)\|\s*$/gm)].map((m) => m[1]);

it('lists in the guide exactly the patches the workflow code asks for', () => {
  const ids = [...new Set(patchIdsIn(join(ROOT, 'src', 'workflows')).map((p) => p.id))].sort();
  expect(rows.sort()).toEqual(ids);
  // Added after 1.0, each with its row and retirement plan.
  expect(ids).toEqual([
    'mandate-ended-event',
    'mandate-fixed-observed',
    'merchant-events-deployment-target',
    'pos-refund-ledger-reasked-amount',
    'recurring-a5-refusal-not-cancelled',
    'recurring-a5-unknown-parks',
    'recurring-plan-events',
    'va-credit-handoff-gave-up-event',
  ]);
});

it('finds a patch where there is one (the versioning fixture v2 patches its auto-upgrade flow)', () => {
  expect(patchIdsIn(join(__dirname, '..', 'fixtures', 'versioned'))).toEqual([
    { id: 'tick-names-v2', file: 'test/fixtures/versioned/v2.ts' },
  ]);
});

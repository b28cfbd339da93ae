// Domain words (issue #43): a spec code (A1, D3, G3, E-1, ...) is a reference after domain words,
// never part of a name nor the noun of a sentence. The counting lives in scripts/spec-code-count.mjs,
// which reads the codes from the spec's headings; this test holds src to it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';

interface Counted {
  codes: string[];
  folders: Record<string, Record<'identifiers' | 'strings' | 'stringNouns' | 'comments' | 'commentNouns', number>>;
  names: { file: string; line: number; name: string }[];
  nounsByFile: Record<string, number>;
}

const countIn = (folder: string): Counted =>
  JSON.parse(
    execFileSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'spec-code-count.mjs'), folder, '--json'], {
      encoding: 'utf8',
    }),
  ) as Counted;

// Names still holding a code, each with why it is still there. Remove a row when its name goes; the test
// fails on a row that no longer matches anything, so the list only shrinks.
// None is left (the patch ids' values, recorded in histories, were kept when their names went).
const NOT_YET_RENAMED: Record<string, string> = {};

// The comments and strings of src use a code only as a reference after domain words ("the debit (D3)"),
// never as a noun ("D3 answered"). The one file left: its noun is a value flows match on, not wording.
const NOUNS_ALLOWED: Record<string, string> = {
  'src/shared/vending.ts':
    "VEND_PROVIDER_LIST_STEP's value 'H1 electricity providers' starts failure messages recorded in histories, which the vending flow matches",
};

describe('spec codes in src (scripts/spec-code-count.mjs)', () => {
  const src = countIn('src');

  it("reads the operation and event codes from the spec's headings", () => {
    expect(src.codes).toEqual(expect.arrayContaining(['A1', 'B1', 'C11', 'D3', 'E2', 'F4', 'G8', 'H4', 'E-1', 'E-3']));
    expect(src.codes).not.toContain('A7');
  });

  it('finds no name in src holding a spec code, except the listed ones not yet renamed', () => {
    const found = [...new Set(src.names.map((n) => `${n.file} ${n.name}`))];
    expect(found.filter((n) => !(n in NOT_YET_RENAMED))).toEqual([]);
    // A renamed name leaves the list too.
    expect(Object.keys(NOT_YET_RENAMED).filter((n) => !found.includes(n))).toEqual([]);
  });

  it('uses a code only as a reference in the comments and strings of src, except the listed file', () => {
    expect(Object.keys(src.nounsByFile).filter((f) => !(f in NOUNS_ALLOWED))).toEqual([]);
    // A file reworded leaves the list too, so it only shrinks.
    expect(Object.keys(NOUNS_ALLOWED).filter((f) => !src.nounsByFile[f])).toEqual([]);
  });

  it('prints, as docs/flow-development.md runs it, a row per folder and a total that add up to what --json counts', () => {
    const table = execFileSync(process.execPath, ['scripts/spec-code-count.mjs'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    });
    const rows = table.trim().split('\n');
    const cells = (label: string) =>
      rows
        .find((r) => r.split(/\s+/)[0] === label)
        ?.trim()
        .split(/\s+/)
        .slice(1)
        .map(Number);
    const sum = (k: keyof Counted['folders'][string]) => Object.values(src.folders).reduce((n, r) => n + r[k], 0);
    expect(cells('sandbox')).toEqual(Object.values(src.folders.sandbox));
    expect(cells('total')).toEqual([
      sum('identifiers'),
      sum('strings'),
      sum('stringNouns'),
      sum('comments'),
      sum('commentNouns'),
    ]);
  });

  it('catches a code in a name in any case and at any word of it, and not inside other words; tells references from nouns', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spec-codes-'));
    try {
      writeFileSync(
        join(dir, 'sample.ts'),
        [
          'export const G3_READ = 1;',
          'export let e1Announced = false;',
          'export const chargeB1 = () => D3Answer;',
          'type D3Answer = number;',
          '// the debit (D3) answered',
          '// D3 answered',
          "export const label = 'charge card (B1)';",
          "export const detail = 'G3 could not be read';",
          'export const sha256 = 1, h264 = 2, A12 = 3, base64 = 4, e2e = 5;',
        ].join('\n'),
      );
      const sample = countIn(dir);
      expect(sample.names.map((n) => n.name)).toEqual(['G3_READ', 'e1Announced', 'chargeB1', 'D3Answer', 'D3Answer']);
      // Mentions in strings and comments are counted, and those using the code as a noun told apart.
      expect(Object.values(sample.folders)).toEqual([
        { identifiers: 5, strings: 2, stringNouns: 1, comments: 2, commentNouns: 1 },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

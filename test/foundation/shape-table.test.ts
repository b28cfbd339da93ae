// The shape table of issue #43 (docs/architecture.md, "Shape"), printed by scripts/shape-table.ts as that
// page tells a reader to run it; and the script, given a small tree, finds what it counts, so a row
// cannot read zero because the measure went blind.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';

const rowsOf = (table: string): Record<string, string> =>
  Object.fromEntries(
    table
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| Measure'))
      .map((l) => l.slice(2, -2).split(' | ') as [string, string]),
  );

describe('scripts/shape-table.ts', () => {
  it('prints, as docs/architecture.md runs it, the rows whose number is the rule at zero', () => {
    const table = execFileSync('npx', ['tsx', 'scripts/shape-table.ts'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    const rows = rowsOf(table);
    expect(Object.keys(rows)).toHaveLength(10);
    expect(rows['Functions over 80 lines outside src/workflows']).toMatch(/^0; /);
    expect(rows['Activity option objects']).toMatch(/; 0 built inline$/);
    expect(rows['Imports running back up the layers']).toBe('0; 0 circle(s) between files');
    expect(rows['Rules with two homes']).toMatch(
      /^USSD bank codes listed in 1 file\(s\) \(src\/api\/schemas\/direct\.ts\)/,
    );
    // The card's path reaches every floor it runs on: the starter, the flow, its activities, the client.
    expect(rows['Files a card payment touches, end to end']).toMatch(/\(activities, api, .*starters, .*workflows\)/);
  }, 60_000);

  it("adds, with SHAPE_DETAIL=1 as the doc says, lines per folder that add up to the table's total", () => {
    const out = execFileSync('npx', ['tsx', 'scripts/shape-table.ts'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env: { ...process.env, SHAPE_DETAIL: '1' },
    });
    const total = Number(/^\| Lines in src \| ([\d,]+) in/m.exec(out)![1].replace(/,/g, ''));
    const perFolder = out.split('lines per folder:\n')[1].split('\n\n')[0].trim().split('\n');
    expect(perFolder.map((l) => l.split(' ')[0])).toEqual(expect.arrayContaining(['workflows', 'starters', 'shared']));
    expect(perFolder.reduce((sum, l) => sum + Number(l.split(' ')[1]), 0)).toBe(total);
    expect(out).toMatch(/\ncard payment files:\n(src\/\S+\n)*src\/activities\/card-payment\.ts\n/);
  }, 60_000);

  it('counts a long class, a long function, an option object in place, an arrow up and a circle in a small tree', () => {
    const root = mkdtempSync(join(tmpdir(), 'shape-table-'));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    try {
      write(
        'src/shared/a.ts',
        `import { b } from './b';\nimport { w } from '../workflows/w';\nexport const a = () => b + w;\n`,
      );
      write('src/shared/b.ts', `import { a } from './a';\nexport const b = 1;\nexport const c = a;\n`);
      write(
        'src/workflows/w.ts',
        `import { proxyActivities } from '@temporalio/workflow';\nconst acts = proxyActivities({ startToCloseTimeout: '1 minute' });\nexport const w = 2;\nexport { acts };\n`,
      );
      write('src/activities/long.ts', `export class Long {\n  run() {\n${lines(300)}\n  }\n}\n`);
      const table = execFileSync(process.execPath, ['--import', 'tsx', 'scripts/shape-table.ts', root], {
        cwd: PROJECT_ROOT,
        encoding: 'utf8',
      });
      const rows = rowsOf(table);
      expect(rows['Biggest class']).toMatch(/^Long \(src\/activities\/long\.ts\) 304 lines \(its file 304\)/);
      expect(rows['Functions over 80 lines outside src/workflows']).toMatch(
        /^1; the longest run \(src\/activities\/long\.ts:2\) 302, /,
      );
      expect(rows['Activity option objects']).toBe('1 proxy calls use 1 different option arguments; 1 built inline');
      expect(rows['Duration literals']).toBe('1 duration strings in 1 files (1 in workflows), 0 N_000 literals');
      expect(rows['Imports running back up the layers']).toBe(
        '1; 1 circle(s) between files (src/shared/a.ts ⇄ src/shared/b.ts)',
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});

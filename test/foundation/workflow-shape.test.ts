// The 1.0 shape of src/workflows (CHANGELOG.md, docs/flow-development.md): no patch and no legacy
// flow (every change after 1.0 goes through Worker Versioning, or a patch added then with its
// retirement plan), and no function longer than 80 lines, nested functions counted in their parent.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { WORKFLOW_VERSIONING, type VersionedWorkflowType } from '../../src/workflows/steps/versioning';

const ROOT = join(__dirname, '..', '..');
const WORKFLOWS = join(ROOT, 'src', 'workflows');
const MAX_LINES = 80;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every function-like node of a file with its length in lines (first line to last, inclusive). */
export function functionLengths(path: string): { name: string; lines: number }[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named = (node as ts.FunctionLikeDeclaration).name;
      const name = named && 'text' in named ? named.text : `(anonymous at line ${start + 1})`;
      out.push({ name: `${relative(ROOT, path)}:${start + 1} ${name}`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe('the 1.0 shape of the workflow code', () => {
  const all = files(WORKFLOWS);

  it('patches only long-lived (AUTO_UPGRADE) flows: a pinned flow changes through Worker Versioning (docs/operations.md)', () => {
    // The patch table in docs/operations.md names each patch's workflow types (test/replay/patches.test.ts
    // keeps it equal to the patch ids in src/workflows); every one must be AUTO_UPGRADE.
    const table = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    const rows = [...table.matchAll(/^\| `([a-z0-9-]+)` \| ([^|]+) \|/gm)].map((m) => ({
      patch: m[1],
      types: [...m[2].matchAll(/`(\w+)`/g)].map((t) => t[1]),
    }));
    const patchedFiles = all.filter((f) => /\bpatched\(|\bdeprecatePatch\(/.test(readFileSync(f, 'utf8')));
    if (patchedFiles.length > 0) expect(rows.length).toBeGreaterThan(0);
    for (const { patch, types } of rows) {
      expect(types.length).toBeGreaterThan(0);
      for (const type of types)
        expect({ patch, type, behavior: WORKFLOW_VERSIONING[type as VersionedWorkflowType]?.behavior }).toEqual({
          patch,
          type,
          behavior: 'AUTO_UPGRADE',
        });
    }
  });

  it('has no legacy flow', () => {
    expect(all.filter((f) => /legacy/i.test(f)).map((f) => relative(ROOT, f))).toEqual([]);
  });

  it(`has no function over ${MAX_LINES} lines`, () => {
    const long = all.flatMap(functionLengths).filter((f) => f.lines > MAX_LINES);
    expect(long.map((f) => `${f.name}: ${f.lines} lines`)).toEqual([]);
  });

  it('measures a function by its whole span, nested functions included', () => {
    const lengths = functionLengths(join(__dirname, '..', 'fixtures', 'changed-workflows.ts'));
    expect(lengths.length).toBeGreaterThan(0);
    expect(Math.max(...lengths.map((f) => f.lines))).toBeGreaterThan(1);
  });
});

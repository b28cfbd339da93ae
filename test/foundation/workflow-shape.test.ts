// The 1.0 shape of src/workflows (CHANGELOG.md, docs/flow-development.md): no patch and no legacy
// flow (every change after 1.0 goes through Worker Versioning, or a patch added then with its
// retirement plan), and no function longer than 80 lines, nested functions counted in their parent.
// Since issue #43: no class longer than 400 lines, and every activity proxy takes a named policy
// (src/workflows/steps/activity-options.ts), never an option object written where it is used.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { WORKFLOW_VERSIONING, type VersionedWorkflowType } from '../../src/workflows/steps/versioning';

const ROOT = join(__dirname, '..', '..');
const WORKFLOWS = join(ROOT, 'src', 'workflows');
const MAX_LINES = 80;
const MAX_CLASS_LINES = 400;

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

function sourceOf(path: string, text = readFileSync(path, 'utf8')): ts.SourceFile {
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
}

function lineOf(source: ts.SourceFile, node: ts.Node): number {
  return source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
}

/** Every class of a file with its length in lines. */
export function classLengths(source: ts.SourceFile): { name: string; lines: number }[] {
  const out: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      const name = node.name?.text ?? '(anonymous)';
      out.push({
        name: `${relative(ROOT, source.fileName)}:${lineOf(source, node)} ${name}`,
        lines: end - lineOf(source, node) + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** proxyActivities / proxyLocalActivities calls given an option object written in place (not a named policy). */
export function inlineActivityOptions(source: ts.SourceFile): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && /^proxy(Local)?Activities$/.test(node.expression.getText(source))) {
      let arg: ts.Node | undefined = node.arguments[0];
      while (arg && (ts.isParenthesizedExpression(arg) || ts.isAsExpression(arg) || ts.isSatisfiesExpression(arg)))
        arg = arg.expression;
      if (arg && ts.isObjectLiteralExpression(arg))
        out.push(`${relative(ROOT, source.fileName)}:${lineOf(source, node)} ${node.expression.getText(source)}`);
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

  it(`has no class over ${MAX_CLASS_LINES} lines`, () => {
    const long = all.flatMap((f) => classLengths(sourceOf(f))).filter((c) => c.lines > MAX_CLASS_LINES);
    expect(long.map((c) => `${c.name}: ${c.lines} lines`)).toEqual([]);
  });

  it('gives every activity proxy a named policy (src/workflows/steps/activity-options.ts), no option object in place', () => {
    const inline = all.flatMap((f) => inlineActivityOptions(sourceOf(f)));
    expect(inline).toEqual([]);
  });

  it('finds an option object in place and a long class (the rules can fail)', () => {
    const text = [
      "import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';",
      'const a = proxyActivities<A>(READ);',
      "const b = proxyActivities<A>({ ...READ, heartbeatTimeout: '30s' });",
      "const c = proxyLocalActivities<A>(({ startToCloseTimeout: '1s' }) as LocalActivityOptions);",
      'class Long {',
      ...Array.from({ length: MAX_CLASS_LINES }, (_, i) => `  m${i}(): void {}`),
      '}',
    ].join('\n');
    const source = sourceOf(join(WORKFLOWS, 'fixture.ts'), text);
    expect(inlineActivityOptions(source)).toEqual([
      'src/workflows/fixture.ts:3 proxyActivities',
      'src/workflows/fixture.ts:4 proxyLocalActivities',
    ]);
    expect(classLengths(source)).toEqual([{ name: 'src/workflows/fixture.ts:5 Long', lines: MAX_CLASS_LINES + 2 }]);
  });

  it('measures a function by its whole span, nested functions included', () => {
    const lengths = functionLengths(join(__dirname, '..', 'fixtures', 'changed-workflows.ts'));
    expect(lengths.length).toBeGreaterThan(0);
    expect(Math.max(...lengths.map((f) => f.lines))).toBeGreaterThan(1);
  });
});

// Issue #43: the same two length rules over all of src, not only the workflows.
describe('the shape of all of src', () => {
  const everything = files(join(ROOT, 'src'));

  it(`has no function over ${MAX_LINES} lines`, () => {
    const long = everything.flatMap(functionLengths).filter((f) => f.lines > MAX_LINES);
    expect(long.map((f) => `${f.name}: ${f.lines} lines`)).toEqual([]);
  });

  it(`has no class over ${MAX_CLASS_LINES} lines`, () => {
    const long = everything.flatMap((f) => classLengths(sourceOf(f))).filter((c) => c.lines > MAX_CLASS_LINES);
    expect(long.map((c) => `${c.name}: ${c.lines} lines`)).toEqual([]);
  });
});

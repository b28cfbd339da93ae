#!/usr/bin/env node
// Lists the functions of src/workflows longer than N lines (default 80), longest first: the check
// test/foundation/workflow-shape.test.ts makes, as a quick look while refactoring.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..');
const max = Number(process.argv[2] ?? 80);
const walk = (d) =>
  readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.ts') ? [join(d, e.name)] : [],
  );
const rows = [];
for (const f of walk(join(root, 'src', 'workflows'))) {
  const src = ts.createSourceFile(f, readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (n) => {
    if (ts.isFunctionLike(n) && n.body) {
      const a = src.getLineAndCharacterOfPosition(n.getStart(src)).line;
      const b = src.getLineAndCharacterOfPosition(n.getEnd()).line;
      rows.push([b - a + 1, `${relative(root, f)}:${a + 1} ${n.name?.text ?? '(anonymous)'}`]);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
}
const long = rows.filter(([n]) => n > max).sort((x, y) => y[0] - x[0]);
for (const [n, where] of long) console.log(`${String(n).padStart(5)}  ${where}`);
console.log(`${long.length} function(s) over ${max} lines`);
process.exitCode = long.length ? 1 : 0;

#!/usr/bin/env -S npx tsx
// Prints the shape table of issue #43 for a checkout, each row measured from the code alone, so the
// same command gives "before" on an old commit and "after" on this one:
//   npx tsx scripts/shape-table.ts [ROOT]     (ROOT defaults to this project; an old commit works as
//                                              a `git worktree` with node_modules linked in)
// The layer order read for "imports running back up" is this project's docs/architecture.md, for
// every ROOT, so an old tree is held to today's rule.
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { backArrows, circles, folderOf as folderOfPath, importGraph, sourceFiles } from './import-graph';

const HERE = join(__dirname, '..');
const ROOT = resolve(process.argv[2] ?? HERE);
const SRC = join(ROOT, 'src');

const rel = (path: string) => relative(ROOT, path);
const folderOf = (path: string) => folderOfPath(rel(path));
const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

const srcFiles = sourceFiles(SRC).sort();
const program = ts.createProgram(srcFiles, {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  esModuleInterop: true,
  resolveJsonModule: true,
  skipLibCheck: true,
  strict: true,
  types: ['node'],
});
const checker = program.getTypeChecker();
const sources = srcFiles.map((f) => program.getSourceFile(f)!);
const lineOf = (node: ts.Node) => node.getSourceFile().getLineAndCharacterOfPosition(node.getStart()).line + 1;
const spanOf = (node: ts.Node) =>
  node.getSourceFile().getLineAndCharacterOfPosition(node.getEnd()).line + 1 - lineOf(node) + 1;
const nameOf = (node: ts.Node & { name?: ts.Node }) =>
  node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';

function each(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  ts.forEachChild(node, (child) => each(child, visit));
}

// Lines, files, and the four largest folders.
const linesByFolder = new Map<string, number>();
for (const f of srcFiles)
  linesByFolder.set(folderOf(f), (linesByFolder.get(folderOf(f)) ?? 0) + lineCount(readFileSync(f, 'utf8')));
const totalLines = [...linesByFolder.values()].reduce((a, b) => a + b, 0);

// Classes and functions by span (a function counts its nested functions, as the shape test does).
const classes: { where: string; lines: number; fileLines: number }[] = [];
const functions: { where: string; lines: number }[] = [];
for (const s of sources) {
  each(s, (n) => {
    if (ts.isClassDeclaration(n) || ts.isClassExpression(n))
      classes.push({ where: `${nameOf(n)} (${rel(s.fileName)})`, lines: spanOf(n), fileLines: lineCount(s.text) });
    if (ts.isFunctionLike(n) && 'body' in n && n.body && !rel(s.fileName).startsWith('src/workflows/'))
      functions.push({
        where: `${nameOf(n as ts.FunctionLikeDeclaration)} (${rel(s.fileName)}:${lineOf(n)})`,
        lines: spanOf(n),
      });
  });
}
classes.sort((a, b) => b.lines - a.lines);
functions.sort((a, b) => b.lines - a.lines);

// Activity proxies in the workflows: how many, how many different option arguments, how many written in place.
const proxies: { arg: string; inline: boolean }[] = [];
for (const s of sources.filter((x) => rel(x.fileName).startsWith('src/workflows/'))) {
  each(s, (n) => {
    if (!ts.isCallExpression(n) || !/^proxy(Local)?Activities$/.test(n.expression.getText())) return;
    let arg: ts.Node | undefined = n.arguments[0];
    while (arg && (ts.isParenthesizedExpression(arg) || ts.isAsExpression(arg) || ts.isSatisfiesExpression(arg)))
      arg = arg.expression;
    proxies.push({
      arg: arg?.getText().replace(/\s+/g, ' ') ?? '(none)',
      inline: !!arg && ts.isObjectLiteralExpression(arg),
    });
  });
}

// Duration strings ('30 seconds', '5m', '2h') and millisecond literals written as N_000.
const DURATION = /^\d+(\.\d+)?\s*(ms|s|m|h|d|milliseconds?|seconds?|minutes?|hours?|days?)$/;
let durations = 0;
let durationsInWorkflows = 0;
let thousands = 0;
const durationFiles = new Set<string>();
for (const s of sources) {
  each(s, (n) => {
    if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && DURATION.test(n.text)) {
      durations += 1;
      durationFiles.add(s.fileName);
      if (rel(s.fileName).startsWith('src/workflows/')) durationsInWorkflows += 1;
    }
    if (ts.isNumericLiteral(n) && /^\d+_000$/.test(n.getText())) thousands += 1;
  });
}

// Rules with two homes: files listing the USSD bank codes (an array of ten or more codes of three to five digits);
// lists of final statuses in our own folders (the service's enums in src/api and src/sandbox are its
// words, not ours) that are not a pick from the one vocabulary (`pickFinal([...])`).
const FINAL = new Set(['success', 'successful', 'failed', 'declined', 'cancelled', 'expired', 'reversed', 'approved']);
const ussdHomes: string[] = [];
const finalLists: string[] = [];
for (const s of sources) {
  const ours = !/^src\/(api|sandbox)\//.test(rel(s.fileName));
  each(s, (n) => {
    if (!ts.isArrayLiteralExpression(n)) return;
    const words = n.elements.filter(ts.isStringLiteral).map((e) => e.text);
    if (words.length !== n.elements.length) return;
    if (words.length >= 10 && words.every((w) => /^\d{3,5}$/.test(w))) ussdHomes.push(rel(s.fileName));
    const picked = ts.isCallExpression(n.parent) && n.parent.expression.getText() === 'pickFinal';
    if (ours && !picked && words.length >= 3 && words.filter((w) => FINAL.has(w)).length >= 2)
      finalLists.push(`${rel(s.fileName)}:${lineOf(n)}`);
  });
}

// The client: methods written by hand in src/api/client.ts (an arrow or method per operation).
const client = sources.find((s) => rel(s.fileName) === 'src/api/client.ts');
let handWritten = 0;
if (client)
  each(client, (n) => {
    if (
      (ts.isPropertyAssignment(n) &&
        n.initializer &&
        (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer))) ||
      ts.isMethodDeclaration(n)
    )
      handWritten += 1;
  });

// Imports running back up the layer order of docs/architecture.md, and circles between files.
const LAYERS = readFileSync(join(HERE, 'docs', 'architecture.md'), 'utf8')
  .split('\n')
  .filter((l) => /^\| \d+ \| `src\//.test(l))
  .map((l) => [...l.split('|')[2].matchAll(/`src\/([^`]+)`/g)].map((m) => m[1]));
const graph = importGraph(ROOT, srcFiles);
const up = backArrows(graph, LAYERS);
const fileCircles = circles(graph);

// The files a card payment's code runs through: from the exported functions of the card's starter,
// workflow and activities, the API client and the webhook receiver, every function, class and value of src that their code uses (by the checker's
// symbols, values only, types left out), and on from each of those.
const CARD_ENTRIES: [string, string[] | 'exported'][] = [
  ['src/starters/card-payment.ts', 'exported'],
  ['src/workflows/card-payment.ts', 'exported'],
  // A workflow names its activities by type only, so the card's activities are an entry of their own.
  ['src/activities/card-payment.ts', 'exported'],
  // The activities reach the client through their deps' type, and its methods are typed from the operations table.
  ['src/api/client.ts', ['PaymentsClient']],
  ['src/webhooks/receiver.ts', ['createWebhookReceiver']],
];
const reached = new Set<ts.Node>();
const queue: ts.Node[] = [];
const reach = (n: ts.Node) => {
  if (!reached.has(n)) {
    reached.add(n);
    queue.push(n);
  }
};
for (const [file, names] of CARD_ENTRIES) {
  const s = sources.find((x) => rel(x.fileName) === file);
  if (!s) continue;
  for (const st of s.statements)
    if ((ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st)) && st.name) {
      const exported = st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      if (names === 'exported' ? exported : names.includes(st.name.text)) reach(st);
    }
}
const isType = (n: ts.Node): boolean => {
  for (let p: ts.Node | undefined = n.parent; p; p = p.parent) {
    if (ts.isTypeNode(p) || ts.isInterfaceDeclaration(p) || ts.isTypeAliasDeclaration(p)) return true;
    if (ts.isExpressionWithTypeArguments(p) && p.parent && ts.isHeritageClause(p.parent)) return false;
    if (ts.isStatement(p) || ts.isClassElement(p)) break;
  }
  return false;
};
const unitOf = (d: ts.Declaration): ts.Node | undefined => {
  if (ts.isFunctionDeclaration(d) || ts.isClassDeclaration(d) || ts.isMethodDeclaration(d) || ts.isEnumDeclaration(d))
    return d;
  if ((ts.isVariableDeclaration(d) || ts.isPropertyAssignment(d) || ts.isPropertyDeclaration(d)) && d.initializer)
    return d;
  if (ts.isGetAccessor(d) || ts.isSetAccessor(d) || ts.isConstructorDeclaration(d)) return d;
  return undefined;
};
while (queue.length) {
  each(queue.pop()!, (n) => {
    if (!ts.isIdentifier(n) || isType(n)) return;
    let symbol = checker.getSymbolAtLocation(n);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    for (const d of symbol?.declarations ?? []) {
      if (!d.getSourceFile().fileName.startsWith(SRC)) continue;
      const unit = unitOf(d);
      if (unit) reach(unit);
    }
  });
}
const cardFiles = [...new Set([...reached].map((n) => rel(n.getSourceFile().fileName)))].sort();
const cardLines = cardFiles.reduce((sum, f) => sum + lineCount(readFileSync(join(ROOT, f), 'utf8')), 0);
const cardFolders = [...new Set(cardFiles.map((f) => f.split('/')[1]))];

const n = (x: number) => x.toLocaleString('en');
const top = [...linesByFolder].sort((a, b) => b[1] - a[1]).slice(0, 4);
const rows: [string, string][] = [
  ['Lines in src', `${n(totalLines)} in ${srcFiles.length} files (${top.map(([f, l]) => `${f} ${n(l)}`).join('; ')})`],
  [
    'Biggest class',
    classes[0] ? `${classes[0].where} ${n(classes[0].lines)} lines (its file ${n(classes[0].fileLines)})` : 'none',
  ],
  [
    'Other classes over 250 lines',
    classes
      .slice(1)
      .filter((c) => c.lines > 250)
      .map((c) => `${c.where} ${c.lines}`)
      .join(', ') || 'none',
  ],
  [
    'Functions over 80 lines outside src/workflows',
    `${functions.filter((f) => f.lines > 80).length}; the longest ${functions
      .slice(0, 3)
      .map((f) => `${f.where} ${f.lines}`)
      .join(', ')}`,
  ],
  [
    'Files a card payment touches, end to end',
    `${cardFiles.length} files, ${n(cardLines)} lines, ${cardFolders.length} folders (${cardFolders.join(', ')})`,
  ],
  [
    'Activity option objects',
    `${proxies.length} proxy calls use ${new Set(proxies.map((p) => p.arg)).size} different option arguments; ${proxies.filter((p) => p.inline).length} built inline`,
  ],
  [
    'Duration literals',
    `${durations} duration strings in ${durationFiles.size} files (${durationsInWorkflows} in workflows), ${thousands} N_000 literals`,
  ],
  [
    'Rules with two homes',
    `USSD bank codes listed in ${ussdHomes.length} file(s) (${ussdHomes.join(', ') || 'none'}); ${finalLists.length} list(s) of final statuses apart from the one vocabulary`,
  ],
  ['Client methods written by hand in src/api/client.ts', `${handWritten}`],
  [
    'Imports running back up the layers',
    `${up.length}; ${fileCircles.length} circle(s) between files${fileCircles.length ? ` (${fileCircles.map((c) => c.join(' ⇄ ')).join('; ')})` : ''}`,
  ],
];
console.log(`shape of ${ROOT}`);
console.log('| Measure | Value |\n|---|---|');
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
if (process.env.SHAPE_DETAIL) {
  console.log('\nlines per folder:\n' + [...linesByFolder].map(([f, l]) => `${f} ${l}`).join('\n'));
  console.log('\ncard payment files:\n' + cardFiles.join('\n'));
  console.log('\nback arrows:\n' + up.join('\n'));
  console.log('\nfinal status lists:\n' + finalLists.join('\n'));
}

#!/usr/bin/env node
// Counts the spec's operation codes (A1, D3, G3, E-1, ...) in src, per folder: in identifiers, in string
// literals and in comments. The codes are read from the spec's headings, not guessed. Issue #43: a code
// belongs in a reference after domain words ("the charge (B1)", `// D3`), never in a name.
//
//   node scripts/spec-code-count.mjs [folder]   table per folder of src (or of the folder given, e.g. test)
//   node scripts/spec-code-count.mjs --names    also every identifier that holds a code, with its file
//   node scripts/spec-code-count.mjs --list     also every string and comment that holds one
//   node scripts/spec-code-count.mjs --json     { codes, folders, names, nounsByFile } (test/foundation/spec-codes.test.ts)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..');
const specPath = [join(root, '..', 'shared', 'spec', 'payments-service-interface.md')].find(existsSync);

// Operations are bold headings (`**B1. Charge card ...`), events are `### E-1. ...` headings.
const specCodes = (text) => {
  const ops = [...text.matchAll(/^\*\*([A-H]\d{1,2})\./gm)].map((m) => m[1]);
  const events = [...text.matchAll(/^###\s+(E-\d)\./gm)].map((m) => m[1]);
  return [...new Set([...ops, ...events])];
};
// Without the spec beside the project (a clone on its own), the list as the spec had it on writing.
const FALLBACK = Object.entries({ A: 6, B: 5, C: 11, D: 6, E: 2, F: 4, G: 8, H: 4 })
  .flatMap(([letter, n]) => Array.from({ length: n }, (_, i) => `${letter}${i + 1}`))
  .concat(['E-1', 'E-2', 'E-3']);
const codes = specPath ? specCodes(readFileSync(specPath, 'utf8')) : FALLBACK;
const codeSet = new Set(codes);
const opCodes = codes.filter((c) => !c.includes('-'));

// In prose and strings: the code as a word (`B1`, `E-1`), case as the spec writes it.
const textRe = new RegExp(
  `(?<![A-Za-z0-9_-])(${codes.map((c) => c.replace('-', '\\-')).join('|')})(?![A-Za-z0-9_]|-\\d)`,
  'g',
);
const inText = (s) => [...s.matchAll(textRe)].map((m) => m[1]);
// A reference is a code in parentheses after domain words ("the debit (D3)", "(F3, then F4)"), or a
// comment that is the code alone (`// D3`); any other mention uses the code as a noun ("D3 answered",
// "(A6 by reference)", "E1's answer").
const asNouns = (s) =>
  [...s.matchAll(textRe)]
    .filter((m) => {
      const before = s.slice(0, m.index);
      const inParens = before.lastIndexOf('(') > before.lastIndexOf(')');
      // Closed right after, or followed by another code or a remark (`(A1)`, `(C1-C11)`, `(F3, then F4)`).
      const closes = /^\s*($|[),;/+.-])/.test(s.slice(m.index + m[1].length));
      const alone = s.replace(/^\/\/|^\/\*+|\*\/$/g, '').trim() === m[1];
      return !((inParens && closes) || alone);
    })
    .map((m) => m[1]);

// In a name: a word of the identifier (split at `_`, `$` and camel-case humps) equal to a code in any case
// (`G3_READ`, `e1Announced`, `chargeB1`). Event codes lose their dash in a name (`E1` is also the POS
// request, counted once).
const words = (id) =>
  id
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .replace(/([0-9])([A-Z][a-z])/g, '$1_$2')
    .split(/[_$]+/)
    .filter(Boolean);
const inName = (id) => words(id).filter((w) => opCodes.includes(w.toUpperCase()) || codeSet.has(w.toUpperCase()));

const walk = (d) =>
  readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.ts') ? [join(d, e.name)] : [],
  );

export const count = (dir = join(root, 'src')) => {
  const folders = {};
  const names = [];
  const mentions = [];
  // Per file: the mentions that use a code as a noun, in strings and comments.
  const nounsByFile = {};
  const addNouns = (rel, n) => {
    if (n) nounsByFile[rel] = (nounsByFile[rel] ?? 0) + n;
  };
  for (const f of walk(dir)) {
    const rel = relative(root, f).split(sep).join('/');
    const parts = relative(dir, f).split(sep);
    const folder = parts.length > 1 ? parts[0] : '(top)';
    const row = (folders[folder] ??= {
      identifiers: 0,
      strings: 0,
      stringNouns: 0,
      comments: 0,
      commentNouns: 0,
    });
    const text = readFileSync(f, 'utf8');
    const src = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
    const line = (pos) => src.getLineAndCharacterOfPosition(pos).line + 1;
    const seenComments = new Set();
    const comments = (pos) => {
      for (const r of ts.getLeadingCommentRanges(text, pos) ?? []) {
        if (seenComments.has(r.pos)) continue;
        seenComments.add(r.pos);
        const comment = text.slice(r.pos, r.end);
        const hits = inText(comment);
        const nouns = asNouns(comment);
        row.comments += hits.length;
        row.commentNouns += nouns.length;
        addNouns(rel, nouns.length);
        if (hits.length) mentions.push(`${rel}:${line(r.pos)} comment ${hits.join(' ')}; as nouns: ${nouns.join(' ')}`);
      }
    };
    const visit = (n) => {
      comments(n.pos);
      if (ts.isIdentifier(n) || ts.isPrivateIdentifier(n)) {
        const hits = inName(n.text);
        if (hits.length) {
          row.identifiers += hits.length;
          names.push({ file: rel, line: src.getLineAndCharacterOfPosition(n.getStart(src)).line + 1, name: n.text });
        }
      } else if (
        ts.isStringLiteral(n) ||
        ts.isNoSubstitutionTemplateLiteral(n) ||
        n.kind === ts.SyntaxKind.TemplateHead ||
        n.kind === ts.SyntaxKind.TemplateMiddle ||
        n.kind === ts.SyntaxKind.TemplateTail
      ) {
        const hits = inText(n.text);
        const nouns = asNouns(n.text);
        row.strings += hits.length;
        row.stringNouns += nouns.length;
        addNouns(rel, nouns.length);
        if (hits.length)
          mentions.push(
            `${rel}:${line(n.getStart(src))} string ${JSON.stringify(n.text)}; as nouns: ${nouns.join(' ')}`,
          );
      }
      // getChildren, not forEachChild: tokens carry the comments in front of them too.
      for (const c of n.getChildren(src)) visit(c);
    };
    visit(src);
  }
  return { codes, folders, names, mentions, nounsByFile };
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const folder = process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 'src';
  const { folders, names, mentions, nounsByFile } = count(resolve(root, folder));
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ codes, folders, names, nounsByFile }));
  } else {
    const total = { identifiers: 0, strings: 0, stringNouns: 0, comments: 0, commentNouns: 0 };
    const cols = (r) =>
      [r.identifiers, r.strings, r.stringNouns, r.comments, r.commentNouns].map((n, i) =>
        String(n).padStart(i ? 9 : 6),
      );
    console.log(`spec codes: ${codes.join(' ')}${specPath ? '' : ' (spec not found: built-in list)'}`);
    console.log('mentions of a code; "as noun": not a reference in parentheses after domain words');
    const head = ['names', 'strings', 'as noun', 'comments', 'as noun'].map((h, i) => h.padStart(i ? 9 : 6));
    console.log(`${'folder'.padEnd(16)} ${head.join(' ')}`);
    for (const [folder, r] of Object.entries(folders).sort()) {
      for (const k of Object.keys(total)) total[k] += r[k];
      console.log(`${folder.padEnd(16)} ${cols(r).join(' ')}`);
    }
    console.log(`${'total'.padEnd(16)} ${cols(total).join(' ')}`);
    if (process.argv.includes('--names')) for (const n of names) console.log(`${n.file}:${n.line} ${n.name}`);
    if (process.argv.includes('--list')) for (const m of mentions) console.log(m);
  }
}

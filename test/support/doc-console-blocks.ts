// The command blocks of README.md and docs/events.md as data, so a test runs what the page says
// (issue #39 §2): a doc edit that changes a command changes what runs.
// - consoleBlocks(file): every ```console (or sh/bash/shell) block, and every fence with a `$ ` line,
//   with its heading and whether the sentence right above it calls it an illustration.
// - stepsOf(block): its lines as commands (`$ …`: variables, stdin from `echo … |`, the program and
//   its arguments, the comment) and the lines the reader is shown as printed.
// - RUN_BLOCKS: the blocks a test runs (test/ship/doc-commands.test.ts), by page, heading and count;
//   test/ship/doc-console-blocks.test.ts fails on a block that is in neither RUN_BLOCKS nor marked.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** The pages whose command blocks a reader runs. */
export const COMMAND_PAGES = ['README.md', 'docs/events.md'] as const;
export type CommandPage = (typeof COMMAND_PAGES)[number];

export interface ConsoleBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** The nearest heading above it, without its `#`s. */
  heading: string;
  /** Its lines, fences excluded. */
  lines: string[];
  /** The non-empty line right above the fence says it is an illustration (not meant to be run). */
  illustration: boolean;
}

const SHELL_LANGS = new Set(['console', 'sh', 'bash', 'shell', 'zsh', 'shell-session']);

/** Every fenced block of `file` that holds commands: a shell language, or any fence with a `$ ` line. */
export function consoleBlocks(file: string, text = readFileSync(join(ROOT, file), 'utf8')): ConsoleBlock[] {
  const all = text.split('\n');
  const blocks: ConsoleBlock[] = [];
  let heading = '';
  for (let i = 0; i < all.length; i++) {
    const h = /^#{1,6}\s+(.*)$/.exec(all[i]!);
    if (h) heading = h[1]!.trim();
    const open = /^```(\S*)\s*$/.exec(all[i]!);
    if (!open) continue;
    const close = all.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (close < 0) throw new Error(`${file}:${i + 1}: a fence that is never closed`);
    const lines = all.slice(i + 1, close);
    const lang = open[1]!;
    if (SHELL_LANGS.has(lang) || lines.some((l) => l.startsWith('$ '))) {
      let above = i - 1;
      while (above >= 0 && all[above]!.trim() === '') above--;
      blocks.push({
        file,
        line: i + 1,
        lang,
        heading,
        lines,
        illustration: above >= 0 && /\billustration\b/i.test(all[above]!),
      });
    }
    i = close;
  }
  return blocks;
}

/** A `$ ` line, taken apart. */
export interface Command {
  kind: 'command';
  /** The line as the page shows it, without `$ `. */
  text: string;
  /** `NAME=value` words before the program. */
  env: Record<string, string>;
  /** What `echo … |` feeds it (with its newline), else ''. */
  stdin: string;
  program: 'npm start' | 'cli';
  /** The CLI's arguments (after `npm run cli --`); [] for `npm start`. */
  args: string[];
  /** The `# …` comment after it, if any. */
  comment?: string;
}

/** A line the page shows as printed. */
export interface Printed {
  kind: 'printed';
  text: string;
}

/** A JSON document the page shows printed (its lines joined). */
export interface PrintedJson {
  kind: 'json';
  value: Record<string, unknown>;
}

export type Step = Command | Printed | PrintedJson;

/**
 * Takes a `$ ` line apart. Only the shapes the pages use are understood (variables, `echo X |`,
 * `npm start`, `npm run cli -- …`, a trailing comment, words without quotes); anything else throws,
 * so a new shape fails the structural test until a test knows how to run it.
 */
export function parseCommand(text: string): Command {
  const hash = /\s+#\s?(.*)$/.exec(text);
  const comment = hash ? hash[1]!.trim() : undefined;
  let rest = (hash ? text.slice(0, hash.index) : text).trim();
  if (/["'`\\;&<>]|\$\(|\|\|/.test(rest)) throw new Error(`unsupported shell in "${text}"`);
  let stdin = '';
  const echo = /^echo\s+(\S+)\s*\|\s*(.*)$/.exec(rest);
  if (echo) {
    stdin = `${echo[1]!}\n`;
    rest = echo[2]!;
  }
  if (rest.includes('|')) throw new Error(`unsupported pipe in "${text}"`);
  const words = rest.split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length > 0 && /^[A-Z][A-Z0-9_]*=/.test(words[0]!)) {
    const word = words.shift()!;
    const eq = word.indexOf('=');
    env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  const line = words.join(' ');
  const base = { kind: 'command' as const, text, env, stdin, ...(comment ? { comment } : {}) };
  if (line === 'npm start') return { ...base, program: 'npm start', args: [] };
  if (line.startsWith('npm run cli -- ')) return { ...base, program: 'cli', args: words.slice(4) };
  throw new Error(`unsupported command "${text}" (a test runs npm start and npm run cli -- …)`);
}

/**
 * The block's lines in order: commands (`$ …`), and what the page shows printed: lines, and JSON
 * documents (from a line that starts with `{` to the line that closes it). Elisions (`...`) are dropped.
 */
export function stepsOf(block: ConsoleBlock): Step[] {
  const steps: Step[] = [];
  const lines = block.lines.filter((l) => l.trim() !== '' && l.trim() !== '...');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.startsWith('$ ')) steps.push(parseCommand(l.slice(2)));
    else if (l.startsWith('{')) {
      let json = l;
      while (!isJson(json) && i + 1 < lines.length && !lines[i + 1]!.startsWith('$ ')) json += `\n${lines[++i]!}`;
      if (!isJson(json)) throw new Error(`${block.file}:${block.line}: a JSON document that does not parse: ${json}`);
      steps.push({ kind: 'json', value: JSON.parse(json) as Record<string, unknown> });
    } else steps.push({ kind: 'printed', text: l });
  }
  return steps;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export const commandsOf = (block: ConsoleBlock): Command[] =>
  stepsOf(block).filter((s): s is Command => s.kind === 'command');

/**
 * The options a command's comment offers besides it, `(also --since 2h, --reference <ref>, --json)`:
 * each as the words to add to the command.
 */
export function alsoOptions(comment: string | undefined): string[][] {
  const also = comment && /\(also ([^)]*)\)/.exec(comment);
  return also ? also[1]!.split(/,\s*/).map((o) => o.trim().split(/\s+/)) : [];
}

/**
 * A printed line as a pattern: exact, but for what changes from run to run or machine to machine: a
 * time (ISO 8601), a port on 127.0.0.1, a secret shown as `whsec_…`, `by=verify` (the README says
 * the line reads `by=webhook` when the service's webhook wakes the flow first), and `confirming`,
 * which may already read `success … by=verify|webhook (final)` (the README says so after the OTP).
 */
export function printedPattern(text: string): RegExp {
  const escaped = text.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    escaped
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\\\.\d+)?Z/g, '\\S+')
      .replace(/127\\\.0\\\.0\\\.1:\d+/g, '127\\.0\\.0\\.1:\\d+')
      .replace(/whsec_…/g, 'whsec_\\S+')
      .replace(/by=verify/g, 'by=(verify|webhook)')
      // A flow shown confirming may already have concluded (the README says so after the OTP step).
      .replace(
        /^(\\\[\w+ [^\]]+\\\]) confirming (.*)$/,
        '$1 (confirming $2|success $2 by=(verify|webhook) \\(final\\))',
      ),
  );
}

/** Whether some line of `output` shows `printed` (see printedPattern). */
export const shows = (output: string, printed: string): boolean =>
  output.split('\n').some((l) => printedPattern(printed).test(l));

/** The blocks test/ship/doc-commands.test.ts runs: each page's heading, and how many blocks under it. */
export const RUN_BLOCKS: ReadonlyArray<{ file: CommandPage; heading: string; count: number }> = [
  { file: 'README.md', heading: 'Five-minute walk-through: a card payment', count: 4 },
  { file: 'README.md', heading: 'Events to your backend', count: 1 },
  { file: 'docs/events.md', heading: 'Turning it on', count: 1 },
  { file: 'docs/events.md', heading: 'Operator commands', count: 1 },
];

/** The command blocks under `heading` of `file` (not marked as illustrations). */
export const blocksUnder = (file: CommandPage, heading: string): ConsoleBlock[] =>
  consoleBlocks(file).filter((b) => b.heading === heading && !b.illustration);

/**
 * The command blocks of `file` that no test runs and that are not marked as illustrations: those
 * under a heading RUN_BLOCKS does not name, and, under one it names, any beyond its count.
 */
export function unaccountedBlocks(file: CommandPage, text?: string): ConsoleBlock[] {
  const run = consoleBlocks(file, text).filter((b) => !b.illustration);
  const stray: ConsoleBlock[] = [];
  for (const heading of new Set(run.map((b) => b.heading))) {
    const under = run.filter((b) => b.heading === heading);
    const count = RUN_BLOCKS.find((r) => r.file === file && r.heading === heading)?.count ?? 0;
    stray.push(...under.slice(count));
  }
  return stray;
}

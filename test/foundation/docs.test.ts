// The README and docs/ tell the truth about names (issue 27): every npm script, CLI command,
// environment variable and repository path they name exists, and every variable the config reads
// (src/config) is documented somewhere a user looks.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { envSchema } from '../../src/config/config';
import { registerCommands } from '../../src/starters/commands';

const ROOT = join(__dirname, '..', '..');
const DOCS = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const text = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const all = DOCS.map((f) => ({ file: f, text: text(f) }));
/** Every `inline code` span of every page, with its page. */
const spans = all.flatMap(({ file, text: t }) => [...t.matchAll(/`([^`\n]+)`/g)].map((m) => ({ file, code: m[1] })));

const scripts = Object.keys((JSON.parse(text('package.json')) as { scripts: Record<string, string> }).scripts);

/** Every file below `dir` (recursively) whose name passes `keep`. */
const filesIn = (dir: string, keep: (name: string) => boolean): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesIn(join(dir, e.name), keep) : keep(e.name) ? [join(dir, e.name)] : [],
  );
/** NAMEs read or defined outside src/config: process.env.NAME, ${NAME…} in compose and scripts, exported constants. */
const readElsewhere = [
  ...filesIn('src', (n) => n.endsWith('.ts')),
  ...filesIn('scripts', () => true),
  ...filesIn('deploy', () => true),
  'docker-compose.yml',
  'Dockerfile',
].flatMap((f) =>
  [
    ...text(f).matchAll(
      /(?:process\.env\.|env\.|\$\{|export const |export function |['"])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/g,
    ),
  ].map((m) => m[1]),
);

/** Variables read outside src/config: the sandbox process, the SDK's own, test and CI switches, compose's. */
const OTHER_VARIABLES = new Set([
  ...readElsewhere,
  'RECORD_HISTORIES',
  'RECORD_ONLY',
  'CI',
  'NODE_OPTIONS',
  'NODE_ENV',
  'BIND_ADDRESS',
  'TEMPORAL_TEST_ADDRESS',
  'CLAIM_CHECK_TEST_DATABASE_URL',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_SERVICE_NAME',
  'OTEL_TRACES_EXPORTER',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_SDK_DISABLED',
  'TEMPORAL_CONFIG_FILE',
  'TEMPORAL_PROFILE',
  // The Temporal Web UI's own setting (docs/security.md: how the UI passes its token to the codec server).
  'TEMPORAL_CODEC_PASS_ACCESS_TOKEN',
  'TEMPORAL_CODEC_ENDPOINT',
  'TEMPORAL_CODEC_INCLUDE_CREDENTIALS',
]);
/** Prefixes of this project's variables: a backticked NAME with one of them must be a real one. */
const OUR_PREFIXES =
  /^(PAYMENTS|TEMPORAL|WORKER|SANDBOX|CLAIM_CHECK|CODEC|WEBHOOK|METRICS|HEALTH|VA|RECONCILIATION|PAYLOAD|LOG|DEPLOYMENT|OTEL)(_|$)/;

describe('the names the README and docs use', () => {
  it('names only npm scripts that exist', () => {
    const named = spans.flatMap(({ file, code }) =>
      [...code.matchAll(/\bnpm run ([a-z][\w:.-]*)/g)].map((m) => ({ file, script: m[1] })),
    );
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((n) => !scripts.includes(n.script)).map((n) => `${n.file}: npm run ${n.script}`)).toEqual([]);
  });

  it('names only CLI commands the CLI has', () => {
    // Every command the CLI registers, at any depth, as its program holds them (nothing runs).
    const program = new Command('payflow');
    registerCommands(program, () => Promise.reject(new Error('not run')));
    const namesOf = (c: Command): string[] => c.commands.flatMap((sub) => [sub.name(), ...namesOf(sub)]);
    const commands = new Set(namesOf(program));
    const named = all.flatMap(({ file, text: t }) =>
      [...t.matchAll(/npm run cli -- ((?:[a-z][\w-]* ?){1,2})/g)].map((m) => ({ file, words: m[1].trim().split(' ') })),
    );
    expect(named.length).toBeGreaterThan(20);
    expect(
      named
        .filter((n) => n.words.some((w) => !commands.has(w)))
        .map((n) => `${n.file}: npm run cli -- ${n.words.join(' ')}`),
    ).toEqual([]);
  });

  it('names only environment variables something reads', () => {
    const known = new Set([...Object.keys(envSchema.shape), ...OTHER_VARIABLES]);
    const named = spans.flatMap(({ file, code }) =>
      [...code.matchAll(/\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/g)]
        .map((m) => m[1])
        .filter((v) => OUR_PREFIXES.test(v) && !v.endsWith('_'))
        .map((v) => ({ file, v })),
    );
    expect(named.length).toBeGreaterThan(50);
    expect([...new Set(named.filter((n) => !known.has(n.v)).map((n) => `${n.file}: ${n.v}`))]).toEqual([]);
  });

  it('names only repository paths that exist', () => {
    const named = spans.flatMap(({ file, code }) =>
      [...code.matchAll(/(?:^|[\s(])((?:src|test|docs|scripts|bench|chaos|deploy|examples)\/[\w./-]+)/g)]
        .filter((m) => !/^[<*{]/.test(code.slice((m.index ?? 0) + m[0].length)))
        .map((m) => m[1].replace(/[.,:;)]+$/, ''))
        .filter((p) => !/[<>*{}]/.test(p) && !p.includes('...') && !p.endsWith('-'))
        // `npx jest test/x/y-e2e` names a test file by its stem, as jest takes it
        .map((p) => (/^test\/.*[^/]$/.test(p) && !existsSync(join(ROOT, p)) ? `${p}.test.ts` : p))
        .map((p) => ({ file, p })),
    );
    expect(named.length).toBeGreaterThan(50);
    expect([...new Set(named.filter((n) => !existsSync(join(ROOT, n.p))).map((n) => `${n.file}: ${n.p}`))]).toEqual([]);
  });

  it('documents every variable the config reads', () => {
    const docs = all.map((d) => d.text).join('\n') + text('.env.example');
    expect(Object.keys(envSchema.shape).filter((v) => !docs.includes(v))).toEqual([]);
  });

  it('lists every variable the config reads in .env.example (commented out is fine), and nothing it does not read', () => {
    const example = text('.env.example');
    // `NAME=` at the start of a line, or after `# ` (a commented default or example).
    const listed = new Set([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*[A-Z0-9])=/gm)].map((m) => m[1]));
    expect(Object.keys(envSchema.shape).filter((v) => !listed.has(v))).toEqual([]);
    const known = new Set([...Object.keys(envSchema.shape), ...OTHER_VARIABLES]);
    expect([...listed].filter((v) => !known.has(v))).toEqual([]);
  });
});

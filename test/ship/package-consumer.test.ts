// The package as a backend gets it, from a fresh clone of the committed HEAD (not the working tree,
// where a dist/ built earlier would hide a package that ships none): `npm pack` there builds first
// (the `prepack` script) and makes the tarball (dist and its types, the LICENSE; no sources, tests,
// scripts or source maps), and `npm publish --dry-run` accepts it under the scoped name with
// restricted access. Two throwaway backends install the tarball side by side:
// - with npm: a consumer script that uses every documented import type-checks and runs, once as
//   CommonJS (consumer.cts) and once as ESM (consumer.mts); it checks that an API error from the
//   package's PaymentsClient is `instanceof` the package's error classes and that verifyEvent accepts
//   a signed event and refuses a tampered one; the client entry loads no @temporalio/worker;
// - with pnpm (pinned, no hoisting: a package sees only what it declares, so an undeclared import
//   fails): every entry loads, the same consumer runs, and examples/merchant-backend/server.js starts
//   on the suite's dev server and claim-check database, serves its page and refuses a bad card by field.
// Nothing runs a dependency's install script that the package needs (no postinstall of its own: a
// backend fetches no Python, Temporal CLI or test server).
// Slow (about a minute): the build in the clone, then npm and pnpm install the package's
// dependencies (from their caches when they are there).
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { runCommand, type CommandResult } from '../support/run-command';
import { testConfig } from '../support/stack';

jest.setTimeout(600_000);

/** pnpm, pinned, run through npx (npm's cache keeps it): the strict installer a backend may use. */
const PNPM = 'pnpm@12.21.0';

// npm's own log level, whatever ran the suite (`npm run --silent` passes loglevel=silent down, and a
// silent `npm publish --dry-run` prints nothing to check).
const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_loglevel: 'notice' };
const run = (command: string, args: string[], cwd: string): SpawnSyncReturns<string> =>
  spawnSync(command, args, { cwd, encoding: 'utf8', env: npmEnv });
/** Like `run` above, without blocking the event loop, so that independent commands run side by side. */
const spawnAsync = (command: string, args: string[], cwd: string) => runCommand(command, args, { cwd, env: npmEnv });
const ok = <R extends { status: number | null; stdout: string; stderr: string }>(r: R, what: string): string => {
  if (r.status !== 0) throw new Error(`${what} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};

const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
  private?: boolean;
  publishConfig?: { access?: string };
  devDependencies: Record<string, string>;
};
const ENTRIES = [pkg.name, `${pkg.name}/client`, `${pkg.name}/nexus`, `${pkg.name}/nexus/service`];
const work = mkdtempSync(join(tmpdir(), 'payflow-consumer-'));
const clone = join(work, 'clone');
const npmBackend = join(work, 'npm-backend');
const pnpmBackend = join(work, 'pnpm-backend');
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * A clone of the committed HEAD. Its node_modules is a link to the working tree's: the same locked
 * dependencies, without a second `npm install` (about 50 s); the build reads them, the tarball holds none.
 */
function cloneHead(): void {
  const head = ok(run('git', ['rev-parse', 'HEAD'], PROJECT_ROOT), 'git rev-parse').trim();
  ok(run('git', ['clone', '--quiet', '--no-checkout', PROJECT_ROOT, clone], work), 'git clone');
  ok(run('git', ['checkout', '--quiet', head], clone), 'git checkout');
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(clone, 'node_modules'));
}

/** `npm pack` in the clone (its prepack builds; the build's output comes before npm's JSON). */
function pack(): { tarball: string; files: string[] } {
  const out = ok(run('npm', ['pack', '--json', '--pack-destination', work], clone), 'npm pack');
  const packed = JSON.parse(out.slice(out.search(/^\[/m))) as { filename: string; files: { path: string }[] }[];
  return { tarball: join(work, packed[0].filename), files: packed[0].files.map((f) => f.path) };
}

/** A new project that installs the tarball: with npm (and TypeScript for the consumer), or with pnpm. */
function installInto(dir: string, tarball: string, installer: 'npm' | 'pnpm'): Promise<CommandResult> {
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '0.0.0', private: true }));
  if (installer === 'npm')
    return spawnAsync(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        tarball,
        `typescript@${pkg.devDependencies.typescript}`,
        `@types/node@${pkg.devDependencies['@types/node']}`,
      ],
      dir,
    );
  // hoist=false: no hidden node_modules/.pnpm/node_modules where an undeclared package would still be
  // found. The dependencies' own build scripts (@swc/core, protobufjs) are not needed: left unapproved.
  return spawnAsync(
    'npx',
    ['--yes', PNPM, 'add', '--prefer-offline', '--config.hoist=false', '--config.strict-dep-builds=false', tarball],
    dir,
  );
}

/** The packages `require(entry)` loads in a new Node process of `dir` (as a backend's process would). */
function packagesLoadedBy(entry: string, dir: string): string[] {
  const script = `require(${JSON.stringify(entry)});
    const names = Object.keys(require.cache).filter((f) => f.includes('/node_modules/'))
      .map((f) => f.split('/node_modules/').pop().split('/')).map((p) => (p[0].startsWith('@') ? p[0] + '/' + p[1] : p[0]));
    console.log(JSON.stringify([...new Set(names)].sort()));`;
  return JSON.parse(ok(run(process.execPath, ['-e', script], dir), `require(${entry}) in ${dir}`)) as string[];
}

/** examples/merchant-backend/server.js, run from `dir` on the suite's dev server and claim-check database. */
async function startExampleBackend(dir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  copyFileSync(join(PROJECT_ROOT, 'examples', 'merchant-backend', 'server.js'), join(dir, 'server.js'));
  const config = testConfig();
  const backend = spawn(process.execPath, ['server.js'], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      TEMPORAL_ADDRESS: config.temporal.address,
      TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
      CLAIM_CHECK_DATABASE_URL: config.claimCheck.databaseUrl,
      MERCHANT_BACKEND_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [backend.stdout, backend.stderr]) stream.on('data', (d: Buffer) => (output += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const listening = /listening on (http:\/\/\S+)/.exec(output);
      if (listening) resolve((clearInterval(timer), listening[1]));
    }, 50);
    backend.once(
      'exit',
      (code) => (clearInterval(timer), reject(new Error(`the backend exited (${code}):\n${output}`))),
    );
  });
  const stop = () =>
    new Promise<void>((resolve) =>
      backend.exitCode !== null ? resolve() : (backend.once('exit', () => resolve()), backend.kill('SIGTERM')),
    );
  return { url, stop };
}

// Every name the docs and the example backend import, and the API error classes (instanceof).
const CONSUMER = `import {
  PaymentsClient,
  PaymentsApiError,
  BadRequestError,
  AuthenticationError,
  NotFoundError,
  ConflictError,
  RateLimitError,
  ServerError,
  ConnectionError,
  TimeoutError,
  ResponseValidationError,
  RequestValidationError,
  connectStarters,
  closeStarters,
  startCardPayment,
  startCardPaymentForStep,
  submitPin,
  submitOtp,
  getCardPaymentState,
  startCheckout,
  getCheckoutState,
  runSmsSend,
  startSmsCampaign,
  followSmsCampaign,
  followUntilDone,
  StarterInputError,
  DuplicateReferenceError,
  PaymentStepError,
  verifyEvent,
  signEvent,
  newNotifySecret,
  WebhookVerificationError,
  MERCHANT_EVENT_TYPES,
  ConfigError,
  loadConfig,
  type AppConfig,
  type CardPaymentRequest,
  type MerchantEvent,
  type MerchantEventType,
  type PaymentsClientOptions,
  type StarterContext,
} from '@payflow/temporal';

const functions: Record<string, unknown> = {
  BadRequestError, AuthenticationError, NotFoundError, ConflictError, RateLimitError, ServerError, TimeoutError,
  ResponseValidationError, RequestValidationError, connectStarters, closeStarters, startCardPayment,
  startCardPaymentForStep, submitPin, submitOtp, getCardPaymentState, startCheckout, getCheckoutState, runSmsSend,
  startSmsCampaign, followSmsCampaign, followUntilDone, StarterInputError, DuplicateReferenceError, PaymentStepError,
  ConfigError, loadConfig,
};

async function main(): Promise<void> {
  for (const [name, value] of Object.entries(functions))
    if (typeof value !== 'function') throw new Error(name + ' is not exported as a function');

  // Nothing listens on port 9: the client's error is the package's ConnectionError.
  const options: PaymentsClientOptions = { baseUrl: 'http://127.0.0.1:9', secretKey: 'sk_test_consumer', connectTimeoutMs: 2000 };
  const client = new PaymentsClient(options);
  let caught: unknown;
  try {
    await client.call('transactions.verify', { transaction_ref: 'ORD-1' });
  } catch (err) {
    caught = err;
  }
  await client.close();
  if (!(caught instanceof ConnectionError) || !(caught instanceof PaymentsApiError))
    throw new Error('not the package\\'s ConnectionError: ' + String(caught));

  const secret = newNotifySecret();
  const type: MerchantEventType = MERCHANT_EVENT_TYPES[0];
  const now = new Date().toISOString();
  const event: MerchantEvent = {
    type,
    id: 'evt_consumer_1',
    created_at: now,
    data: { version: 1, flow: 'card-payment', reference: 'ORD-1', status: 'success', amount: 250000, currency: 'NGN', sequence: 1, occurred_at: now },
  };
  const signed = signEvent(secret, event);
  if (verifyEvent(secret, signed.body, signed.headers).id !== event.id) throw new Error('verifyEvent lost the id');
  let refused: unknown;
  try {
    verifyEvent(secret, signed.body.replace('250000', '1'), signed.headers);
  } catch (err) {
    refused = err;
  }
  if (!(refused instanceof WebhookVerificationError)) throw new Error('a tampered event was not refused');

  const request: Pick<CardPaymentRequest, 'amount' | 'currency'> = { amount: 250000, currency: 'NGN' };
  const config: Pick<AppConfig, 'temporal'> | undefined = undefined;
  const ctx: StarterContext | undefined = undefined;
  void [request, config, ctx];
  console.log('consumer ok: ' + Object.keys(functions).length + ' functions, instanceof holds');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
`;

/** Compiles the consumer in the npm backend (its TypeScript): out/consumer.cjs and out/consumer.mjs. */
function compileConsumer(): void {
  writeFileSync(join(npmBackend, 'consumer.cts'), CONSUMER);
  writeFileSync(join(npmBackend, 'consumer.mts'), CONSUMER);
  writeFileSync(
    join(npmBackend, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        strict: true,
        skipLibCheck: true,
        types: ['node'],
        outDir: 'out',
      },
      files: ['consumer.cts', 'consumer.mts'],
    }),
  );
  const tsc = join(npmBackend, 'node_modules', 'typescript', 'bin', 'tsc');
  ok(run(process.execPath, [tsc, '-p', 'tsconfig.json'], npmBackend), 'tsc');
}

/** The compiled consumers (`out/` of the npm backend) run from `dir`: what each printed and how it ended. */
async function runConsumers(
  dir: string,
): Promise<{ script: string; status: number | null; stderr: string; stdout: string }[]> {
  const scripts = [join(npmBackend, 'out', 'consumer.cjs'), join(npmBackend, 'out', 'consumer.mjs')];
  // Copied into `dir`, so that the package resolves from that project's node_modules.
  const copies = scripts.map((script) => {
    const copy = join(dir, `run-${script.split('/').pop()}`);
    copyFileSync(script, copy);
    return copy;
  });
  const runs = await Promise.all(copies.map((copy) => spawnAsync(process.execPath, [copy], dir)));
  return runs.map((r, i) => ({ script: copies[i], status: r.status, stderr: r.stderr, stdout: r.stdout }));
}

describe('the package as a backend installs it, from a fresh clone', () => {
  let tarball: string;
  let files: string[];
  let installs: Record<'npm' | 'pnpm', CommandResult>;
  // Reads only the clone (no registry write): started beside the installs, read by its test.
  let publishDryRun: Promise<CommandResult>;

  beforeAll(async () => {
    const started = Date.now();
    cloneHead();
    ({ tarball, files } = pack());
    const packed = Date.now();
    // The pack built dist/ in the clone: the dry run checks what would be published, not the build again.
    publishDryRun = spawnAsync('npm', ['publish', '--dry-run', '--ignore-scripts'], clone);
    const [npmInstall, pnpmInstall] = await Promise.all([
      installInto(npmBackend, tarball, 'npm'),
      installInto(pnpmBackend, tarball, 'pnpm'),
    ]);
    installs = { npm: npmInstall, pnpm: pnpmInstall };
    process.stderr.write(
      `package-consumer: clone and pack ${Math.round((packed - started) / 1000)} s, npm and pnpm installs ${Math.round((Date.now() - packed) / 1000)} s\n`,
    );
  });

  it('is publishable: MIT, scoped, restricted, and npm publish --dry-run in the clone accepts it', async () => {
    expect(pkg).toMatchObject({ license: 'MIT', name: '@payflow/temporal', publishConfig: { access: 'restricted' } });
    expect(pkg.private).toBeUndefined();
    expect(readFileSync(join(PROJECT_ROOT, 'LICENSE'), 'utf8')).toMatch(
      /^MIT License[\s\S]*payflow-temporal contributors/,
    );
    const dry = await publishDryRun;
    expect(dry.status).toBe(0);
    expect(dry.stdout + dry.stderr).toContain(`${pkg.name}@${pkg.version}`);
    expect(dry.stdout + dry.stderr).toContain('restricted access');
  });

  it('the tarball holds the built entries, their types, the bin and the LICENSE; no sources, scripts, tests or maps', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'LICENSE',
        'dist/starters/index.js',
        'dist/starters/index.d.ts',
        'dist/starters/client.js',
        'dist/starters/client.d.ts',
        'dist/nexus/index.js',
        'dist/nexus/payments-service.js',
        'dist/starters/cli.js',
        'dist/workflow-bundle.js',
      ]),
    );
    expect(files.filter((f) => /^(src|test|bench|chaos|scripts)\//.test(f) || f.endsWith('.map'))).toEqual([]);
  });

  it('npm: the consumer type-checks and runs from CommonJS and from ESM; the client entry loads no @temporalio/worker', async () => {
    ok(installs.npm, 'npm install');
    compileConsumer();
    const [runs, bin] = await Promise.all([
      runConsumers(npmBackend),
      spawnAsync(join(npmBackend, 'node_modules', '.bin', 'payflow'), ['--version'], npmBackend),
    ]);
    for (const { script, status, stderr, stdout } of runs) {
      expect({ script, status, stderr }).toEqual({ script, status: 0, stderr: '' });
      expect(stdout).toMatch(/^consumer ok: \d+ functions, instanceof holds/);
    }
    expect({ status: bin.status, stdout: bin.stdout }).toEqual({ status: 0, stdout: `${pkg.version}\n` });
    const client = packagesLoadedBy(`${pkg.name}/client`, npmBackend);
    expect(client).toContain('@temporalio/client');
    expect(client).not.toContain('@temporalio/worker');
  });

  it('pnpm (strict: no hoisting): every entry loads, the consumer runs, the example backend serves and validates', async () => {
    ok(installs.pnpm, `pnpm (${PNPM}) add`);
    for (const entry of ENTRIES) expect(packagesLoadedBy(entry, pnpmBackend).length).toBeGreaterThan(0);
    // The npm test compiled the consumer; this one alone (-t pnpm) compiles it here.
    if (!existsSync(join(npmBackend, 'out', 'consumer.cjs'))) compileConsumer();
    for (const { script, status, stderr } of await runConsumers(pnpmBackend))
      expect({ script, status, stderr }).toEqual({ script, status: 0, stderr: '' });
    const backend = await startExampleBackend(pnpmBackend);
    try {
      const page = await fetch(`${backend.url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<form id="card">');
      const bad = await fetch(`${backend.url}/api/card`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 800_000, name: 'Ada Obi', email: 'ada@example.com', card: { number: '4242' } }),
      });
      expect(bad.status).toBe(400);
      expect(String(((await bad.json()) as { error?: unknown }).error)).toMatch(/card/);
    } finally {
      await backend.stop();
    }
  });
});

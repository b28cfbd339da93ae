// The package as a backend gets it from the registry: `npm pack` makes the tarball (dist and its
// types, the LICENSE; no sources, tests or source maps), `npm publish --dry-run` accepts it, and a
// throwaway project installs it and type-checks and runs a consumer script that uses every
// documented import, once as CommonJS (consumer.cts) and once as ESM (consumer.mts). The script
// checks that an API error from the package's PaymentsClient is `instanceof` the package's error
// classes and that verifyEvent accepts a signed event and refuses a tampered one.
// Slow: npm installs the package's dependencies (from npm's cache when they are there).
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { runCommand } from '../support/run-command';
import { ensureBuilt } from './build';

jest.setTimeout(600_000);

// npm's own log level, whatever ran the suite (`npm run --silent` passes loglevel=silent down, and a
// silent `npm publish --dry-run` prints nothing to check).
const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_loglevel: 'notice' };
const npm = (args: string[], cwd: string): SpawnSyncReturns<string> =>
  spawnSync('npm', args, { cwd, encoding: 'utf8', env: npmEnv });
/** Like `npm` above, without blocking the event loop, so that independent commands run side by side. */
const spawnAsync = (command: string, args: string[], cwd: string) => runCommand(command, args, { cwd, env: npmEnv });
const ok = (r: SpawnSyncReturns<string>, what: string): string => {
  if (r.status !== 0) throw new Error(`${what} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};

const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
  private?: boolean;
  devDependencies: Record<string, string>;
};
const work = mkdtempSync(join(tmpdir(), 'payflow-consumer-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

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
} from 'payflow-temporal';

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

describe('the package as a backend installs it', () => {
  let tarball: string;
  let files: string[];
  // Reads only the project (no registry write): started with the pack, read by its test.
  let publishDryRun: ReturnType<typeof spawnAsync>;

  beforeAll(async () => {
    await ensureBuilt();
    publishDryRun = spawnAsync('npm', ['publish', '--dry-run'], PROJECT_ROOT);
    const packed = JSON.parse(ok(npm(['pack', '--json', '--pack-destination', work], PROJECT_ROOT), 'npm pack')) as {
      filename: string;
      files: { path: string }[];
    }[];
    tarball = join(work, packed[0].filename);
    files = packed[0].files.map((f) => f.path);
  });

  it('is publishable: MIT, not private, and npm publish --dry-run accepts it', async () => {
    expect(pkg).toMatchObject({ license: 'MIT' });
    expect(pkg.private).toBeUndefined();
    expect(readFileSync(join(PROJECT_ROOT, 'LICENSE'), 'utf8')).toMatch(
      /^MIT License[\s\S]*payflow-temporal contributors/,
    );
    const dry = await publishDryRun;
    expect(dry.status).toBe(0);
    expect(dry.stdout + dry.stderr).toContain(`${pkg.name}@${pkg.version}`);
  });

  it('the tarball holds the built entry, its types, the bin and the LICENSE; no sources, tests or maps', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'LICENSE',
        'dist/starters/index.js',
        'dist/starters/index.d.ts',
        'dist/starters/cli.js',
        'scripts/install-temporal.mjs',
      ]),
    );
    expect(files.filter((f) => /^(src|test|bench|chaos)\//.test(f) || f.endsWith('.map'))).toEqual([]);
  });

  it('installs into a new project; the consumer type-checks and runs from CommonJS and from ESM', async () => {
    writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'consumer', version: '0.0.0', private: true }));
    const started = Date.now();
    ok(
      npm(
        [
          'install',
          '--no-audit',
          '--no-fund',
          '--prefer-offline',
          '--ignore-scripts=false',
          tarball,
          `typescript@${pkg.devDependencies.typescript}`,
          `@types/node@${pkg.devDependencies['@types/node']}`,
        ],
        work,
      ),
      'npm install',
    );
    process.stderr.write(`package-consumer: npm install took ${Math.round((Date.now() - started) / 1000)} s\n`);
    writeFileSync(join(work, 'consumer.cts'), CONSUMER);
    writeFileSync(join(work, 'consumer.mts'), CONSUMER);
    writeFileSync(
      join(work, 'tsconfig.json'),
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
    const tsc = join(work, 'node_modules', 'typescript', 'bin', 'tsc');
    ok(spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: work, encoding: 'utf8' }), 'tsc');
    // The two consumers and the bin npm linked (the CLI from the installed package), side by side.
    const scripts = ['out/consumer.cjs', 'out/consumer.mjs'];
    const [cjs, mjs, bin] = await Promise.all([
      ...scripts.map((script) => spawnAsync(process.execPath, [script], work)),
      spawnAsync(join(work, 'node_modules', '.bin', 'payflow'), ['--version'], work),
    ]);
    for (const [script, run] of [
      [scripts[0], cjs],
      [scripts[1], mjs],
    ] as const) {
      expect({ script, status: run.status, stderr: run.stderr }).toEqual({ script, status: 0, stderr: '' });
      expect(run.stdout).toMatch(/^consumer ok: \d+ functions, instanceof holds/);
    }
    expect({ status: bin.status, stdout: bin.stdout }).toEqual({ status: 0, stdout: `${pkg.version}\n` });
  });
});

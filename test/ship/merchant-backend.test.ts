// The library backends use: package.json "exports" the typed starters (dist/starters/index.js +
// .d.ts), the client entry (`/client`), the Nexus entries (`/nexus`, `/nexus/service`) and a `payflow`
// bin (dist/starters/cli.js). examples/merchant-backend/server.js, a plain node:http backend that
// imports nothing but `@payflow/temporal/client` (resolved by Node through the
// package's "exports", as in a backend that installed it), runs as its own process against the
// stack: a hosted checkout and a card payment whose PIN and OTP its user posts, to the result.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtinModules } from 'node:module';
import type { RunningServices } from '../../src/stack/services';
import { SANDBOX_OTP, SANDBOX_PIN, TEST_CARDS } from '../../src/sandbox';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { startServices, testConfig } from '../support/stack';
import { eventually } from '../support/polling';
import { SandboxAdmin } from '../support/sandbox-admin';
import { BUILT, ensureBuilt } from './build';
import { newNotifySecret, signEvent, type MerchantEvent } from '../../src/notify';

jest.setTimeout(90_000);

const EXAMPLE = join(PROJECT_ROOT, 'examples', 'merchant-backend', 'server.js');
const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  main: string;
  types: string;
  exports: Record<string, unknown>;
  bin: Record<string, string>;
};
// The worker signs the payments' events with this secret; the backend verifies them with it.
const notifySecret = newNotifySecret();
const config = testConfig({ NOTIFY_SECRET: notifySecret });
let services: RunningServices;
let backend: ChildProcess;
let backendUrl: string;
let backendOutput = '';

beforeAll(async () => {
  await ensureBuilt();
  services = await startServices(config);
  backend = spawn(process.execPath, [EXAMPLE], {
    cwd: PROJECT_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      TEMPORAL_ADDRESS: config.temporal.address,
      TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
      CLAIM_CHECK_DATABASE_URL: config.claimCheck.databaseUrl,
      MERCHANT_BACKEND_PORT: '0',
      NOTIFY_SECRET: notifySecret,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  backend.stdout!.on('data', (d: Buffer) => (backendOutput += d.toString()));
  backend.stderr!.on('data', (d: Buffer) => (backendOutput += d.toString()));
  backendUrl = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /listening on (http:\/\/\S+)/.exec(backendOutput);
      if (m) {
        clearInterval(timer);
        resolve(m[1]);
      }
    }, 50);
    backend.once(
      'exit',
      (code) => (clearInterval(timer), reject(new Error(`the backend exited (${code}):\n${backendOutput}`))),
    );
  });
}, 180_000);
afterAll(async () => {
  if (backend && backend.exitCode === null)
    await new Promise((r) => (backend.once('exit', r), backend.kill('SIGTERM')));
  await services?.stop();
});

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${backendUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
/** GETs `path` until `done`; at the deadline, the last answer for the test's assertions. */
const until = (path: string, done: (s: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> =>
  eventually(async () => (await api('GET', path)).body, done, {
    attempts: 302,
    intervalMs: 100,
    returnLastOnTimeout: true,
  });

describe('the package', () => {
  it('exports the built, typed starters and a payflow bin', () => {
    expect(pkg.exports).toEqual({
      '.': { types: './dist/starters/index.d.ts', default: './dist/starters/index.js' },
      './client': { types: './dist/starters/client.d.ts', default: './dist/starters/client.js' },
      './nexus': { types: './dist/nexus/index.d.ts', default: './dist/nexus/index.js' },
      './nexus/service': { types: './dist/nexus/payments-service.d.ts', default: './dist/nexus/payments-service.js' },
      './package.json': './package.json',
    });
    expect(join(PROJECT_ROOT, pkg.main)).toBe(BUILT.startersIndex);
    expect(join(PROJECT_ROOT, pkg.types)).toBe(BUILT.startersTypes);
    expect(join(PROJECT_ROOT, pkg.bin.payflow)).toBe(BUILT.cli);
    expect(readFileSync(BUILT.cli, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    // What a backend gets from require('@payflow/temporal') (self-reference through "exports").
    const loaded = spawnSync(
      process.execPath,
      [
        '-e',
        `const p = require(${JSON.stringify(pkg.name)}); console.log(require.resolve(${JSON.stringify(pkg.name)})); console.log(['connectStarters','startCardPayment','startCheckout','submitPin','submitOtp','getCardPaymentState'].filter((n) => typeof p[n] !== 'function').join(',') || 'all functions')`,
      ],
      { cwd: PROJECT_ROOT, encoding: 'utf8' },
    );
    expect(loaded.stderr).toBe('');
    expect(loaded.stdout.split('\n')).toEqual([BUILT.startersIndex, 'all functions', '']);
    // Only the public entry: internals are not reachable through the package name.
    const internal = spawnSync(
      process.execPath,
      ['-e', `require(${JSON.stringify(`${pkg.name}/dist/config/config.js`)})`],
      { cwd: PROJECT_ROOT, encoding: 'utf8' },
    );
    expect(internal.status).not.toBe(0);
    expect(internal.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  it('runs the bin: `payflow --help` lists the commands', () => {
    const help = spawnSync(process.execPath, [BUILT.cli, '--help'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/Usage: payflow/);
    for (const command of ['pay', 'mandate', 'pos', 'vend', 'ops']) expect(help.stdout).toContain(command);
  });

  it('type-checks the example backend against the published .d.ts', () => {
    const tsc = spawnSync(
      process.execPath,
      [
        join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        '-p',
        join(PROJECT_ROOT, 'examples', 'merchant-backend', 'tsconfig.json'),
      ],
      { encoding: 'utf8' },
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });
});

describe('a merchant backend taking payments through the package', () => {
  it("imports nothing but the package's client entry and Node built-ins", () => {
    const source = readFileSync(EXAMPLE, 'utf8');
    const required = [...source.matchAll(/require\(['"]([^'"]+)['"]\)/g)].map((m) => m[1]);
    const client = `${pkg.name}/client`;
    expect(required).toContain(client);
    for (const name of required)
      expect(name === client || name.startsWith('node:') || builtinModules.includes(name)).toBe(true);
    expect(source).not.toMatch(/\bimport\s|from\s+['"]\.|require\(['"]\./);
  });

  it('serves its page', async () => {
    const page = await fetch(`${backendUrl}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form id="card">');
  });

  it('starts a hosted checkout; the payer pays on the checkout page; the backend shows success', async () => {
    const started = await api('POST', '/api/checkout', { amount: 250_000, email: 'ada@example.com' });
    expect(started.status).toBe(201);
    const { reference, checkoutUrl } = started.body as { reference: string; checkoutUrl: string };
    expect(checkoutUrl).toBe(`${services.sandboxUrl}/checkout/${reference}`);
    // The payer, on the service's page.
    const post = (url: string, body: unknown) =>
      fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    await post(`${checkoutUrl}/card`, {
      number: TEST_CARDS.otpOnly,
      cvv: '123',
      expiry_month: '12',
      expiry_year: '29',
    });
    await post(`${checkoutUrl}/authorize`, { otp: SANDBOX_OTP });
    expect(await until(`/api/payments/${reference}`, (s) => s.status === 'success')).toMatchObject({
      kind: 'checkout',
      reference,
      status: 'success',
    });
    expect(await new SandboxAdmin(services.sandboxUrl!).ledger({ reference })).toHaveLength(1);
  });

  it('takes a card payment: the user posts the PIN, then the OTP, and sees the result; bad input is a 400 naming the field', async () => {
    const bad = await api('POST', '/api/card', {
      amount: 800_000,
      name: 'Ada Obi',
      email: 'ada@example.com',
      card: { number: '4242', cvv: '123', expiryMonth: '12', expiryYear: '29' },
    });
    expect(bad.status).toBe(400);
    expect(String(bad.body.error)).toMatch(/card/);

    const card = { number: TEST_CARDS.pinThenOtp, cvv: '123', expiryMonth: '12', expiryYear: '29' };
    const started = await api('POST', '/api/card', {
      amount: 800_000,
      name: 'Ada Obi',
      email: 'ada@example.com',
      card,
    });
    expect(started).toMatchObject({ status: 201, body: { kind: 'card', status: 'awaiting_pin', expects: 'pin' } });
    const reference = started.body.reference as string;

    const wrongStep = await api('POST', `/api/card/${reference}/otp`, { otp: SANDBOX_OTP });
    expect(wrongStep.status).toBe(409);
    const afterPin = await api('POST', `/api/card/${reference}/pin`, { pin: SANDBOX_PIN });
    expect(afterPin.body).toMatchObject({ status: 'awaiting_otp', expects: 'otp' });
    const afterOtp = await api('POST', `/api/card/${reference}/otp`, { otp: SANDBOX_OTP });
    expect(afterOtp.status).toBe(200);
    expect(await until(`/api/payments/${reference}`, (s) => s.status === 'success')).toMatchObject({
      kind: 'card',
      reference,
      status: 'success',
    });
    expect(await new SandboxAdmin(services.sandboxUrl!).ledger({ reference })).toHaveLength(1);
    // Nothing it printed holds the card number, the PIN or the OTP.
    for (const secret of [TEST_CARDS.pinThenOtp, SANDBOX_OTP]) expect(backendOutput).not.toContain(secret);
  });
});

describe("the backend's orders move on the payments' events, not on polling", () => {
  it('a card payment: the order is pending until its payment.succeeded arrives, verified, then paid; a forged, a repeated and a stale event change nothing', async () => {
    const started = await api('POST', '/api/card', {
      amount: 300_000,
      name: 'Ada Obi',
      email: 'ada@example.com',
      card: { number: TEST_CARDS.otpOnly, cvv: '123', expiryMonth: '12', expiryYear: '29' },
    });
    expect(started).toMatchObject({ status: 201, body: { status: 'awaiting_otp' } });
    const reference = started.body.reference as string;
    expect((await api('GET', `/api/orders/${reference}`)).body).toMatchObject({ status: 'pending', sequence: 0 });

    // The user's OTP; from here the backend never asks for the payment's state: only the event moves the order.
    expect((await api('POST', `/api/card/${reference}/otp`, { otp: SANDBOX_OTP })).status).toBe(200);
    expect(await until(`/api/orders/${reference}`, (o) => o.status === 'paid')).toMatchObject({
      reference,
      status: 'paid',
      sequence: 1,
      amount: 300_000,
    });

    const post = (signed: { body: string; headers: Record<string, string> }) =>
      fetch(`${backendUrl}/events`, { method: 'POST', headers: signed.headers, body: signed.body });
    const event = (type: MerchantEvent['type'], sequence: number): MerchantEvent => ({
      type,
      id: `evt_payment-${reference}_${type}`,
      created_at: new Date().toISOString(),
      data: { version: 1, flow: 'card', reference, status: 'x', sequence, occurred_at: new Date().toISOString() },
    });
    // Forged (another secret): refused.
    expect((await post(signEvent(newNotifySecret(), event('payment.failed', 5)))).status).toBe(400);
    // The same id again (a redelivery): acknowledged, ignored.
    const again = await post(signEvent(notifySecret, event('payment.succeeded', 1)));
    expect(await again.json()).toEqual({ outcome: 'duplicate' });
    // Older than what the order holds: dropped.
    const stale = await post(signEvent(notifySecret, event('payment.needs_attention', 1)));
    expect(await stale.json()).toEqual({ outcome: 'stale' });
    expect((await api('GET', `/api/orders/${reference}`)).body).toMatchObject({ status: 'paid', sequence: 1 });
  });
});

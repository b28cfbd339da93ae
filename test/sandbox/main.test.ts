// The sandbox as its own process (src/sandbox/main.ts): env configuration, the printed address,
// a clean exit on SIGTERM/SIGINT, and no secrets in its log.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { optionsFromEnv } from '../../src/sandbox/main';
import { SANDBOX_OTP, TEST_CARDS } from '../../src/sandbox';
import { SANDBOX_ADMIN_HEADERS } from '../support/sandbox-admin';

const ROOT = join(__dirname, '..', '..');
const KEY = 'sandbox_sk_process_test_key_0001';

function startProcess(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'src', 'sandbox', 'main.ts')],
    {
      cwd: ROOT,
      env: { ...process.env, SANDBOX_PORT: '0', SANDBOX_SECRET_KEYS: KEY, SANDBOX_WEBHOOK_URL: 'none', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox process did not start: ${out}`)), 15_000);
    child.stdout!.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1], output: () => out });
      }
    });
    child.once('exit', (code) => reject(new Error(`sandbox process exited ${code}: ${out}`)));
  });
}

const exited = (child: ChildProcess) => new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

describe('the sandbox as its own process', () => {
  it('runs as its own process, serves requests, logs one line per request without card data or keys, and exits 0 on SIGTERM', async () => {
    const { child, url, output } = await startProcess({});
    try {
      const auth = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
      const charge = await fetch(`${url}/transaction/initiate/process-payment`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          transaction_reference: 'proc-1',
          amount: 1000,
          payment_method: 'card',
          customer: { name: 'A', email: 'a@b.co' },
          card: { number: TEST_CARDS.otpOnly, cvv: '123', expiry_month: '12', expiry_year: '29' },
        }),
      });
      expect(charge.status).toBe(200);
      await fetch(`${url}/transaction/payment/authorize`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ transaction_reference: 'proc-1', authorization: { otp: SANDBOX_OTP } }),
      });
      expect((await fetch(`${url}/__admin/ledger?reference=proc-1`, { headers: SANDBOX_ADMIN_HEADERS })).status).toBe(
        200,
      );
      await new Promise((r) => setTimeout(r, 100));
      expect(output()).toContain('"path":"/transaction/payment/authorize"');
      for (const secret of [TEST_CARDS.otpOnly, KEY, `"${SANDBOX_OTP}"`, '"123"'])
        expect(output()).not.toContain(secret);
    } finally {
      const code = exited(child);
      child.kill('SIGTERM');
      expect(await code).toBe(0);
    }
    expect(output()).toContain('SIGTERM, shutting down');
  }, 30_000);

  it('reads its options from the environment', () => {
    expect(optionsFromEnv({})).toMatchObject({
      port: 4010,
      host: '127.0.0.1',
      webhookUrl: 'http://127.0.0.1:4020/webhooks',
      webhookVersion: 2,
      posRemoteCompleteAfterMs: 4000,
      posProcessorTimeoutMs: 30_000,
    });
    expect(
      optionsFromEnv({
        SANDBOX_PORT: '5000',
        SANDBOX_HOST: '0.0.0.0',
        SANDBOX_SECRET_KEYS: 'sandbox_sk_a, sandbox_sk_b',
        SANDBOX_WEBHOOK_URL: 'none',
        SANDBOX_WEBHOOK_VERSION: '3',
        SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS: '100,200',
        SANDBOX_PUBLIC_URL: 'http://sandbox.local:5000',
      }),
    ).toMatchObject({
      port: 5000,
      host: '0.0.0.0',
      secretKeys: ['sandbox_sk_a', 'sandbox_sk_b'],
      webhookUrl: undefined,
      webhookVersion: 3,
      webhookRetryScheduleMs: [100, 200],
      publicUrl: 'http://sandbox.local:5000',
    });
    expect(() => optionsFromEnv({ SANDBOX_WEBHOOK_VERSION: '4' })).toThrow();
    expect(() => optionsFromEnv({ SANDBOX_PORT: 'abc' })).toThrow();
  });
});

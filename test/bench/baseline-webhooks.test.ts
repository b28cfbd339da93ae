// The bench is fair only if the baseline's notifications never reach our receiver (which would put
// work for them on our task queue). The bench's sandbox holds two merchant accounts; each account's
// webhooks go to its own receiver. A card payment under each key, through the baseline's own
// activities over real HTTP: the baseline's E-1 reaches the baseline's receiver only, ours ours only.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import { optionsFromEnv } from '../../src/sandbox/main';
import { SANDBOX_OTP, SANDBOX_PIN } from '../../src/sandbox/payments';
import { createBaselineActivities } from '../../bench/baseline/activities';
import { baselineCardInput } from '../../bench/scenarios/flows';
import { BASELINE_SECRET_KEY, SECRET_KEY, sandboxMerchantsEnv } from '../../bench/lib/stack';
import { eventually } from '../support/polling';

interface Counting {
  server: Server;
  url: string;
  refs: string[];
}

async function countingReceiver(): Promise<Counting> {
  const refs: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      refs.push(String((JSON.parse(Buffer.concat(chunks).toString()) as { TransactionRef?: string }).TransactionRef));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, refs };
}

let sandbox: Sandbox;
let ours: Counting;
let baseline: Counting;

beforeAll(async () => {
  [ours, baseline] = [await countingReceiver(), await countingReceiver()];
  sandbox = await startSandbox({ ...optionsFromEnv(sandboxMerchantsEnv(ours.url, baseline.url)), port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
  for (const r of [ours, baseline]) await new Promise((done) => r?.server.close(done));
});

async function payByCard(secretKey: string, ref: string): Promise<void> {
  const api = createBaselineActivities({ baseUrl: sandbox.url, secretKey });
  expect(await api.chargeCard(baselineCardInput(ref))).toBe('ValidatePin');
  expect(await api.authorizeCard(ref, { pin: SANDBOX_PIN })).toBe('ValidateOTP');
  expect(await api.authorizeCard(ref, { otp: SANDBOX_OTP })).toBe('Success');
}

/** Waits (up to 30 s) until `done` holds; the test's own assertions then say what is missing. */
const until = (done: () => boolean) =>
  eventually(done, (d) => d, {
    timeoutMs: 30_000,
    intervalMs: 25,
    description: 'the webhooks',
    returnLastOnTimeout: true,
  });

it("the baseline merchant's card webhook goes to its own receiver, never to ours", async () => {
  await payByCard(BASELINE_SECRET_KEY, 'bench-fair-baseline-1');
  await payByCard(SECRET_KEY, 'bench-fair-ours-1'); // the control: our account's webhook reaches ours
  await until(() => baseline.refs.length >= 1 && ours.refs.length >= 1);
  expect(baseline.refs).toEqual(['bench-fair-baseline-1']);
  expect(ours.refs).toEqual(['bench-fair-ours-1']);
  // Every attempt the sandbox made for the baseline's payment was acknowledged by the baseline's receiver.
  expect(sandbox.deliveries({ ref: 'bench-fair-baseline-1' })).toEqual([
    expect.objectContaining({ status: 200, acknowledged: true }),
  ]);
});

it('a merchant key the sandbox does not hold cannot be given a webhook URL', async () => {
  await expect(startSandbox({ webhookUrls: { sandbox_sk_unknown_merchant: 'http://127.0.0.1:1/x' } })).rejects.toThrow(
    /one of the secret keys/,
  );
  expect(() => optionsFromEnv({ SANDBOX_WEBHOOK_URLS: 'no-equals-sign' })).toThrow(/key=url/);
});

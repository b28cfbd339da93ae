// Hosted checkout (by card and by transfer) and recurring charges end to end on the dev server
// against the sandbox: checkout_url at once by update-with-start, webhook confirmation, token
// charges on a schedule with stable references, and cancellation.
import { randomUUID } from 'node:crypto';
import { createLogger } from '../../src/logging/logger';
import { runServices, type RunningServices } from '../../src/stack/services';
import { cancelRecurring, firstPaymentCheckoutUrl, getRecurringState, startCheckout, startRecurring } from '../../src/starters/payments';
import { SANDBOX_OTP, SANDBOX_PIN, TEST_CARDS } from '../../src/sandbox';
import { LogCapture, testConfig, workflowBundle } from '../helpers/temporal';

const config = testConfig();
let services: RunningServices;
beforeAll(async () => {
  services = await runServices({ config, logger: createLogger({ destination: new LogCapture() }), workflowBundle: await workflowBundle() });
});
afterAll(() => services?.stop());

const post = async (url: string, body: unknown = {}) => (await fetch(url, { method: 'POST', body: JSON.stringify(body) })).json() as Promise<{ data: Record<string, unknown> }>;
const ledger = async (reference: string) =>
  ((await (await fetch(`${services.sandboxUrl}/__admin/ledger?reference=${reference}`)).json()) as { data: { kind: string }[] }).data;
const payByCard = async (checkoutUrl: string) => {
  await post(`${checkoutUrl}/card`, { number: TEST_CARDS.pinThenOtp, cvv: '123', expiry_month: '12', expiry_year: '29' });
  await post(`${checkoutUrl}/authorize`, { pin: SANDBOX_PIN });
  await post(`${checkoutUrl}/authorize`, { otp: SANDBOX_OTP });
};

it('checkout by card: checkout_url comes back at once; the webhook confirms', async () => {
  const ref = `co-${randomUUID()}`;
  const { checkoutUrl, handle } = await startCheckout(services.client, config.temporal.taskQueue, { transactionRef: ref, amount: 250_000, currency: 'NGN', email: 'ada@example.com', metadata: { order: 'A-1' } });
  expect(checkoutUrl).toContain(`/checkout/${ref}`);
  expect((await fetch(checkoutUrl)).status).toBe(200);
  await payByCard(checkoutUrl);
  expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook', transactionType: 'Card' });
  expect(await ledger(ref)).toHaveLength(1);
});

it('checkout by transfer: the dynamic account is paid through simulate (A2)', async () => {
  const ref = `ct-${randomUUID()}`;
  const { checkoutUrl, handle } = await startCheckout(services.client, config.temporal.taskQueue, { transactionRef: ref, amount: 180_000, currency: 'NGN', email: 'ada@example.com' });
  const account = (await post(`${checkoutUrl}/transfer`)).data as { virtual_account_number: string; amount: number };
  await services.api.checkout.simulateTransfer({ virtual_account_number: account.virtual_account_number, amount: account.amount } as never);
  expect(await handle.result()).toMatchObject({ status: 'success', transactionType: 'Transfer' });
});

it('checkout that nobody pays expires and is verified as such', async () => {
  const ref = `cx-${randomUUID()}`;
  const { handle } = await startCheckout(services.client, config.temporal.taskQueue, { transactionRef: ref, amount: 100_000, currency: 'NGN', email: 'ada@example.com', expiryMs: 500, webhookGraceMs: 0 });
  await fetch(`${services.sandboxUrl}/__admin/clock/advance`, { method: 'POST', body: JSON.stringify({ ms: 31 * 60 * 1000 }) });
  expect(await handle.result()).toMatchObject({ status: 'expired', confirmedBy: 'verify' });
});

it('recurring: first payment tokenises, three more cycles charge the token with stable references, then cancel', async () => {
  const planRef = `plan-${randomUUID().slice(0, 8)}`;
  const handle = await startRecurring(services.client, config.temporal.taskQueue, { planRef, amount: 150_000, currency: 'NGN', email: 'ada@example.com', intervalMs: 1_000, cyclesPerRun: 2 });
  await payByCard(await firstPaymentCheckoutUrl(services.client, planRef));
  for (let i = 0; i < 200 && (await getRecurringState(services.client, planRef)).cycle < 4; i++) await new Promise((r) => setTimeout(r, 100));
  await cancelRecurring(services.client, planRef);
  const final = await handle.result();
  expect(final.status).toBe('cancelled');
  expect(final.tokenId).toMatch(/^AUTH_/);
  expect(final.cycle).toBeGreaterThanOrEqual(4);
  const charged = final.recentCycles.filter((c) => c.status === 'success').map((c) => c.reference);
  expect(charged.slice(0, 4)).toEqual([1, 2, 3, 4].map((n) => `${planRef}-C${n}`));
  for (const ref of charged) expect(await ledger(ref)).toHaveLength(1);
  // The token is cancelled at the service: charging it again is refused.
  await expect(services.api.tokens.charge({ amount: 150_000, token_id: final.tokenId!, transaction_ref: `${planRef}-X` })).rejects.toThrow();
  // continue-as-new kept history bounded: the run that finished is not the first.
  const desc = await handle.describe();
  expect(desc.runId).not.toBe(desc.raw.workflowExecutionInfo?.firstRunId);
});

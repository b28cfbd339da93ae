// Direct bank debit (token and OTP) and USSD end to end on the dev server against the sandbox.
import { randomUUID } from 'node:crypto';
import { createLogger } from '../../src/logging/logger';
import { runServices, type RunningServices } from '../../src/stack/services';
import { getDirectPaymentState, startBankPayment, startUssdPayment, submitBankCode } from '../../src/starters/payments';
import type { DirectPaymentState } from '../../src/shared/bank-ussd';
import { SANDBOX_OTP } from '../../src/sandbox';
import { LogCapture, testConfig, workflowBundle } from '../helpers/temporal';

const config = testConfig();
let services: RunningServices;
beforeAll(async () => {
  services = await runServices({ config, logger: createLogger({ destination: new LogCapture() }), workflowBundle: await workflowBundle() });
});
afterAll(() => services?.stop());

const customer = { name: 'Ada Obi', email: 'ada@example.com' };
async function waitFor(ref: string, status: DirectPaymentState['status']) {
  for (let i = 0; i < 100; i++) {
    const s = await getDirectPaymentState(services.client, ref).catch(() => undefined);
    if (s?.status === status) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${ref} never reached ${status}`);
}

it.each([
  ['by token', '1234567890', 'ValidateTOKEN'],
  ['by OTP', '0123456789', 'ValidateOTP'],
])('bank debit %s: a wrong code is refused, the right one completes, confirmed by the webhook', async (_name, account, model) => {
  const ref = `bank-${randomUUID()}`;
  const handle = await startBankPayment(services.client, config.temporal.taskQueue, { transactionRef: ref, amount: 250_000, currency: 'NGN', bank: { bankCode: '058', accountOrPhone: account }, customer, webhookGraceMs: 10_000 });
  expect((await waitFor(ref, 'awaiting_code')).authModel).toBe(model);
  const wrong = await submitBankCode(services.client, ref, '000000').catch((e: unknown) => e);
  expect(String((wrong as { cause?: unknown }).cause)).toContain('Invalid OTP or token');
  await submitBankCode(services.client, ref, SANDBOX_OTP);
  expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
});

it('USSD: hands back the code and expiry, then the payment is confirmed by the webhook', async () => {
  const ref = `ussd-${randomUUID()}`;
  const handle = await startUssdPayment(services.client, config.temporal.taskQueue, { transactionRef: ref, amount: 150_000, currency: 'NGN', bankCode: '058', customer });
  const waiting = await waitFor(ref, 'awaiting_payment');
  expect(waiting).toMatchObject({ ussdCode: expect.stringMatching(/^\*058\*/), expiresAt: expect.any(String) });
  await fetch(`${services.sandboxUrl}/__admin/ussd/${ref}/pay`, { method: 'POST' });
  expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
});

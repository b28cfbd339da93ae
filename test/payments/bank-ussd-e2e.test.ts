// Direct bank debit (by token, by OTP) and USSD end to end on the dev server against the sandbox.
import { randomUUID } from 'node:crypto';
import { getDirectPaymentState, waitForState } from '../../src/starters/payment-common';
import { startBankPayment, submitBankCode } from '../../src/starters/bank-payment';
import { startUssdPayment } from '../../src/starters/ussd-payment';
import { StarterInputError } from '../../src/starters/input-error';
import type { BankPaymentInput } from '../../src/shared/bank-payment';
import type { DirectPaymentState } from '../../src/shared/payment-common';
import { SANDBOX_OTP } from '../../src/sandbox';
import { eventTypes, rawHistoryText } from '../support/history';
import { testConfig, useServices } from '../support/stack';
import { recordHistory } from '../support/replay';
import { stepError } from './helpers';

const config = testConfig();
const env = useServices(config);

const customer = { name: 'Ada Obi', email: 'ada@example.com' };
const bank = (account: string, over: Partial<BankPaymentInput> = {}): BankPaymentInput => ({
  transactionRef: `bank-${randomUUID()}`,
  amount: 250_000,
  currency: 'NGN',
  bank: { bankCode: '058', accountOrPhone: account },
  customer,
  webhookGraceMs: 10_000,
  ...over,
});
const waitFor = (ref: string, status: DirectPaymentState['status']) =>
  waitForState(
    () => getDirectPaymentState(env.services.starters, ref),
    (s) => s.status === status,
  );

it.each([
  ['by token', '1234567890', 'ValidateTOKEN'],
  ['by OTP', '0123456789', 'ValidateOTP'],
])(
  'bank debit %s: a wrong code is refused and the flow keeps waiting; the right one completes, confirmed by the webhook',
  async (_name, account, model) => {
    const i = bank(account);
    const handle = await startBankPayment(env.services.starters, i);
    expect(await waitFor(i.transactionRef, 'awaiting_code')).toMatchObject({ authModel: model });
    expect(await stepError(submitBankCode(env.services.starters, i.transactionRef, '12'))).toMatchObject({
      kind: 'not_expected',
      message: 'code must be 4 to 8 digits',
    });
    expect(await stepError(submitBankCode(env.services.starters, i.transactionRef, '000000'))).toMatchObject({
      kind: 'refused',
      message: expect.stringContaining('Invalid OTP or token'),
    });
    expect((await getDirectPaymentState(env.services.starters, i.transactionRef)).status).toBe('awaiting_code');
    expect((await submitBankCode(env.services.starters, i.transactionRef, SANDBOX_OTP)).status).toMatch(
      /^(confirming|success)$/,
    );
    expect(await handle.result()).toMatchObject({
      status: 'success',
      confirmedBy: 'webhook',
      authModel: model,
      refusedCodes: 1,
    });
    expect(await env.admin.ledger(i.transactionRef)).toMatchObject([{ kind: 'bank_debit', amount: 250_000 }]);
    expect(
      (await eventTypes(handle)).filter((t) => t === 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED'),
    ).toHaveLength(2);
    expect(await rawHistoryText(handle)).not.toContain(`"${SANDBOX_OTP}"`);
    if (model === 'ValidateOTP') await recordHistory(handle, 'bank-otp-refused-then-success');
  },
);

it('bank debit refused after the code (insufficient funds): the caller hears it at once and the flow ends failed', async () => {
  const i = bank('0000000051');
  const handle = await startBankPayment(env.services.starters, i);
  await waitFor(i.transactionRef, 'awaiting_code');
  expect(await stepError(submitBankCode(env.services.starters, i.transactionRef, SANDBOX_OTP))).toMatchObject({
    kind: 'ended',
    message: expect.stringContaining('Insufficient funds'),
  });
  expect(await handle.result()).toMatchObject({ status: 'failed', confirmedBy: 'verify' });
  expect(await env.admin.ledger(i.transactionRef)).toHaveLength(0);
});

it('bank debit without a code before the timeout ends expired; pass_charge is carried', async () => {
  // A short webhook grace: at the deadline nothing was paid, so verify decides without waiting it out.
  const i = bank('1234567890', { codeTimeoutMs: 1_000, passCharge: true, webhookGraceMs: 300 });
  const handle = await startBankPayment(env.services.starters, i);
  expect(await handle.result()).toMatchObject({
    status: 'expired',
    confirmedBy: 'verify',
    reason: 'no token or OTP within 1000 ms',
  });
  expect((await env.services.api.transactions.verify({ transaction_ref: i.transactionRef })).data).toMatchObject({
    merchant_amount: 250_000,
    transaction_amount: 250_000 + 3_000,
  });
  const refused = await startBankPayment(env.services.starters, bank('123')).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(StarterInputError);
  expect((refused as StarterInputError).issues).toEqual([
    { field: 'bank.accountOrPhone', rule: 'must be a 10-digit account number or a phone number' },
  ]);
});

it('a bank debit completed at the service while its webhook is held: at the deadline verify finds it and the flow ends success, not expired', async () => {
  const i = bank('0123456789', { codeTimeoutMs: 3_000, webhookGraceMs: 1_000 });
  await env.admin.webhookFault('hold', 5);
  try {
    const handle = await startBankPayment(env.services.starters, i);
    await waitFor(i.transactionRef, 'awaiting_code');
    // The payer's code reaches the service another way (say, a retry from the merchant's backend); our flow never hears of it.
    await env.services.api.direct.validateBank({
      transaction_reference: i.transactionRef,
      authorization: { otp_token: SANDBOX_OTP },
    });
    expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'verify' });
    expect(await env.admin.ledger(i.transactionRef)).toMatchObject([{ kind: 'bank_debit', amount: 250_000 }]);
  } finally {
    await env.admin.clearWebhookFaults();
    await env.admin.releaseWebhooks();
  }
});

it('USSD: hands back the code and its expiry at once (update-with-start); the payer dials; the webhook confirms', async () => {
  const ref = `ussd-${randomUUID()}`;
  const { ussdCode, expiresAt, handle } = await startUssdPayment(env.services.starters, {
    transactionRef: ref,
    amount: 150_000,
    currency: 'NGN',
    bankCode: '058',
    customer,
  });
  expect(ussdCode).toMatch(/^\*058\*000\*\d{6}#$/); // handed back at once, with its expiry
  expect(Date.parse(expiresAt!)).toBeGreaterThan(Date.now());
  const waiting = await waitFor(ref, 'awaiting_payment');
  expect(waiting).toMatchObject({
    authModel: 'USSDCodeGenerated',
    ussdCode: expect.stringMatching(/^\*058\*/),
    expiresAt: expect.any(String),
  });
  expect(Date.parse(waiting.expiresAt!)).toBeGreaterThan(Date.now());
  await env.admin.payUssd(ref);
  expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
  expect(await env.admin.ledger(ref)).toMatchObject([{ kind: 'ussd', amount: 150_000 }]);
  await recordHistory(handle, 'ussd-dialled');
  await expect(
    startUssdPayment(env.services.starters, {
      transactionRef: `u-${randomUUID()}`,
      amount: 1,
      currency: 'NGN',
      bankCode: '999',
      customer,
    }),
  ).rejects.toThrow(/bankCode must be one of the USSD bank codes/);
});

it('USSD refused by the service (a reference it knows already): the starter hears the reason at once', async () => {
  const used = `ussd-${randomUUID()}`;
  await env.services.api.direct.initiateUssd({
    transaction_reference: used,
    amount: 100_000,
    ussd: { bank_code: '058' },
    customer,
  });
  const err = await startUssdPayment(env.services.starters, {
    transactionRef: used,
    amount: 100_000,
    currency: 'NGN',
    bankCode: '058',
    customer,
  }).catch((e: unknown) => e);
  expect(String((err as Error & { cause?: Error }).cause?.message)).toContain('Duplicate transaction reference');
  expect(await env.services.client.workflow.getHandle(`payment-${used}`).result()).toMatchObject({ status: 'failed' });
});

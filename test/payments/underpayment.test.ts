// An underpayment with pass_charge on is never a success (issue #29, behaviour 3). With pass_charge
// the payer pays amount + charge, so the service reports a larger `amount` and our amount as
// `merchant_amount`. A Success record (verify) or a charge_successful webhook for LESS than the
// requested amount, whose `merchant_amount` is not the requested amount either, must not end the
// payment as success. The card flow on the time-skipping server, with activities that behave like
// the service (the payer's payment is scripted), through the workflow's public surface: its
// input, the OTP Update, the webhook signal and its result. The default webhook grace (30 s) is
// skipped.
import { randomUUID } from 'node:crypto';
import { paymentWebhookSignal, paymentWorkflowId } from '../../src/shared/payment-webhook';
import {
  cardPaymentStateQuery,
  submitOtpUpdate,
  type CardPaymentInput,
  type CardPaymentState,
} from '../../src/shared/card-payment';
import { cardDisplay } from '../../src/shared/claim-check';
import type { TransactionLookup } from '../../src/shared/payment-common';
import type { PaymentFlowActivities } from '../../src/activities/payment-common';
import { eventually } from '../support/polling';
import { chargeSuccessfulEvent } from '../support/flow-inputs';
import { runWithWorker, useTimeSkippingEnv } from '../support/time-skipping';

const env = useTimeSkippingEnv({ quietRuntime: true });

const REQUESTED = 100_000;

/** What the payer's payment came to at the service: the record verify answers once the OTP went through. */
interface Paid {
  amount: number;
  merchantAmount?: number;
}

/** The service for one card payment (OTP step): B1, B2 with the OTP, verify; every call recorded. */
function fakeService(paid: Paid) {
  const records = new Map<string, TransactionLookup>();
  const calls: string[] = [];
  /** The payer completes the payment: the service's record says Success for `paid`. */
  const pay = (ref: string) =>
    records.set(ref, {
      found: true,
      status: 'Success',
      amount: paid.amount,
      ...(paid.merchantAmount !== undefined ? { merchantAmount: paid.merchantAmount } : {}),
      currency: 'NGN',
    });
  const activities: Partial<PaymentFlowActivities> = {
    async chargeCard(input) {
      calls.push(`charge ${input.amount}`);
      records.set(input.transactionRef, { found: true, status: 'Pending', amount: input.amount, currency: 'NGN' });
      return { transactionStatus: 'ValidateOTP' };
    },
    async authorizeCard(ref, step) {
      calls.push(`authorize ${step}`);
      pay(ref);
      return { transactionStatus: 'Success' };
    },
    async lookupTransaction(ref): Promise<TransactionLookup> {
      calls.push('verify');
      return records.get(ref) ?? { found: false };
    },
  };
  return { activities, calls, pay };
}

const sealedHandle = () => `cc_${randomUUID().replace(/-/g, '').slice(0, 22)}`;

const cardInput = (): CardPaymentInput => ({
  transactionRef: `ts-under-${randomUUID()}`,
  amount: REQUESTED,
  currency: 'NGN',
  card: { handle: sealedHandle(), ...cardDisplay('4242424242424242') },
  customer: { name: 'Ada', email: 'ada@example.com' },
  passCharge: true,
});

const webhook = (ref: string, paid: Paid) =>
  chargeSuccessfulEvent(ref, {
    amount: paid.amount,
    ...(paid.merchantAmount !== undefined ? { merchantAmount: paid.merchantAmount } : {}),
    gatewayRef: `${ref}_GW`,
  });

/**
 * A pass_charge card payment of REQUESTED kobo that the payer completes; the service then holds a
 * Success record for `paid`. Without `withWebhook`, with the OTP through the flow (B2 answers
 * Success); with it, elsewhere, and the charge_successful for `paid` arrives (as the receiver
 * signals it) while the flow waits for the OTP. Answers the flow's final state.
 */
async function payByCard(paid: Paid, withWebhook: boolean): Promise<{ final: CardPaymentState; calls: string[] }> {
  const service = fakeService(paid);
  const final = await runWithWorker(env, service.activities, 'underpayment', async (taskQueue) => {
    const i = cardInput();
    const handle = await env.client.workflow.start('cardPaymentWorkflow', {
      workflowId: paymentWorkflowId(i.transactionRef),
      taskQueue,
      args: [i],
    });
    await eventually(
      () => handle.query(cardPaymentStateQuery),
      (s) => s.status === 'awaiting_otp',
      { attempts: 200, intervalMs: 50, description: 'the OTP step', ignoreErrors: true },
    );
    // With the webhook: it comes while the flow waits for the OTP (the payer finished on another
    // device), so the webhook wakes the flow. Without: the OTP's Success answer does, and verify decides.
    if (withWebhook) {
      service.pay(i.transactionRef);
      await handle.signal(paymentWebhookSignal, webhook(i.transactionRef, paid));
    } else await handle.executeUpdate(submitOtpUpdate, { args: [sealedHandle()] });
    return (await handle.result()) as CardPaymentState;
  });
  return { final, calls: service.calls };
}

describe('an underpayment with pass_charge on is never success', () => {
  it.each([
    ['without merchant_amount', { amount: 90_000 }],
    ['with a merchant_amount below the requested amount', { amount: 90_000, merchantAmount: 88_500 }],
    ['one kobo short, merchant_amount one kobo short too', { amount: 99_999, merchantAmount: 99_999 }],
    ['with a merchant_amount above the requested amount', { amount: 90_000, merchantAmount: 100_001 }],
  ])('a Success record for less than requested (%s): failed, never success', async (_name, paid) => {
    const { final, calls } = await payByCard(paid, false);
    expect(final.status).not.toBe('success');
    expect(final).toMatchObject({
      status: 'failed',
      confirmedBy: 'verify',
      reason: `verified payment differs: amount ${paid.amount} differs from ${REQUESTED}`,
    });
    expect(calls).toEqual([`charge ${REQUESTED}`, 'authorize otp', 'verify']);
  });

  it.each([
    ['without merchant_amount', { amount: 90_000 }],
    ['with a merchant_amount below the requested amount', { amount: 90_000, merchantAmount: 88_500 }],
  ])(
    'a charge_successful webhook for less than requested (%s), the record agreeing: failed, never success',
    async (_name, paid) => {
      const { final } = await payByCard(paid, true);
      expect(final.status).not.toBe('success');
      expect(final).toMatchObject({
        status: 'failed',
        webhooksReceived: 1,
        reason: expect.stringContaining(`amount ${paid.amount} differs from ${REQUESTED}`),
      });
    },
  );

  it('an amount above the requested one whose merchant_amount is below it: failed, never success', async () => {
    // The payer paid more, yet the merchant gets less than it asked: not the payment we asked for.
    const { final } = await payByCard({ amount: 101_500, merchantAmount: 90_000 }, false);
    expect(final).toMatchObject({
      status: 'failed',
      reason: `verified payment differs: merchant_amount 90000 differs from ${REQUESTED}`,
    });
  });

  it('the pass_charge payment as the service reports it (amount + charge, merchant_amount ours) is a success', async () => {
    // The control: the same flow does reach success, so the refusals above are the amount rule's.
    const paid = { amount: 101_500, merchantAmount: REQUESTED };
    expect((await payByCard(paid, false)).final).toMatchObject({ status: 'success', confirmedBy: 'verify' });
    expect((await payByCard(paid, true)).final).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
  });
});

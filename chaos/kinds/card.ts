// Direct card payment (B1/B2): OTP-only, PIN then OTP, a wrong OTP first, declined, insufficient funds.
import {
  DuplicateReferenceError,
  getCardPaymentState,
  startCardPayment,
  resubmitCard,
  submitOtp,
  submitPin,
} from '../../src/starters';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { CARD_FINAL_STATUSES, type CardPaymentState } from '../../src/shared/card-payment';
import { SANDBOX_OTP, SANDBOX_PIN } from '../../src/sandbox';
import { awaitResult, drive, ownRunHandle, startOnce, type KindDriver, type Outcome } from './types';

/**
 * Card status → money at the service:
 *  success  — charged (confirmed by webhook or verify)                    → money
 *  failed   — declined, refused codes, insufficient funds                 → no-money
 *  expired  — the payer never finished; verify at the deadline showed no success → no-money
 *  unknown  — the answer was lost and verify could not settle it          → unknown
 */
export const cardOutcome = (status: string): Outcome =>
  status === 'success' ? 'money' : status === 'unknown' ? 'unknown' : 'no-money';

const VARIANTS = [
  { name: 'otp', number: '4242424242424242', amount: 250_000 },
  { name: 'pin-otp', number: '5555555555554444', amount: 420_000 },
  { name: 'wrong-otp-first', number: '4242424242424242', amount: 130_000 },
  { name: 'declined', number: '4000000000000002', amount: 99_000 },
  { name: 'insufficient', number: '4000000000009995', amount: 310_000 },
] as const;

const cardOf = (number: string) => ({ number, cvv: '123', expiryMonth: '12', expiryYear: '30' });

export const cardDriver: KindDriver = {
  kind: 'card',
  ledgerKinds: ['card_charge'],
  async run(ctx, flow) {
    const v = ctx.rng.pick(VARIANTS);
    flow.variant = v.name;
    flow.workflowId = paymentWorkflowId(flow.ref);
    await startOnce(
      ctx,
      'start card',
      () =>
        startCardPayment(ctx.starters, {
          transactionRef: flow.ref,
          amount: v.amount,
          currency: 'NGN',
          card: cardOf(v.number),
          customer: { name: 'Chaos Payer', email: 'payer@example.com' },
          webhookGraceMs: 3_000,
        }),
      (err) => err instanceof DuplicateReferenceError,
    );
    let wrongSent = v.name !== 'wrong-otp-first';
    await drive(
      ctx,
      () => getCardPaymentState(ctx.starters, flow.ref),
      (s: CardPaymentState) => CARD_FINAL_STATUSES.includes(s.status),
      async (s) => {
        if (s.status === 'awaiting_pin') await submitPin(ctx.starters, flow.ref, SANDBOX_PIN);
        // A lost answer ends the sealed CVV (it never outlives the attempt): the payer gives the card again.
        else if (s.status === 'awaiting_card') await resubmitCard(ctx.starters, flow.ref, cardOf(v.number));
        else if (s.status === 'awaiting_otp') {
          const otp = wrongSent ? SANDBOX_OTP : '999999';
          wrongSent = true;
          await submitOtp(ctx.starters, flow.ref, otp);
        }
      },
    );
    const result = await awaitResult<CardPaymentState>(
      ctx,
      () => ownRunHandle(ctx, flow.workflowId!, 'cardPaymentWorkflow'),
      flow,
    );
    if (!result) return;
    flow.closed = true;
    flow.status = result.status;
    flow.resolvedByRequery = result.confirmedBy === 'verify' && result.status !== 'unknown';
    flow.expectations.push({
      reference: flow.ref,
      ledgerKind: 'card_charge',
      outcome: cardOutcome(result.status),
      status: result.status,
    });
  },
};

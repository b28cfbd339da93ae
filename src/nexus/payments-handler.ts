// The handler of the `payments` Nexus service, registered on the payments worker (its task queue is
// the endpoint's target): one operation per flow a backend starts, and the steps on those flows.
// Each start operation validates its input with the starter's own schema, applies the start rules
// (./start-rules.ts: event target, return links) and starts the flow as its starter does, its caller
// recorded (./operations.ts, ./caller.ts). Every step on a flow (a debit, an OTP, a state, a
// cancel...) first checks that the caller started it. Cancelling a start operation is the flow's own
// cancel request (e.g. a POS remote request watches until its lifetime ends; a payment is settled by
// verify; a plan cancels its token).
import * as nexus from 'nexus-rpc';
import { getClient } from '@temporalio/nexus';
import { z } from 'zod';
import { CLAIM_HANDLE_PATTERN } from '../shared/claim-check';
import type { CardPaymentInput } from '../shared/card-payment';
import { StarterInputError } from '../shared/input-error';
import {
  IDEMPOTENCY_KEY_RULE,
  mandateWorkflowId,
  submitMandateOtpUpdate,
  type MandateDebit,
  type MandateInput,
  type MandateState,
} from '../shared/mandate';
import { merchantEventTargetSchema } from '../shared/merchant-event';
import { paymentWorkflowId } from '../shared/payment-webhook';
import {
  completePreAuthUpdate,
  PosCompleteInputSchema,
  PosSealedPreAuthInputSchema,
  posPreAuthStart,
  posPreAuthWorkflowId,
  type PosCompletionAccepted,
} from '../shared/pos-preauth';
import { PosSealedRefundInputSchema, posRefundStart } from '../shared/pos-refund';
import { PosRemoteInputSchema, posRemoteStartSearch, posRemoteWorkflowId } from '../shared/pos-remote';
import {
  PosSealedTransactionInputSchema,
  posTransactionStartSearch,
  posTransactionWorkflowId,
} from '../shared/pos-terminal';
import { cancelRecurringSignal, recurringWorkflowId, type RecurringInput } from '../shared/recurring';
import { checkSmsMessages, SmsSendInputSchema, smsSendWorkflowId } from '../shared/sms';
import { VEND_FIRST_STATUS, VendInputSchema, vendWorkflowId } from '../shared/vending';
import { bankPaymentInputSchema } from '../starters/bank-payment';
import { cardPaymentInputSchema } from '../starters/card-payment';
import { checkoutInputSchema } from '../starters/checkout';
import { cancelMandate, debitMandate, getMandateState, mandateInputSchema } from '../starters/mandate';
import { graceMs, lowestUnit, reference } from '../starters/payment-common';
import { releasePosPreAuth } from '../starters/pos-preauth';
import { recurringInputSchema } from '../starters/recurring';
import { retryTransient } from '../starters/temporal-retry';
import { ussdPaymentInputSchema } from '../starters/ussd-payment';
import { badRequest, flowOperation, onClient, ownStep, parsed, type CancelFlow } from './operations';
import {
  paymentsNexusService,
  type PaymentsNexusService,
  type MandateDebitOperationInput,
  type MandateOtpOperationInput,
  type MandateRefOperationInput,
  type PosCompletionOperationInput,
  type PosReleaseOperationInput,
} from './payments-service';
import { StartRules, type PaymentsNexusOptions } from './start-rules';

export type { PaymentsNexusOptions } from './start-rules';
// Kept here too: callers imported it from this module before src/nexus/sealing.ts.
export { sealCardPaymentForNexus } from './sealing';

/** The sealed card a Nexus card payment takes: a claim-check handle and display data, nothing more. */
const sealedCardSchema = z.strictObject({
  handle: z.string().min(1, 'is required'),
  bin: z.string().regex(/^\d{6}$/, 'must be 6 digits'),
  last4: z.string().regex(/^\d{4}$/, 'must be 4 digits'),
  brand: z.enum(['visa', 'mastercard', 'verve', 'amex', 'unknown'], { error: 'must be a known brand or unknown' }),
});
const sealedCardPaymentSchema = cardPaymentInputSchema.extend({ card: sealedCardSchema });

const claimHandle = z
  .string({ error: 'must be the claim-check handle the sealing helper made' })
  .regex(
    CLAIM_HANDLE_PATTERN,
    'must be the claim-check handle the sealing helper made (secrets are sealed, never sent)',
  );

/** A mandate as `mandateCreate` takes it: the BVN sealed (sealMandateForNexus); a BVN in the clear is refused by name. */
const sealedMandateSchema = mandateInputSchema.safeExtend({
  customer: z.strictObject({
    bvnHandle: claimHandle,
    firstName: z.string().min(1, 'is required'),
    lastName: z.string().min(1, 'is required'),
    address: z.string().min(1, 'is required'),
    phone: z.string().regex(/^\+?\d{7,15}$/, 'must be a phone number'),
  }),
} as never);

const tokenChargeSchema = z.object({
  reference,
  tokenId: z.string().min(1, 'is required'),
  amount: lowestUnit,
  currency: z.enum(['NGN', 'USD'], { error: 'must be NGN or USD' }),
  webhookGraceMs: graceMs.optional(),
  notify: merchantEventTargetSchema.optional(),
});

const mandateRefSchema = z.strictObject({ mandateRef: reference });
const mandateOtpSchema = z.strictObject({ mandateRef: reference, otpHandle: claimHandle });
const mandateDebitSchema = z.object({
  mandateRef: reference,
  amount: lowestUnit,
  narration: z.string().min(1, 'must not be empty').optional(),
  idempotencyKey: z
    .string()
    .regex(IDEMPOTENCY_KEY_RULE.pattern, IDEMPOTENCY_KEY_RULE.message.replace(/^idempotencyKey /, '')),
});
const posCompletionSchema = PosCompleteInputSchema.extend({ merchantRef: reference });
const posReleaseSchema = z.strictObject({
  merchantRef: reference,
  reason: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
});

/** A plan is cancelled by its signal: a Temporal cancel would end it without cancelling its token. */
const planCancel: CancelFlow = (workflowId) => getClient().workflow.getHandle(workflowId).signal(cancelRecurringSignal);

const mandateTarget = (v: { mandateRef: string }) => ({
  workflowId: mandateWorkflowId(v.mandateRef),
  field: 'mandateRef',
  flow: 'mandate',
});
const preAuthTarget = (v: { merchantRef: string }) => ({
  workflowId: posPreAuthWorkflowId(v.merchantRef),
  field: 'merchantRef',
  flow: 'pre-authorisation',
});

/** The handlers of some of the service's operations (each group below names its own). */
type Handlers<K extends keyof PaymentsNexusService['operations']> = Pick<
  nexus.ServiceHandlerFor<PaymentsNexusService['operations']>,
  K
>;

/** Payments: start operations. */
const paymentOperations = (
  r: StartRules,
): Handlers<'cardPayment' | 'bankPayment' | 'ussdPayment' | 'checkoutPayment' | 'tokenCharge'> => ({
  cardPayment: flowOperation((raw) =>
    r.payment(
      'card',
      'cardPaymentWorkflow',
      'charging',
      r.signedReturn(r.resolveNotify(parsed(sealedCardPaymentSchema, raw, 'payment') as CardPaymentInput)),
    ),
  ),
  bankPayment: flowOperation((raw) => r.directPayment('bank', 'bankPaymentWorkflow', bankPaymentInputSchema, raw)),
  ussdPayment: flowOperation((raw) => r.directPayment('ussd', 'ussdPaymentWorkflow', ussdPaymentInputSchema, raw)),
  checkoutPayment: flowOperation((raw) => {
    const v = r.signedReturn(r.resolveNotify(parsed(checkoutInputSchema, raw, 'payment')));
    return r.payment(v.isRecurring ? 'recurring' : 'checkout', 'checkoutWorkflow', 'initiating', v);
  }),
  tokenCharge: flowOperation((raw) => {
    const v = r.resolveNotify(parsed(tokenChargeSchema, raw, 'token charge'));
    return {
      workflowType: 'tokenChargeWorkflow',
      workflowId: paymentWorkflowId(v.reference),
      input: v,
      // A plan's cycles are token charges too: the same flow kind.
      search: {
        flow: 'recurring',
        reference: v.reference,
        status: 'checking',
        amount: v.amount,
        currency: v.currency,
      },
    };
  }),
});

/** A plan, a vend and an SMS send: start operations. */
const planVendSmsOperations = (r: StartRules): Handlers<'recurringPlan' | 'vend' | 'smsSend'> => ({
  recurringPlan: flowOperation(
    (raw) => {
      const v = r.signedPlanReturn(r.resolveNotify(parsed(recurringInputSchema, raw, 'payment') as RecurringInput));
      return {
        workflowType: 'recurringChargeWorkflow',
        workflowId: recurringWorkflowId(v.planRef),
        input: v,
        search: {
          flow: 'recurring',
          reference: v.planRef,
          amount: v.amount,
          currency: v.currency,
          status: 'awaiting_first_payment',
        },
      };
    },
    // The plan's own cancel: it stops charging and cancels the token (A5), parked if that cancel cannot be
    // settled; never a bare Temporal cancel.
    planCancel,
  ),
  vend: flowOperation((raw) => {
    const v = parsed(VendInputSchema, raw, 'electricity vend');
    return {
      workflowType: 'vendElectricityWorkflow',
      workflowId: vendWorkflowId(v.order_ref),
      // The raw input (the workflow parses it again), with its event target resolved, as the starter passes it.
      input: r.resolveNotify(raw),
      search: { flow: 'vend', reference: v.order_ref, status: VEND_FIRST_STATUS, currency: 'NGN' },
    };
  }),
  smsSend: flowOperation((raw) => {
    const v = parsed(SmsSendInputSchema, raw, 'SMS send');
    if (v.options?.invalidMessages === 'refuse') {
      const { issues } = checkSmsMessages(v.messages);
      if (issues.length > 0) throw badRequest(new StarterInputError('SMS send', issues).message);
    }
    return r.givenWithNotify(raw, v, (s) => ({
      workflowType: 'smsSendWorkflow',
      workflowId: smsSendWorkflowId(s.reference),
      search: { flow: 'sms-send', reference: s.reference, status: 'validating' },
    }));
  }),
});

/** POS: a remote request, a sale, a refund, a pre-authorisation and the steps on it. */
const posOperations = (
  r: StartRules,
): Handlers<
  'posRemoteRequest' | 'posTransaction' | 'posRefund' | 'posPreAuth' | 'posPreAuthComplete' | 'posPreAuthRelease'
> => ({
  posRemoteRequest: flowOperation((raw) =>
    r.givenWithNotify(raw, parsed(PosRemoteInputSchema, raw, 'POS remote request'), (v) => ({
      workflowType: 'posRemoteRequestWorkflow',
      workflowId: posRemoteWorkflowId(v.reference),
      search: posRemoteStartSearch(v),
    })),
  ),
  posTransaction: flowOperation((raw) =>
    r.givenWithNotify(raw, parsed(PosSealedTransactionInputSchema, raw, 'POS transaction'), (v) => ({
      workflowType: 'posTerminalTransactionWorkflow',
      workflowId: posTransactionWorkflowId(v.merchant_ref),
      search: posTransactionStartSearch(v),
    })),
  ),
  // The refund request id names the refund (its merchant_ref), as with the starter; a second start is refused.
  posRefund: flowOperation((raw) =>
    r.givenWithNotify(raw, parsed(PosSealedRefundInputSchema, raw, 'POS refund'), posRefundStart),
  ),
  posPreAuth: flowOperation((raw) =>
    r.givenWithNotify(raw, parsed(PosSealedPreAuthInputSchema, raw, 'POS pre-authorisation'), posPreAuthStart),
  ),
  // Synchronous: the Update answers once the flow accepted the completion (the outcome is the posPreAuth operation's).
  posPreAuthComplete: ownStep(
    posCompletionSchema as unknown as z.ZodType<PosCompletionOperationInput>,
    'POS completion',
    preAuthTarget,
    ({ merchantRef, ...completion }, opCtx): Promise<PosCompletionAccepted> =>
      retryTransient('POS pre-authorisation (Update)', () =>
        getClient()
          .workflow.getHandle(posPreAuthWorkflowId(merchantRef))
          .executeUpdate(completePreAuthUpdate, { args: [completion], updateId: `complete-${opCtx.requestId}` }),
      ),
  ),
  posPreAuthRelease: ownStep(
    posReleaseSchema as z.ZodType<PosReleaseOperationInput>,
    'POS release',
    preAuthTarget,
    (v) => releasePosPreAuth(onClient(), v.merchantRef, v.reason),
  ),
});

/** A mandate: created (its BVN sealed), then its OTP, state, debits and cancel. */
const mandateOperations = (
  r: StartRules,
): Handlers<'mandateCreate' | 'mandateOtp' | 'mandateState' | 'mandateDebit' | 'mandateCancel'> => ({
  // The mandate runs until it ends (its final state is the answer); its OTP, debits, state and cancel are the operations below.
  mandateCreate: flowOperation((raw) => {
    const v = r.resolveNotify(parsed(sealedMandateSchema, raw, 'mandate') as unknown as MandateInput);
    return {
      workflowType: 'mandateWorkflow',
      workflowId: mandateWorkflowId(v.mandateRef),
      input: v,
      search: { flow: 'mandate', reference: v.mandateRef, amount: v.amount, currency: 'NGN', status: 'creating' },
    };
  }),
  // The Update id is the Nexus request id: a retried request runs the Update once.
  mandateOtp: ownStep(
    mandateOtpSchema as z.ZodType<MandateOtpOperationInput>,
    'mandate OTP',
    mandateTarget,
    (v, opCtx): Promise<MandateState> =>
      retryTransient('mandate OTP (Update)', () =>
        getClient()
          .workflow.getHandle(mandateWorkflowId(v.mandateRef))
          .executeUpdate(submitMandateOtpUpdate, { args: [v.otpHandle], updateId: `otp-${opCtx.requestId}` }),
      ),
  ),
  mandateState: ownStep(mandateRefSchema as z.ZodType<MandateRefOperationInput>, 'mandate state', mandateTarget, (v) =>
    getMandateState(onClient(), v.mandateRef),
  ),
  // The caller's key goes into the debit itself (the flow keeps it across continue-as-new) and the Update id.
  mandateDebit: ownStep(
    mandateDebitSchema as z.ZodType<MandateDebitOperationInput>,
    'mandate debit',
    mandateTarget,
    (v): Promise<MandateDebit> =>
      debitMandate(onClient(), v.mandateRef, v.amount, {
        ...(v.narration !== undefined ? { narration: v.narration } : {}),
        idempotencyKey: v.idempotencyKey,
      }),
  ),
  mandateCancel: ownStep(
    mandateRefSchema as z.ZodType<MandateRefOperationInput>,
    'mandate cancel',
    mandateTarget,
    (v) => cancelMandate(onClient(), v.mandateRef),
  ),
});

/** The payments service's handler; `opts` as the worker's config gives them (docs/nexus.md). */
export function paymentsNexusHandler(opts: PaymentsNexusOptions = {}) {
  const rules = new StartRules(opts);
  return nexus.serviceHandler(paymentsNexusService, {
    ...paymentOperations(rules),
    ...planVendSmsOperations(rules),
    ...posOperations(rules),
    ...mandateOperations(rules),
  });
}

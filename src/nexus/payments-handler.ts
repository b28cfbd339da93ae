// The handler of the `payments` Nexus service, registered on the payments worker (its task queue is
// the endpoint's target). Each start operation validates its input with the starter's own schema (a
// broken rule is a BAD_REQUEST naming the field, never retried), resolves the event target, checks
// and signs return URLs, and starts the flow under the starter's workflow id, search attributes and
// duplicate rule (a reference already started is refused, not joined), with its caller recorded in
// the memo (./caller.ts). Every step on a flow (a cancel, a debit, an OTP, a state...) first checks
// that the caller started it. Cancelling a start operation cancels the workflow run, which each flow
// reads as its own cancel request (e.g. a POS remote request watches until its lifetime ends; a
// payment is settled by verify).
import type { MerchantEventInput } from '../shared/merchant-event';
import * as nexus from 'nexus-rpc';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { getClient, startWorkflow, WorkflowRunOperationHandler, type WorkflowHandle } from '@temporalio/nexus';
import { loadWorkflowRunOperationToken } from '@temporalio/nexus/lib/token';
import { z } from 'zod';
import { RETURN_PATH, signReturnUrl, withSignedReturn, type ReturnLinkConfig } from '../config/return-links';
import { productionModeOf } from '../config/config';
import { CLAIM_HANDLE_PATTERN } from '../shared/claim-check';
import type { CardPaymentInput } from '../shared/card-payment';
import { StarterInputError, parseStarterInput } from '../shared/input-error';
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
  posPreAuthWorkflowId,
  type PosCompletionAccepted,
} from '../shared/pos-preauth';
import { PosSealedRefundInputSchema, posRefundWorkflowId, refundMerchantRef } from '../shared/pos-refund';
import { PosRemoteInputSchema, posRemoteStartSearch, posRemoteWorkflowId } from '../shared/pos-remote';
import {
  PosSealedTransactionInputSchema,
  posTransactionStartSearch,
  posTransactionWorkflowId,
} from '../shared/pos-terminal';
import { cancelRecurringSignal, cycleReference, recurringWorkflowId, type RecurringInput } from '../shared/recurring';
import { checkSmsMessages, SmsSendInputSchema, smsSendWorkflowId } from '../shared/sms';
import { flowStartMetadata } from '../shared/flow-summary';
import { paymentSearchAttributes, type PaymentSearchFields } from '../shared/search-attributes';
import { VEND_FIRST_STATUS, VendInputSchema, vendWorkflowId } from '../shared/vending';
import { bankPaymentInputSchema } from '../starters/bank-payment';
import { cardPaymentInputSchema } from '../starters/card-payment';
import { checkoutInputSchema } from '../starters/checkout';
import type { StarterContext } from '../starters/connect';
import { cancelMandate, debitMandate, getMandateState, mandateInputSchema } from '../starters/mandate';
import { graceMs, lowestUnit, paymentSearch, reference } from '../starters/payment-common';
import { PosPreAuthRefusedError, releasePosPreAuth } from '../starters/pos-preauth';
import { recurringInputSchema } from '../starters/recurring';
import { retryTransient } from '../starters/temporal-retry';
import { ussdPaymentInputSchema } from '../starters/ussd-payment';
import { callerOf, NEXUS_CALLER_MEMO, notFoundForCaller, requireOwnFlow, type NexusCaller } from './caller';
import {
  paymentsNexusService,
  type MandateDebitOperationInput,
  type MandateOtpOperationInput,
  type MandateRefOperationInput,
  type PosCompletionOperationInput,
  type PosReleaseOperationInput,
} from './payments-service';

// Kept here too: callers imported it from this module before src/nexus/sealing.ts.
export { sealCardPaymentForNexus } from './sealing';

/** What the handler takes from the worker's config, as the starters take it from theirs. */
export interface PaymentsNexusOptions {
  /** Production mode: a caller's notify.url and return URLs must be https (default: as src/config decides from the environment). */
  production?: boolean;
  /**
   * RETURN_LINK_KEY and TTL: return URLs are signed where they are built (here, for Nexus callers).
   * Without them a return URL to our /payments/return is refused: it could not be signed.
   */
  returnLinks?: ReturnLinkConfig;
}

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

interface FlowStartSpec {
  workflowType: string;
  workflowId: string;
  input: unknown;
  search: PaymentSearchFields;
}

/** Input refused by its schema: BAD_REQUEST naming every broken rule (the caller's workflow sees it, no retry). */
function parsed<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.output<S> {
  try {
    return parseStarterInput(schema, raw, what);
  } catch (err) {
    if (err instanceof StarterInputError) throw new nexus.HandlerError('BAD_REQUEST', err.message);
    throw err;
  }
}

const badRequest = (message: string) => new nexus.HandlerError('BAD_REQUEST', message);

/** A caller's plain-http event target is refused in production, naming the field (docs/security.md). */
function refuseHttpNotifyInProduction(url: string | undefined, production: boolean): void {
  if (production && url !== undefined && !url.startsWith('https://'))
    throw badRequest('notify.url: must be an https:// URL in production');
}

/**
 * A return URL of a Nexus-started payment: https in production, and one to our /payments/return only
 * when this worker can sign it (an unsigned link would show the payer nothing: docs/nexus.md).
 */
function checkReturnUrl(field: string, url: string | undefined, production: boolean, canSign: boolean): void {
  if (url === undefined) return;
  if (production && !url.startsWith('https://')) throw badRequest(`${field}: must be an https:// URL in production`);
  if (!canSign && new URL(url).pathname.endsWith(RETURN_PATH))
    throw badRequest(
      `${field}: a link to ${RETURN_PATH} must be signed and this worker holds no RETURN_LINK_KEY; give it the key, or return to a page of your own`,
    );
}

/** A flow refused a step (an Update's validator or handler): the operation fails with its reason, never retried. */
async function refusalsAsFailures<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof StarterInputError) throw badRequest(err.message);
    if (err instanceof WorkflowUpdateFailedError)
      throw new nexus.OperationError('failed', err.cause instanceof Error ? err.cause.message : err.message);
    if (err instanceof PosPreAuthRefusedError) throw new nexus.OperationError('failed', err.message);
    throw err;
  }
}

/** A start whose workflow takes the caller's input as it came (the workflow parses it again); `v` is it parsed. */
function asGiven<V>(raw: unknown, v: V, start: (v: V) => Omit<FlowStartSpec, 'input'>): FlowStartSpec {
  return { ...start(v), input: raw };
}

/** How a flow hears its caller's cancel: by default a Temporal cancel of its run; a flow with a cancel of its own uses that. */
type CancelFlow = (workflowId: string) => Promise<void>;

/**
 * A workflow-run operation: the flow started under its starter's id and attributes, its caller in
 * the memo; a taken reference refused. Cancelling it reaches the flow only for the caller that started it.
 */
class CallerBoundOperation<I, O> extends WorkflowRunOperationHandler<I, O> {
  constructor(
    start: ConstructorParameters<typeof WorkflowRunOperationHandler<I, O>>[0],
    private readonly cancelFlow?: CancelFlow,
  ) {
    super(start);
  }

  override async cancel(ctx: nexus.CancelOperationContext, token: string): Promise<void> {
    const { wid } = loadWorkflowRunOperationToken(token);
    await requireOwnFlow(wid, callerOf(ctx), () => notFoundForCaller('token', 'flow'));
    return this.cancelFlow ? this.cancelFlow(wid) : super.cancel(ctx, token);
  }
}

function flowOperation<I, O>(
  spec: (input: I) => FlowStartSpec,
  cancelFlow?: CancelFlow,
): WorkflowRunOperationHandler<I, O> {
  return new CallerBoundOperation<I, O>(async (ctx, input) => {
    const s = spec(input);
    const caller: NexusCaller = callerOf(ctx);
    try {
      return (await startWorkflow(ctx, s.workflowType, {
        workflowId: s.workflowId,
        args: [s.input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: paymentSearchAttributes(s.search),
        memo: { [NEXUS_CALLER_MEMO]: caller },
        ...flowStartMetadata(s.workflowType, s.search),
      })) as WorkflowHandle<O>;
    } catch (err) {
      // A Nexus retry of the same request is deduplicated by the server (its request id); this is
      // another start. References are one space with the service's, so a taken one cannot be
      // answered as a free one; the answer names no owner and no state (docs/nexus.md).
      if (err instanceof WorkflowExecutionAlreadyStartedError)
        throw badRequest(`reference already started: ${s.workflowId}`);
      throw err;
    }
  }, cancelFlow);
}

/** A step on a flow: runs only if this caller started `workflowId`; else the answer of an unknown reference. */
function ownStep<I, O>(
  schema: z.ZodType<I>,
  what: string,
  target: (v: I) => { workflowId: string; field: string; flow: string },
  step: (v: I, ctx: nexus.StartOperationContext) => Promise<O>,
) {
  return async (ctx: nexus.StartOperationContext, raw: unknown): Promise<O> => {
    const v = parsed(schema, raw, what);
    const t = target(v);
    await requireOwnFlow(t.workflowId, callerOf(ctx), () => notFoundForCaller(t.field, t.flow));
    return refusalsAsFailures(() => step(v, ctx));
  };
}

/** A plan is cancelled by its signal: a Temporal cancel would end it without cancelling its token. */
const planCancel: CancelFlow = (workflowId) => getClient().workflow.getHandle(workflowId).signal(cancelRecurringSignal);

/** The starters' helpers, on the handler's own client. */
const onClient = (): StarterContext => ({ client: getClient() }) as unknown as StarterContext;

/** The payments service's handler; `opts` as the worker's config gives them (docs/nexus.md). */
export function paymentsNexusHandler(opts: PaymentsNexusOptions = {}) {
  const ctx = { returnLinks: opts.returnLinks };
  const production = opts.production ?? productionModeOf(process.env);
  const canSign = opts.returnLinks !== undefined;
  /** Production's https rule on the caller's own notify.url (without one: the worker's NOTIFY_URL, at delivery). */
  const resolveNotify = <T extends MerchantEventInput>(input: T): T => {
    refuseHttpNotifyInProduction(input?.notify?.url, production);
    return input;
  };
  /** A payment's return URLs checked, then signed as the starters sign them. */
  const signedReturn = <T extends { transactionRef: string; callbackUrl?: string; redirectUrl?: string }>(v: T): T => {
    checkReturnUrl('callbackUrl', v.callbackUrl, production, canSign);
    checkReturnUrl('redirectUrl', v.redirectUrl, production, canSign);
    return withSignedReturn(ctx, v);
  };
  const payment = <T extends { transactionRef: string; amount: number; currency: string }>(
    flow: string,
    workflowType: string,
    status: string,
    input: T,
  ): FlowStartSpec => ({
    workflowType,
    workflowId: paymentWorkflowId(input.transactionRef),
    input,
    search: paymentSearch(flow, input, status),
  });
  /** A bank debit or USSD payment: validated, its event target resolved, started `initiating`. */
  type DirectInput = { transactionRef: string; amount: number; currency: string } & MerchantEventInput;
  const directPayment = (flow: string, workflowType: string, schema: z.ZodType<DirectInput>, raw: unknown) =>
    payment(flow, workflowType, 'initiating', resolveNotify(parsed(schema, raw, 'payment')));
  /** asGiven, with the event target resolved into the raw input (once `v` parsed it). */
  const givenWithNotify = <V>(raw: unknown, v: V, start: (v: V) => Omit<FlowStartSpec, 'input'>) =>
    asGiven(resolveNotify(raw as MerchantEventInput), v, start);
  const mandate =
    (field = 'mandateRef') =>
    (v: { mandateRef: string }) => ({
      workflowId: mandateWorkflowId(v.mandateRef),
      field,
      flow: 'mandate',
    });
  const preAuth = (v: { merchantRef: string }) => ({
    workflowId: posPreAuthWorkflowId(v.merchantRef),
    field: 'merchantRef',
    flow: 'pre-authorisation',
  });
  return nexus.serviceHandler(paymentsNexusService, {
    cardPayment: flowOperation((raw) =>
      payment(
        'card',
        'cardPaymentWorkflow',
        'charging',
        signedReturn(resolveNotify(parsed(sealedCardPaymentSchema, raw, 'payment') as CardPaymentInput)),
      ),
    ),
    bankPayment: flowOperation((raw) => directPayment('bank', 'bankPaymentWorkflow', bankPaymentInputSchema, raw)),
    ussdPayment: flowOperation((raw) => directPayment('ussd', 'ussdPaymentWorkflow', ussdPaymentInputSchema, raw)),
    checkoutPayment: flowOperation((raw) => {
      const v = signedReturn(resolveNotify(parsed(checkoutInputSchema, raw, 'payment')));
      return payment(v.isRecurring ? 'recurring' : 'checkout', 'checkoutWorkflow', 'initiating', v);
    }),
    tokenCharge: flowOperation((raw) => {
      const v = resolveNotify(parsed(tokenChargeSchema, raw, 'token charge'));
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
    recurringPlan: flowOperation((raw) => {
      const v = resolveNotify(parsed(recurringInputSchema, raw, 'payment') as RecurringInput);
      // The first payment is a checkout under the first cycle's reference: its return link names that.
      const callbackUrl = v.checkout?.callbackUrl;
      checkReturnUrl('checkout.callbackUrl', callbackUrl, production, canSign);
      const input =
        callbackUrl && opts.returnLinks
          ? {
              ...v,
              checkout: {
                ...v.checkout,
                callbackUrl: signReturnUrl(callbackUrl, cycleReference(v.planRef, 1), opts.returnLinks),
              },
            }
          : v;
      return {
        workflowType: 'recurringChargeWorkflow',
        workflowId: recurringWorkflowId(v.planRef),
        input,
        search: {
          flow: 'recurring',
          reference: v.planRef,
          amount: v.amount,
          currency: v.currency,
          status: 'awaiting_first_payment',
        },
      };
      // The plan's own cancel (stop charging, A5; parked if A5 cannot be settled), never a bare Temporal cancel.
    }, planCancel),
    vend: flowOperation((raw) => {
      const v = parsed(VendInputSchema, raw, 'electricity vend');
      return {
        workflowType: 'vendElectricityWorkflow',
        workflowId: vendWorkflowId(v.order_ref),
        // The raw input (the workflow parses it again), with its event target resolved, as the starter passes it.
        input: resolveNotify(raw),
        search: { flow: 'vend', reference: v.order_ref, status: VEND_FIRST_STATUS, currency: 'NGN' },
      };
    }),
    smsSend: flowOperation((raw) => {
      const v = parsed(SmsSendInputSchema, raw, 'SMS send');
      if (v.options?.invalidMessages === 'refuse') {
        const { issues } = checkSmsMessages(v.messages);
        if (issues.length > 0) throw badRequest(new StarterInputError('SMS send', issues).message);
      }
      return givenWithNotify(raw, v, (s) => ({
        workflowType: 'smsSendWorkflow',
        workflowId: smsSendWorkflowId(s.reference),
        search: { flow: 'sms-send', reference: s.reference, status: 'validating' },
      }));
    }),
    posRemoteRequest: flowOperation((raw) =>
      givenWithNotify(raw, parsed(PosRemoteInputSchema, raw, 'POS remote request'), (v) => ({
        workflowType: 'posRemoteRequestWorkflow',
        workflowId: posRemoteWorkflowId(v.reference),
        search: posRemoteStartSearch(v),
      })),
    ),
    posTransaction: flowOperation((raw) =>
      givenWithNotify(raw, parsed(PosSealedTransactionInputSchema, raw, 'POS transaction'), (v) => ({
        workflowType: 'posTerminalTransactionWorkflow',
        workflowId: posTransactionWorkflowId(v.merchant_ref),
        search: posTransactionStartSearch(v),
      })),
    ),
    // The refund request id names the refund (its merchant_ref), as with the starter; a second start is refused.
    posRefund: flowOperation((raw) =>
      givenWithNotify(raw, parsed(PosSealedRefundInputSchema, raw, 'POS refund'), (v) => {
        const merchantRef = refundMerchantRef(v.refund_request_id);
        return {
          workflowType: 'posRefundWorkflow',
          workflowId: posRefundWorkflowId(merchantRef),
          search: {
            flow: 'pos-refund',
            reference: merchantRef,
            status: 'validating',
            amount: Number(v.amount),
            currency: v.currency,
          },
        };
      }),
    ),
    posPreAuth: flowOperation((raw) =>
      givenWithNotify(raw, parsed(PosSealedPreAuthInputSchema, raw, 'POS pre-authorisation'), (v) => ({
        workflowType: 'posPreAuthWorkflow',
        workflowId: posPreAuthWorkflowId(v.merchant_ref),
        search: {
          flow: 'pos-preauth',
          reference: v.merchant_ref,
          status: 'validating',
          amount: Number(v.amount),
          currency: v.currency,
        },
      })),
    ),
    // Synchronous: the Update answers once the flow accepted the completion (the outcome is the posPreAuth operation's).
    posPreAuthComplete: ownStep(
      posCompletionSchema as unknown as z.ZodType<PosCompletionOperationInput>,
      'POS completion',
      preAuth,
      ({ merchantRef, ...completion }, opCtx): Promise<PosCompletionAccepted> =>
        retryTransient('POS pre-authorisation (Update)', () =>
          getClient()
            .workflow.getHandle(posPreAuthWorkflowId(merchantRef))
            .executeUpdate(completePreAuthUpdate, { args: [completion], updateId: `complete-${opCtx.requestId}` }),
        ),
    ),
    posPreAuthRelease: ownStep(posReleaseSchema as z.ZodType<PosReleaseOperationInput>, 'POS release', preAuth, (v) =>
      releasePosPreAuth(onClient(), v.merchantRef, v.reason),
    ),
    // The mandate runs until it ends (its final state is the answer); its OTP, debits, state and cancel are the operations below.
    mandateCreate: flowOperation((raw) => {
      const v = resolveNotify(parsed(sealedMandateSchema, raw, 'mandate') as unknown as MandateInput);
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
      mandate(),
      (v, opCtx): Promise<MandateState> =>
        retryTransient('mandate OTP (Update)', () =>
          getClient()
            .workflow.getHandle(mandateWorkflowId(v.mandateRef))
            .executeUpdate(submitMandateOtpUpdate, { args: [v.otpHandle], updateId: `otp-${opCtx.requestId}` }),
        ),
    ),
    mandateState: ownStep(mandateRefSchema as z.ZodType<MandateRefOperationInput>, 'mandate state', mandate(), (v) =>
      getMandateState(onClient(), v.mandateRef),
    ),
    // The caller's key goes into the debit itself (the flow keeps it across continue-as-new) and the Update id.
    mandateDebit: ownStep(
      mandateDebitSchema as z.ZodType<MandateDebitOperationInput>,
      'mandate debit',
      mandate(),
      (v): Promise<MandateDebit> =>
        debitMandate(onClient(), v.mandateRef, v.amount, {
          ...(v.narration !== undefined ? { narration: v.narration } : {}),
          idempotencyKey: v.idempotencyKey,
        }),
    ),
    mandateCancel: ownStep(mandateRefSchema as z.ZodType<MandateRefOperationInput>, 'mandate cancel', mandate(), (v) =>
      cancelMandate(onClient(), v.mandateRef),
    ),
  });
}

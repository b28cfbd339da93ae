// The handler of the `payments` Nexus service, registered on the payments worker (its task queue is
// the endpoint's target). Each workflow-run operation validates its input with the starter's own
// schema (a broken rule is a BAD_REQUEST naming the field, never retried), resolves the event
// target and signs return URLs as the starter does, and starts the flow under the starter's workflow
// id, search attributes and duplicate rule (a reference already started is refused, not joined).
// Cancelling the operation cancels the workflow run, which each flow reads as its own cancel
// request (e.g. a POS remote request watches until its lifetime ends; a payment is settled by verify).
import type { MerchantEventInput } from '../shared/merchant-event';
import * as nexus from 'nexus-rpc';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { getClient, startWorkflow, WorkflowRunOperationHandler, type WorkflowHandle } from '@temporalio/nexus';
import { z } from 'zod';
import type { ReturnLinkConfig } from '../config/return-links';
import { productionModeOf } from '../config/config';
import { cardDisplay } from '../shared/claim-check';
import type { CardPaymentInput } from '../shared/card-payment';
import { StarterInputError, parseStarterInput } from '../shared/input-error';
import { debitMandateUpdate, IDEMPOTENCY_KEY_RULE, mandateWorkflowId, type MandateDebit } from '../shared/mandate';
import { merchantEventTargetSchema } from '../shared/merchant-event';
import { paymentWorkflowId } from '../shared/payment-webhook';
import { PosRemoteInputSchema, posRemoteStartSearch, posRemoteWorkflowId } from '../shared/pos-remote';
import {
  PosSealedTransactionInputSchema,
  posTransactionStartSearch,
  posTransactionWorkflowId,
} from '../shared/pos-terminal';
import { flowStartMetadata } from '../shared/flow-summary';
import { paymentSearchAttributes, type PaymentSearchFields } from '../shared/search-attributes';
import { VEND_FIRST_STATUS, VendInputSchema, vendWorkflowId } from '../shared/vending';
import { bankPaymentInputSchema } from '../starters/bank-payment';
import { cardPaymentInputSchema, type CardPaymentRequest } from '../starters/card-payment';
import { checkoutInputSchema } from '../starters/checkout';
import type { StarterContext } from '../starters/connect';
import { graceMs, lowestUnit, paymentSearch, reference } from '../starters/payment-common';
import { ussdPaymentInputSchema } from '../starters/ussd-payment';
import { withSignedReturn } from '../config/return-links';
import { paymentsNexusService, type MandateDebitOperationInput } from './payments-service';

/** What the handler takes from the worker's config, as the starters take it from theirs. */
export interface PaymentsNexusOptions {
  /** Production mode: a caller's notify.url must be https (default: as src/config decides from the environment). */
  production?: boolean;
  /** RETURN_LINK_KEY and TTL: return URLs are signed where they are built (here, for Nexus callers). */
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

const tokenChargeSchema = z.object({
  reference,
  tokenId: z.string().min(1, 'is required'),
  amount: lowestUnit,
  currency: z.enum(['NGN', 'USD'], { error: 'must be NGN or USD' }),
  webhookGraceMs: graceMs.optional(),
  notify: merchantEventTargetSchema.optional(),
});

const mandateDebitSchema = z.object({
  mandateRef: reference,
  amount: lowestUnit,
  narration: z.string().min(1, 'must not be empty').optional(),
  idempotencyKey: z
    .string()
    .regex(IDEMPOTENCY_KEY_RULE.pattern, IDEMPOTENCY_KEY_RULE.message.replace(/^idempotencyKey /, '')),
});

/**
 * For the caller's backend (not its workflow): validates a card payment request and seals the card in
 * the claim check, as the starters do; the answer is what the `cardPayment` operation takes. The PAN
 * and CVV stay in this process: only the handle, BIN and last four reach the caller's history.
 */
export async function sealCardPaymentForNexus(
  ctx: Pick<StarterContext, 'claimCheck'>,
  raw: CardPaymentRequest,
): Promise<CardPaymentInput> {
  const { card, ...rest } = parseStarterInput(cardPaymentInputSchema, raw, 'payment');
  const handle = await ctx.claimCheck.seal('card', {
    number: card.number,
    cvv: card.cvv,
    expiryMonth: card.expiryMonth,
    expiryYear: card.expiryYear,
  });
  return { ...rest, card: { handle, ...cardDisplay(card.number) } } as CardPaymentInput;
}

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

/** A caller's plain-http event target is refused in production, naming the field (docs/security.md). */
function refuseHttpNotifyInProduction(url: string | undefined, production: boolean): void {
  if (production && url !== undefined && !url.startsWith('https://'))
    throw new nexus.HandlerError('BAD_REQUEST', 'notify.url: must be an https:// URL in production');
}

/** A workflow-run operation: the flow started under its starter's id and attributes; a taken reference refused. */
/** A start whose workflow takes the caller's input as it came (the workflow parses it again); `v` is it parsed. */
function asGiven<V>(raw: unknown, v: V, start: (v: V) => Omit<FlowStartSpec, 'input'>): FlowStartSpec {
  return { ...start(v), input: raw };
}

function flowOperation<I, O>(spec: (input: I) => FlowStartSpec): WorkflowRunOperationHandler<I, O> {
  return new WorkflowRunOperationHandler<I, O>(async (ctx, input) => {
    const s = spec(input);
    try {
      return (await startWorkflow(ctx, s.workflowType, {
        workflowId: s.workflowId,
        args: [s.input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: paymentSearchAttributes(s.search),
        ...flowStartMetadata(s.workflowType, s.search),
      })) as WorkflowHandle<O>;
    } catch (err) {
      // A Nexus retry of the same request is deduplicated by the server (its request id); this is another start.
      if (err instanceof WorkflowExecutionAlreadyStartedError)
        throw new nexus.HandlerError('BAD_REQUEST', `reference already started: ${s.workflowId}`);
      throw err;
    }
  });
}

/** The payments service's handler; `opts` as the worker's config gives them (docs/nexus.md). */
export function paymentsNexusHandler(opts: PaymentsNexusOptions = {}) {
  const ctx = { returnLinks: opts.returnLinks };
  const production = opts.production ?? productionModeOf(process.env);
  /** Production's https rule on the caller's own notify.url (without one: the worker's NOTIFY_URL, at delivery). */
  const resolveNotify = <T extends MerchantEventInput>(input: T): T => {
    refuseHttpNotifyInProduction(input?.notify?.url, production);
    return input;
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
  return nexus.serviceHandler(paymentsNexusService, {
    cardPayment: flowOperation((raw) =>
      payment(
        'card',
        'cardPaymentWorkflow',
        'charging',
        withSignedReturn(ctx, resolveNotify(parsed(sealedCardPaymentSchema, raw, 'payment') as CardPaymentInput)),
      ),
    ),
    bankPayment: flowOperation((raw) => directPayment('bank', 'bankPaymentWorkflow', bankPaymentInputSchema, raw)),
    ussdPayment: flowOperation((raw) => directPayment('ussd', 'ussdPaymentWorkflow', ussdPaymentInputSchema, raw)),
    checkoutPayment: flowOperation((raw) => {
      const v = withSignedReturn(ctx, resolveNotify(parsed(checkoutInputSchema, raw, 'payment')));
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
    // Synchronous: the Update answers within the Nexus request's deadline; its id makes a retry the same debit.
    mandateDebit: async (_ctx, raw: MandateDebitOperationInput): Promise<MandateDebit> => {
      const v = parsed(mandateDebitSchema, raw, 'mandate debit');
      return getClient()
        .workflow.getHandle(mandateWorkflowId(v.mandateRef))
        .executeUpdate(debitMandateUpdate, {
          args: [
            {
              amount: v.amount,
              ...(v.narration !== undefined ? { narration: v.narration } : {}),
              idempotencyKey: v.idempotencyKey,
            },
          ],
          updateId: `debit-${v.idempotencyKey}`,
        });
    },
  });
}

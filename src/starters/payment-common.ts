// What the payment starters (card, bank, USSD, checkout, recurring) share: their errors
// (DuplicateReferenceError, PaymentStepError), the field rules, starting once per reference,
// queries that reach a payment's own run, sealed codes sent as Updates, and the state of a bank
// debit or USSD payment (one query for both).
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type QueryDefinition,
  type WorkflowHandle,
} from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { SECRET_UNAVAILABLE, type SecretPurpose } from '../shared/claim-check';
import { directPaymentStateQuery, type DirectPaymentState } from '../shared/payment-common';
import type { StarterContext } from './connect';
import { parseStarterInput } from '../shared/input-error';
import { retryTransient } from './temporal-retry';
import { paymentWorkflowId } from '../shared/payment-webhook';
import type { PaymentSearchFields } from '../shared/search-attributes';
import { paymentFlowRun } from '../temporal/payment-run';

/** A flow for this reference exists already (running, or a held webhook for it): a reference pays once. */
export class DuplicateReferenceError extends Error {
  constructor(readonly reference: string) {
    super(`a payment flow for reference ${reference} exists already`);
    this.name = 'DuplicateReferenceError';
  }
}

/**
 * A PIN, OTP or bank code that did not move the flow on.
 *  - not_expected: the flow was not waiting for it, or it is malformed (refused by the validator; nothing in history);
 *  - refused: the service refused it; the flow keeps waiting (`details.refusedCodes` of `details.limit`);
 *  - outcome_unknown: the service's answer was lost and the payment is still pending: send it again;
 *  - ended: the payment has ended (e.g. the limit of refused codes was reached, or the flow is over);
 *  - resubmit: the sealed code expired before the flow could use it: send it again.
 */
export class PaymentStepError extends Error {
  constructor(
    readonly kind: 'not_expected' | 'refused' | 'outcome_unknown' | 'ended' | 'resubmit',
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'PaymentStepError';
  }
}

const KIND_BY_TYPE: Record<string, PaymentStepError['kind']> = {
  Refused: 'refused',
  OutcomeUnknown: 'outcome_unknown',
  Ended: 'ended',
  [SECRET_UNAVAILABLE]: 'resubmit',
};

/** Runs an Update (retried through a server restart with one update id) and words its failure. */
export async function step<T>(run: (updateId: string) => Promise<T>): Promise<T> {
  const updateId = randomUUID();
  try {
    return await retryTransient('payment step (Update)', () => run(updateId));
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
      const kind = (cause?.type && KIND_BY_TYPE[cause.type]) || 'not_expected';
      throw new PaymentStepError(kind, cause?.message ?? err.message, cause?.details?.[0]);
    }
    if (err instanceof WorkflowNotFoundError)
      throw new PaymentStepError(
        'ended',
        'no payment flow is waiting for this reference (it has ended or never started)',
      );
    throw err;
  }
}

/** A payment input, validated (StarterInputError 'invalid payment input: ...' naming every broken rule). */
export const parsePayment = <S extends z.ZodType>(schema: S, raw: unknown): z.output<S> =>
  parseStarterInput(schema, raw, 'payment');

/** A payment's search attributes at its start: flow, reference, amount, currency, first status. */
export const paymentSearch = (
  flow: string,
  input: { transactionRef: string; amount: number; currency: string },
  status: string,
): PaymentSearchFields => ({
  flow,
  reference: input.transactionRef,
  amount: input.amount,
  currency: input.currency,
  status,
});

/** The payments' duplicate rule on top of startFlow's: a reference already started is a DuplicateReferenceError. */
export async function startOnce<H>(reference: string, start: () => Promise<H>): Promise<H> {
  try {
    return await start();
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new DuplicateReferenceError(reference);
    throw err;
  }
}

// ---- the field rules every payment input shares ----

export const reference = z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be 1-100 letters, digits, _ . or -');
export const lowestUnit = z.number().int('must be an integer in the lowest unit').positive('must be greater than 0');
export const customer = z.object({
  name: z.string().min(1, 'is required'),
  email: z.email('must be an e-mail address'),
});
export const ms = z.number().int('must be an integer number of ms').positive('must be greater than 0');
export const graceMs = z.number().int('must be an integer number of ms').nonnegative('must not be negative');
export const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

export const handle = (client: Client, ref: string): WorkflowHandle =>
  client.workflow.getHandle(paymentWorkflowId(ref));

/**
 * Queries the payment flow under payment-<ref>. A webhook that arrives after the flow closed (a
 * late redelivery) starts a holder under the same id, which then is the id's latest run; the
 * query goes to the flow's own (closed) run instead, so a finished payment still answers.
 */
export async function queryPayment<T>(client: Client, ref: string, query: QueryDefinition<T, []>): Promise<T> {
  try {
    return await handle(client, ref).query(query);
  } catch (err) {
    const own = await paymentFlowRun(client, ref).catch(() => undefined);
    if (!own?.behindHolder) throw err; // the latest run is the flow itself: its failure stands
    return own.handle.query(query);
  }
}

/**
 * Checks a code's format here (a malformed one is never sealed), seals it, and sends its handle
 * as the Update. The activity deletes the record once the service answered; when the Update
 * failed (refused before use, or the answer lost) the record goes in the store's next batch
 * delete here: a payment's path pays no round trip for deletions.
 */
export async function sendSealedCode<S>(
  ctx: StarterContext,
  ref: string,
  purpose: SecretPurpose,
  code: string,
  rule: { pattern: RegExp; message: string },
  send: (h: WorkflowHandle, sealed: string, updateId: string) => Promise<S>,
): Promise<S> {
  if (typeof code !== 'string' || !rule.pattern.test(code)) throw new PaymentStepError('not_expected', rule.message);
  const sealed = await ctx.claimCheck.seal(purpose, code);
  try {
    return await step((updateId) => send(handle(ctx.client, ref), sealed, updateId));
  } catch (err) {
    // Refused before use, or its answer lost: never used again (a new code is sealed for a retry).
    ctx.claimCheck.discardSoon(sealed);
    throw err;
  }
}

/** A bank debit's or USSD payment's state (both flows publish DirectPaymentState). */
export const getDirectPaymentState = (ctx: Pick<StarterContext, 'client'>, ref: string): Promise<DirectPaymentState> =>
  retryTransient('payment state (query)', () => queryPayment(ctx.client, ref, directPaymentStateQuery));

/** Polls a state query until `done` holds (for backends and tests that wait for a step, e.g. the USSD code). */
export async function waitForState<S>(
  read: () => Promise<S>,
  done: (s: S) => boolean,
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<S> {
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  let last: S | undefined;
  for (;;) {
    last = await read().catch(() => last);
    if (last !== undefined && done(last)) return last;
    if (Date.now() > deadline) throw new Error(`state not reached in time; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}

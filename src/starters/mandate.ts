// Typed starters for direct-debit mandates: start, OTP, resend, debit, cancel (idempotent, by
// update or signal), state, and the service's listing (D5, filters and cursors) through the API client.
// The BVN and the OTP are sealed into the claim-check store here, in the backend's process
// (startMandate and submitMandateOtp take the StarterContext for it): the workflow input carries
// `customer.bvnHandle` and the OTP Update a handle, never the digits.
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { StarterContext } from './connect';
import { retryTransient } from './temporal-retry';
import { startFlow } from './start-flow';
import { z } from 'zod';
import type { OperationData, OperationRequest } from '../api';
import { StarterInputError, parseStarterInput } from '../shared/input-error';
import {
  IDEMPOTENCY_KEY_RULE,
  MANDATE_OTP_RULE,
  MAX_INTERVAL,
  MINIMUM_DEBIT_KOBO,
  cancelMandateSignal,
  cancelMandateUpdate,
  debitMandateUpdate,
  mandateStateQuery,
  mandateWorkflowId,
  resendMandateOtpUpdate,
  resolveDebitUpdate,
  submitMandateOtpUpdate,
  type MandateDebit,
  type MandateInput,
  type MandateRequest,
  type MandateState,
  type ResolveDebitRequest,
} from '../shared/mandate';
import type { mandateWorkflow } from '../workflows/mandate';
import { merchantEventTargetSchema } from '../shared/merchant-event';

const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD');
const kobo = z.number().int('must be an integer in kobo').positive('must be greater than 0');

export const mandateInputSchema = z
  .object({
    mandateRef: z.string().regex(/^[A-Za-z0-9_-]{1,60}$/, 'must be 1-60 letters, digits, _ or -'),
    debitType: z.enum(['variable', 'fixed']),
    amount: kobo.min(MINIMUM_DEBIT_KOBO, 'must be at least 20000 kobo (N200)'),
    accountNumber: z.string().regex(/^\d{10}$/, 'must be 10 digits'),
    bankCode: z.string().regex(/^\d{3,6}$/, 'must be a NIP bank code'),
    description: z.string().min(1, 'is required'),
    startDate: date,
    endDate: date,
    customerEmail: z.email('must be an e-mail address'),
    customer: z.object({
      bvn: z.string().regex(/^\d{11}$/, 'must be 11 digits'),
      firstName: z.string().min(1, 'is required'),
      lastName: z.string().min(1, 'is required'),
      address: z.string().min(1, 'is required'),
      phone: z.string().regex(/^\+?\d{7,15}$/, 'must be a phone number'),
    }),
    fixed: z
      .object({
        frequency: z.enum(['MONTHLY', 'WEEKLY', 'YEARLY']),
        interval: z.number().int('must be a whole number').min(1, 'must be at least 1'),
        initialDebitAmount: kobo.min(MINIMUM_DEBIT_KOBO, 'must be at least 20000 kobo (N200)'),
        initialDebitDate: date,
      })
      .optional(),
    fixedDebits: z
      .enum(['observe', 'send'], { error: "must be 'observe' (the service debits on its schedule) or 'send'" })
      .optional(),
    observeReadsMs: z
      .array(z.number().int('must be whole ms').min(0, 'must not be negative'))
      .min(1, 'must name at least one read')
      .max(10, 'must name at most 10 reads')
      .refine((a) => a.every((ms, n) => n === 0 || ms > a[n - 1]), 'must be increasing')
      .optional(),
    /** Where this mandate's events go (docs/events.md); else the worker's NOTIFY_URL, at delivery. */
    notify: merchantEventTargetSchema.optional(),
    otpTimeoutMs: z.number().int().positive().optional(),
    maxSessionResends: z.number().int().min(0).max(10).optional(),
    narration: z.string().max(100).optional(),
    debitsPerRun: z.number().int().min(1).max(500).optional(),
    scheduledDebitRetries: z.number().int().min(0).max(10).optional(),
    scheduledRetryDelayMs: z.number().int().positive().optional(),
    debitSettleMs: z.number().int().min(0).max(600_000).optional(),
    pendingRequeryMs: z
      .array(
        z
          .number()
          .int()
          .min(0)
          .max(24 * 3600 * 1000),
      )
      .max(20)
      .optional(),
    unresolvedRequeryForMs: z.number().int().positive().optional(),
    unresolvedRequeryFirstMs: z.number().int().positive().optional(),
    unresolvedRequeryMaxMs: z.number().int().positive().optional(),
  })
  .superRefine((v, ctx) => {
    if (v.debitType === 'fixed' && !v.fixed)
      ctx.addIssue({ code: 'custom', path: ['fixed'], message: 'is required for a FIXED mandate' });
    if (v.debitType === 'variable' && v.fixed)
      ctx.addIssue({ code: 'custom', path: ['fixed'], message: 'applies only to a FIXED mandate' });
    if (v.debitType === 'variable' && (v.fixedDebits !== undefined || v.observeReadsMs !== undefined))
      ctx.addIssue({
        code: 'custom',
        path: [v.fixedDebits !== undefined ? 'fixedDebits' : 'observeReadsMs'],
        message: 'applies only to a FIXED mandate',
      });
    if (v.endDate < v.startDate)
      ctx.addIssue({ code: 'custom', path: ['endDate'], message: 'must not be before startDate' });
    if (v.fixed && v.fixed.initialDebitAmount > v.amount)
      ctx.addIssue({
        code: 'custom',
        path: ['fixed', 'initialDebitAmount'],
        message: 'must not exceed the mandate amount',
      });
    if (v.fixed && v.fixed.interval > MAX_INTERVAL[v.fixed.frequency]) {
      ctx.addIssue({
        code: 'custom',
        path: ['fixed', 'interval'],
        message: `must be at most ${MAX_INTERVAL[v.fixed.frequency]} for ${v.fixed.frequency} (one debit a day)`,
      });
    }
    if (v.fixed && (v.fixed.initialDebitDate < v.startDate || v.fixed.initialDebitDate > v.endDate)) {
      ctx.addIssue({
        code: 'custom',
        path: ['fixed', 'initialDebitDate'],
        message: 'must lie between startDate and endDate',
      });
    }
  });

/**
 * The flow's input from a backend's request: validated (StarterInputError 'invalid mandate input: ...')
 * and its BVN sealed here, in the caller's process (purpose 'bvn', the store's TTL), so the input
 * carries `customer.bvnHandle` and never the digits. startMandate starts the flow with it; the Nexus
 * `mandateCreate` operation takes it as it is (sealMandateForNexus, src/nexus/sealing.ts).
 */
export async function sealMandateRequest(
  ctx: Pick<StarterContext, 'claimCheck'>,
  raw: MandateRequest,
): Promise<MandateInput> {
  const {
    customer: { bvn, ...customer },
    ...rest
  } = parseStarterInput(mandateInputSchema, raw, 'mandate');
  const bvnHandle = await ctx.claimCheck.seal('bvn', bvn);
  return { ...rest, customer: { ...customer, bvnHandle } } as MandateInput;
}

/**
 * Validates the request and seals the BVN (sealMandateRequest), then starts the flow with its
 * handle. If the start fails, the sealed BVN is deleted again. A BVN whose record expires before the
 * create is sent (no worker within the TTL) ends the flow as failed with a reason that says to start
 * again with the BVN.
 */
export async function startMandate(ctx: StarterContext, raw: MandateRequest) {
  const input = await sealMandateRequest(ctx, raw);
  try {
    return await startFlow<typeof mandateWorkflow>(ctx, {
      operation: 'start mandate',
      workflowType: 'mandateWorkflow',
      workflowId: mandateWorkflowId(input.mandateRef),
      args: [input],
      // A mandate that ended (e.g. failed before the create: its sealed BVN expired) may be started again under its reference.
      policies: { workflowIdReusePolicy: 'ALLOW_DUPLICATE' },
      search: {
        flow: 'mandate',
        reference: input.mandateRef,
        amount: input.amount,
        currency: 'NGN',
        status: 'creating',
      },
    });
  } catch (err) {
    await ctx.claimCheck.discard(input.customer.bvnHandle).catch(() => undefined);
    throw err;
  }
}

const handle = (client: Client, mandateRef: string) => client.workflow.getHandle(mandateWorkflowId(mandateRef));

/**
 * Checks the OTP's format (a malformed one is refused before it is sealed or sent: StarterInputError
 * 'invalid mandate OTP input: otp must be 4 to 8 digits'), seals it (purpose
 * 'mandate-otp') and sends its handle as the Update. The record is deleted afterwards whatever
 * happened. An Update failure (WorkflowUpdateFailedError) carries the reason as its cause: a wrong
 * OTP, an expired session, or type SecretUnavailable ('the OTP expired before it was sent: send it
 * again'; the flow keeps waiting).
 */
export async function submitMandateOtp(ctx: StarterContext, mandateRef: string, otp: string): Promise<MandateState> {
  if (typeof otp !== 'string' || !MANDATE_OTP_RULE.pattern.test(otp))
    throw new StarterInputError('mandate OTP', [{ field: 'otp', rule: MANDATE_OTP_RULE.message.replace(/^otp /, '') }]);
  const sealed = await ctx.claimCheck.seal('mandate-otp', otp);
  try {
    const updateId = randomUUID(); // one id across retries: the server runs the Update once
    return await retryTransient('mandate OTP (Update)', () =>
      handle(ctx.client, mandateRef).executeUpdate(submitMandateOtpUpdate, { args: [sealed], updateId }),
    ).catch(sayNotYet);
  } finally {
    await ctx.claimCheck.discard(sealed).catch(() => undefined);
  }
}
export const resendMandateOtp = (ctx: Pick<StarterContext, 'client'>, mandateRef: string): Promise<MandateState> =>
  handle(ctx.client, mandateRef).executeUpdate(resendMandateOtpUpdate).catch(sayNotYet);

/**
 * The mandate registers its OTP Updates only once it waits for the OTP (src/workflows/mandate/approval.ts,
 * openOtpHandlers): before that the SDK refuses with "No registered handler". Said in the mandate's words.
 */
function sayNotYet(err: unknown): never {
  const cause = (err as { cause?: { message?: string } }).cause;
  if (err instanceof WorkflowUpdateFailedError && cause?.message?.startsWith('No registered handler for update'))
    throw new WorkflowUpdateFailedError(
      err.message,
      ApplicationFailure.create({
        message: 'no OTP is expected yet: the mandate is still being created; send it once its status is awaiting_otp',
        type: 'Error',
        nonRetryable: true,
      }),
    );
  throw err;
}
export interface DebitOptions {
  narration?: string;
  /**
   * The caller's idempotency key: send the same key again (a retry, a second CLI run) and the
   * answer is the same debit, never a second one. Made here (a UUID) when absent and returned in
   * the debit's `key`: keep it to retry safely.
   */
  idempotencyKey?: string;
}

/** A VARIABLE mandate's debit on request (Update `debitMandate`, Update id `debit-<key>`); answers the debit with its `key`. */
export async function debitMandate(
  ctx: Pick<StarterContext, 'client'>,
  mandateRef: string,
  amount: number,
  options?: string | DebitOptions,
): Promise<MandateDebit> {
  const opts: DebitOptions = typeof options === 'string' ? { narration: options } : (options ?? {});
  const idempotencyKey = opts.idempotencyKey ?? randomUUID();
  if (!IDEMPOTENCY_KEY_RULE.pattern.test(idempotencyKey))
    throw new StarterInputError('mandate debit', [
      { field: 'idempotencyKey', rule: IDEMPOTENCY_KEY_RULE.message.replace(/^idempotencyKey /, '') },
    ]);
  return retryTransient('mandate debit (Update)', () =>
    handle(ctx.client, mandateRef).executeUpdate(debitMandateUpdate, {
      args: [{ amount, ...(opts.narration !== undefined ? { narration: opts.narration } : {}), idempotencyKey }],
      updateId: `debit-${idempotencyKey}`,
    }),
  );
}

/** An operator resolves a debit whose outcome stayed unknown (by its idempotency key or reference); answers the debit. */
export const resolveMandateDebit = (
  ctx: Pick<StarterContext, 'client'>,
  mandateRef: string,
  req: ResolveDebitRequest,
): Promise<MandateDebit> => handle(ctx.client, mandateRef).executeUpdate(resolveDebitUpdate, { args: [req] });
export const getMandateState = (ctx: Pick<StarterContext, 'client'>, mandateRef: string): Promise<MandateState> =>
  retryTransient('mandate state (query)', () => handle(ctx.client, mandateRef).query(mandateStateQuery));

/**
 * Cancels (D4) through the update and answers the final state. Idempotent: a mandate whose flow
 * already ended answers that final state (cancelled, or the state it ended in) without a call.
 */
export async function cancelMandate(ctx: Pick<StarterContext, 'client'>, mandateRef: string): Promise<MandateState> {
  const h = handle(ctx.client, mandateRef);
  const desc = await h.describe();
  if (desc.status.name === 'RUNNING') {
    try {
      return await h.executeUpdate(cancelMandateUpdate);
    } catch (err) {
      // The flow may have ended between describe and the update; then its result answers.
      if (!(err instanceof WorkflowNotFoundError) && (await h.describe()).status.name === 'RUNNING') throw err;
    }
  }
  const final = (await h.result().catch(() => undefined)) as MandateState | undefined;
  if (final) return final;
  throw new WorkflowNotFoundError(
    `mandate ${mandateRef} has no result: its flow ended without one`,
    mandateWorkflowId(mandateRef),
    undefined,
  );
}

/** Fire-and-forget cancel: the flow cancels at its next step (a refusal is recorded in `failures`). */
export const requestMandateCancel = (ctx: Pick<StarterContext, 'client'>, mandateRef: string): Promise<void> =>
  handle(ctx.client, mandateRef).signal(cancelMandateSignal);

export type MandateListFilters = Omit<OperationRequest<'mandates.list'>, 'cursor'>;
export type MandatePage = OperationData<'mandates.list'>;

/** The mandate list (D5) through the API client: the spec's filters, one page; pass a page's next_cursor/prev_cursor as `cursor`. */
export async function listMandates(
  ctx: Pick<StarterContext, 'api'>,
  filters: MandateListFilters = {},
  cursor?: string,
): Promise<MandatePage> {
  const res = await ctx.api.mandates.list({ ...filters, ...(cursor !== undefined ? { cursor } : {}) });
  return res.data;
}

/** Every page of the mandate list for the filters, following next_cursor (at most maxPages pages). */
export async function* listAllMandates(
  ctx: Pick<StarterContext, 'api'>,
  filters: MandateListFilters = {},
  maxPages = 1000,
): AsyncGenerator<MandatePage['records'][number]> {
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const res = await listMandates(ctx, filters, cursor);
    yield* res.records;
    if (!res.has_more || res.next_cursor === undefined || res.next_cursor === null) return;
    cursor = String(res.next_cursor);
  }
}

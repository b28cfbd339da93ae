// Virtual-account credit activities: the durable duplicate check (va_credit_records), the
// confirmation of the unsigned fields by the service's own query (C5), and the hand-over: to a
// registered function, to the old callback, or as a merchant event through the one pipeline every
// flow's events take (its own delivery workflow: `notify list | redeliver | replay`).
import { outboundPolicyOf } from '../notify/target-guard';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { PaymentsApiError, type PaymentsClient, type VirtualAccountTransaction } from '../api';
import { flowDeps, type ActivityDeps, type FlowDeps } from './deps';
import { bindActivities } from './bind';
import { refusalType } from './failures';
import type {
  CreditedVirtualAccountTransaction,
  CreditHandoff,
  VirtualAccountCredit,
  VirtualAccountCreditOutcome,
} from '../shared/virtual-account-credit';
import type { VirtualAccountCreditStore } from '../virtual-accounts/credit-store';
import {
  CreditHandlerRefused,
  creditReceivedEvent,
  httpCreditHandler,
  type CreditHandler,
} from '../virtual-accounts/credit-handler';
import type { MerchantEventEmission, MerchantEventEmitted } from '../shared/merchant-event';
import { createMerchantEventDeliveryActivities } from './merchant-event-delivery';
import type { AppConfig } from '../config/config';

/** Exact comparison of two decimal strings ("5000" = "5000.00"), without floats. */
export function sameDecimal(a: string | null | undefined, b: string | null | undefined): boolean {
  const norm = (s: string) => {
    const m = /^0*(\d*?)(?:\.(\d*?)0*)?$/.exec(s.trim());
    return m ? `${m[1] || '0'}.${m[2] ?? ''}` : `invalid:${s}`;
  };
  return typeof a === 'string' && typeof b === 'string' && norm(a) === norm(b);
}

/** A row of the filtered transaction list (C5) is the notified credit when every signed value agrees. */
export function matchesSignedValues(row: VirtualAccountTransaction, credit: VirtualAccountCredit): boolean {
  return (
    row.virtual_account_number === credit.virtualAccountNumber &&
    sameDecimal(row.principal_amount, credit.principalAmount) &&
    sameDecimal(row.settled_amount, credit.settledAmount) &&
    (row.currency ?? credit.currency) === credit.currency &&
    row.customer?.customer_identifier === credit.customerIdentifier &&
    (row.transaction_indicator ?? 'C') === 'C' &&
    // v2 references are the ones the filtered list knows; v3 ones are not (looked up by session_id instead).
    (credit.version === 3 || row.transaction_reference === credit.transactionReference)
  );
}

/** The filtered transaction list (C5) refused the lookup (not found, bad request, no access): a retry gets the same answer, so none is made. */
const filteredListRefused = (err: unknown): err is PaymentsApiError =>
  err instanceof PaymentsApiError && refusalType(err) !== undefined;

/**
 * The freeze the service shows for a credit (its record's `frozen_transaction`); `known: false` when the filtered
 * list (C5) has no matching record.
 */
export type CreditFreezeLookup =
  { known: false } | { known: true; frozen?: { freezeTransactionRef?: string; reason?: string } };

function store(deps: ActivityDeps): VirtualAccountCreditStore {
  if (!deps.vaCredits) {
    throw ApplicationFailure.create({
      type: 'ConfigurationError',
      message:
        'the virtual-account credit store is not configured on this worker (retried: nothing is credited or lost until a worker with it runs)',
    });
  }
  return deps.vaCredits;
}

/** The delivery's identity: the credit workflow run that asks. */
function deliveryRunId(): string {
  const run = Context.current().info.workflowExecution;
  if (!run)
    throw ApplicationFailure.nonRetryable(
      'virtual-account credit activities run only inside the credit workflow',
      'InvalidRequest',
    );
  return `${run.workflowId}/${run.runId}`;
}

interface CreditDeps extends FlowDeps {
  deps: ActivityDeps;
  /** A registered function or the old callback. */
  handler?: CreditHandler;
  /** Credits as merchant events: their own URL (VA_CREDIT_NOTIFY_URL) or none (the deployment's), and the emission. */
  events?: { url?: string; emit: (emission: MerchantEventEmission) => Promise<MerchantEventEmitted> };
  /** With an events target, a hand-over that fails names it, so the flow can tell it that it gave up (docs/events.md). */
  failureDetails: unknown[];
}

/**
 * The credit's rows in the filtered list (C5): by reference (v2, error log) or session id (v3). undefined: no key to
 * ask with.
 */
async function serviceRecords(api: PaymentsClient, credit: VirtualAccountCredit) {
  const query =
    credit.version === 3
      ? credit.lookupSessionId
        ? { session_id: credit.lookupSessionId }
        : undefined
      : { transactionReference: credit.transactionReference };
  if (!query) return undefined;
  return (await api.virtualAccounts.merchantTransactionsFiltered({ ...query, perPage: 20 })).data.rows;
}

/**
 * The service's record (C5) whose signed values match the credit; `refused` when the filtered list refused the
 * lookup (a retry gets the same answer). A transient failure throws: Temporal retries within the workflow's bound.
 */
async function serviceRecord(
  api: PaymentsClient,
  credit: VirtualAccountCredit,
): Promise<{ row?: VirtualAccountTransaction; rows?: number; refused?: { status?: number } }> {
  try {
    const rows = await serviceRecords(api, credit);
    return { row: rows?.find((r) => matchesSignedValues(r, credit)), rows: rows?.length };
  } catch (err) {
    if (filteredListRefused(err)) return { refused: { status: err.status } };
    throw err;
  }
}

/**
 * The duplicate check: records the credit unless the reference was credited before.
 * Idempotent per workflow run (a retry of the run that credited answers 'credited' again).
 */
async function recordVirtualAccountCredit(
  { deps, log }: CreditDeps,
  credit: VirtualAccountCredit,
): Promise<VirtualAccountCreditOutcome> {
  const claim = await store(deps).claim(credit, deliveryRunId());
  const ref = { transactionReference: credit.transactionReference };
  if (claim.conflicting)
    log.warn(
      ref,
      'virtual-account credit: a delivery with the same reference carries other signed values; not credited',
    );
  else if (!claim.credited)
    log.info({ ...ref, deliveries: claim.deliveries }, 'virtual-account credit: duplicate delivery, already credited');
  return { status: claim.credited ? 'credited' : 'duplicate', credit: claim.record, deliveries: claim.deliveries };
}

/**
 * v2/v3: fee_charged and transaction_date are not signed, so they are taken from the service's
 * own record (C5), found by reference (v2) or session id (v3) and accepted only when its signed
 * values match. Answers the credit as recorded afterwards. Not found or refused: left unconfirmed.
 */
async function confirmVirtualAccountCredit(
  { api, deps, log }: CreditDeps,
  credit: VirtualAccountCredit,
): Promise<CreditedVirtualAccountTransaction | undefined> {
  const runId = deliveryRunId();
  const { row, rows, refused } = await serviceRecord(api, credit);
  const ref = { transactionReference: credit.transactionReference };
  if (refused) {
    log.warn(
      { ...ref, ...refused },
      'virtual-account credit: the service refused the lookup of its record; fee and date left unconfirmed',
    );
    return undefined;
  }
  if (rows === undefined) return undefined;
  if (!row) {
    const message =
      'virtual-account credit: no record of the service matches the signed values; fee and date left unconfirmed';
    log.warn({ ...ref, rows }, message);
    return undefined;
  }
  return store(deps).confirm(credit.transactionReference, runId, {
    feeCharged: row.fee_charged ?? undefined,
    transactionDate: row.transaction_date ?? undefined,
  });
}

/**
 * Whether the service holds the credit's funds (its record's `frozen_transaction` in the filtered list (C5)). Throws
 * on a transient failure (the workflow retries); `known: false` when the list refuses or has no matching record.
 */
async function readVirtualAccountCreditFreeze(
  { api }: CreditDeps,
  credit: VirtualAccountCredit,
): Promise<CreditFreezeLookup> {
  const { row } = await serviceRecord(api, credit);
  if (!row) return { known: false };
  const f = row.frozen_transaction;
  if (!f || !(f.freeze_transaction_ref || f.reason)) return { known: true };
  const frozen = {
    ...(f.freeze_transaction_ref ? { freezeTransactionRef: f.freeze_transaction_ref } : {}),
    ...(f.reason ? { reason: f.reason } : {}),
  };
  return { known: true, frozen };
}

export interface HandOverRequest {
  credit: CreditedVirtualAccountTransaction;
  releasedFreeze?: { freezeTransactionRef?: string; reason?: string };
}

/**
 * Hands the recorded credit over, with the transaction reference as the idempotency key: as a
 * merchant event when this worker's credits are events, else to the merchant's handler, where a
 * permanent refusal is an answer (recorded) and anything else is retried.
 */
async function handOverVirtualAccountCredit(d: CreditDeps, req: HandOverRequest): Promise<CreditHandoff> {
  const { handler, log, failureDetails } = d;
  if (d.events) return emitCreditReceived(d, d.events, req);
  const { attempt } = Context.current().info;
  const idempotencyKey = req.credit.transactionReference;
  const at = () => new Date().toISOString();
  if (!handler) return { status: 'not_configured', idempotencyKey, detail: NO_HANDLER, at: at() };
  const where = { transactionReference: idempotencyKey, attempt };
  try {
    const released = req.releasedFreeze ? { releasedFreeze: req.releasedFreeze } : {};
    const answer = await handler({ idempotencyKey, credit: req.credit, ...released });
    log.info(where, 'virtual-account credit handed over');
    const detail = answer && answer.detail ? { detail: answer.detail } : {};
    return { status: 'delivered', idempotencyKey, attempts: attempt, ...detail, at: at() };
  } catch (err) {
    if (err instanceof CreditHandlerRefused) {
      log.warn(where, 'virtual-account credit: the handler refused it');
      return { status: 'refused', idempotencyKey, attempts: attempt, detail: err.message, at: at() };
    }
    log.warn({ ...where, err: (err as Error).message }, 'virtual-account credit: hand-over failed; retried');
    throw ApplicationFailure.create({
      type: 'CreditHandoffFailed',
      message: `the credit handler could not take the credit: ${(err as Error).message}`,
      details: failureDetails,
    });
  }
}

/**
 * The credit as a merchant event: `virtual_account.credit.received`, under its stable id, handed to
 * its own delivery workflow like every flow's events. The credit is handed over once that delivery
 * exists (a retried hand-over finds it already started: the same event, never a second one); from
 * then on the delivery owns the attempts, the retries and `delivery_failed` (`notify list --failed`).
 */
async function emitCreditReceived(
  { log, failureDetails }: CreditDeps,
  events: NonNullable<CreditDeps['events']>,
  req: HandOverRequest,
): Promise<CreditHandoff> {
  const { attempt } = Context.current().info;
  const idempotencyKey = req.credit.transactionReference;
  const event = creditReceivedEvent({
    idempotencyKey,
    credit: req.credit,
    ...(req.releasedFreeze ? { releasedFreeze: req.releasedFreeze } : {}),
  });
  const where = { transactionReference: idempotencyKey, attempt, eventId: event.id };
  let emitted: MerchantEventEmitted;
  try {
    emitted = await events.emit({ event, ...(events.url !== undefined ? { url: events.url } : {}) });
  } catch (err) {
    log.warn({ ...where, err: (err as Error).message }, 'virtual-account credit: its event could not be emitted');
    throw ApplicationFailure.create({
      type: 'CreditHandoffFailed',
      message: `the credit's event could not be handed to its delivery: ${(err as Error).message}`,
      nonRetryable: err instanceof ApplicationFailure && err.nonRetryable === true,
      details: failureDetails,
    });
  }
  const at = new Date().toISOString();
  if (emitted === 'not-configured') return { status: 'not_configured', idempotencyKey, detail: NO_HANDLER, at };
  log.info(where, 'virtual-account credit emitted as an event');
  const detail =
    emitted === 'started'
      ? 'handed to its delivery (notify list)'
      : 'its delivery had started already (a retried hand-over): the same event';
  return { status: 'emitted', idempotencyKey, eventId: event.id, attempts: attempt, detail, at };
}

const NO_HANDLER =
  'no credit handler on this worker (VA_CREDIT_NOTIFY_URL, NOTIFY_URL and VA_CREDIT_CALLBACK_URL unset): the credit is recorded only';

/**
 * Whether the durable record (va_credit_records) holds the reference: only then is its entry in the webhook error
 * log deleted (C11).
 */
async function isVirtualAccountCreditRecorded({ deps }: CreditDeps, transactionReference: string): Promise<boolean> {
  return (await store(deps).get(transactionReference)) !== undefined;
}

export function createVirtualAccountCreditActivities(deps: ActivityDeps) {
  const target = creditHandoffTarget(deps.config);
  const handler: CreditHandler | undefined =
    deps.creditHandler ??
    (target?.format === 'callback'
      ? // The same outbound rules as every merchant event (src/notify/target-guard.ts).
        httpCreditHandler({ ...target, policy: outboundPolicyOf(deps.config) })
      : undefined);
  // A registered function comes first; else, with an events target, credits are events like any flow's.
  const events =
    !deps.creditHandler && target?.format === 'event'
      ? { ...target, emit: createMerchantEventDeliveryActivities(deps).emitMerchantEvent }
      : undefined;
  // The URL a give-up's needs_attention goes to: the credits' own, else the deployment's.
  const giveUpUrl = events && (events.url ?? deps.config.notify?.url);
  const failureDetails = giveUpUrl ? [{ notify: { url: giveUpUrl } }] : [];
  const d: CreditDeps = {
    ...flowDeps(deps, 'va-credit'),
    deps,
    handler,
    ...(events ? { events } : {}),
    failureDetails,
  };
  return bindActivities(d, {
    recordVirtualAccountCredit,
    confirmVirtualAccountCredit,
    readVirtualAccountCreditFreeze,
    handOverVirtualAccountCredit,
    isVirtualAccountCreditRecorded,
  });
}

export type VirtualAccountCreditActivities = ReturnType<typeof createVirtualAccountCreditActivities>;

/**
 * Where a worker hands credits over (docs/configuration.md, "precedence"): as merchant events
 * (`url`: VA_CREDIT_NOTIFY_URL, the alias; absent: the deployment's NOTIFY_URL, resolved by their
 * delivery like every flow's), signed with NOTIFY_SECRET by that delivery; else the deprecated
 * callback format (VA_CREDIT_CALLBACK_URL/SECRET); else none. A function registered in the worker
 * (ActivityDeps.creditHandler) comes before both.
 */
export function creditHandoffTarget(
  config: Pick<AppConfig, 'virtualAccounts' | 'notify'>,
): { format: 'event'; url?: string } | { format: 'callback'; url: string; secret: string } | undefined {
  const events = config.virtualAccounts?.creditEvents;
  // Without NOTIFY_SECRET an event cannot be signed (the config refuses VA_CREDIT_NOTIFY_URL without it).
  if (events && config.notify?.secret)
    return { format: 'event', ...(events.url !== undefined ? { url: events.url } : {}) };
  const callback = config.virtualAccounts?.creditCallback;
  return callback ? { format: 'callback', ...callback } : undefined;
}

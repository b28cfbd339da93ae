// What the Temporal Web UI shows for a flow (issue #27 §5), in one home: a flow's static summary and
// details (set by whatever starts it: src/starters/start-flow.ts, the Nexus handler, the schedules),
// each activity's summary, and the words for a flow's current details (both set by the workflow
// interceptor src/workflows/steps/ui-metadata.ts).
//
// Built only from the search-attribute fields (flow kind, reference, amount, currency) and fixed
// words: never a card number, phone, e-mail, name, BVN, token or key. Workflow code imports this
// module, so it is deterministic: no Intl, no clock (times are passed in).
import { paymentSearchAttributes, type PaymentSearchFields } from './search-attributes';

/** What the Web UI's list and the workflow page say a flow is. */
const FLOW_TITLES: Record<string, string> = {
  card: 'Card payment',
  bank: 'Bank account payment',
  ussd: 'USSD payment',
  checkout: 'Hosted checkout',
  recurring: 'Recurring card plan',
  'recurring-charge': 'Recurring card charge',
  mandate: 'Direct-debit mandate',
  'mandate-debit': 'Mandate debit',
  pos: 'POS remote request',
  'pos-remote': 'POS remote request',
  'pos-terminal': 'POS card transaction',
  'pos-terminal-lock': 'POS terminal lock',
  'pos-preauth': 'POS pre-authorisation',
  'pos-refund': 'POS refund',
  'pos-refund-ledger': 'POS refund ledger',
  vend: 'Electricity vend',
  'sms-send': 'SMS send',
  'sms-campaign': 'SMS campaign',
  'merchant-event': 'Merchant event delivery',
  'virtual-account-credit': 'Virtual-account credit',
  'va-credit': 'Virtual-account credit',
  'unmatched-webhook': 'Unmatched payment webhook',
  reconciliation: 'Reconciliation run',
  'reconciliation-mark': 'Reconciliation mark',
  // Flows started with no PaymentFlow (schedules): by workflow type.
  scheduledTokenChargeWorkflow: 'Scheduled card charge',
  scheduledMandateDebitWorkflow: 'Scheduled mandate debit',
  virtualAccountErrorLogSweepWorkflow: 'Virtual-account error-log sweep',
  // Children a flow starts (their search attributes come later, from the child itself).
  tokenChargeWorkflow: 'Card token charge',
  checkoutWorkflow: 'Hosted checkout',
  virtualAccountCreditWorkflow: 'Virtual-account credit',
};

/** Digits after the point per ISO 4217 currency; 2 for any other. */
const MINOR_DIGITS: Record<string, number> = { JPY: 0, KRW: 0, XOF: 0, XAF: 0, BHD: 3, KWD: 3, OMR: 3, TND: 3 };

/**
 * An integer amount in the lowest unit, written for a person: formatMoney(100000, 'NGN') is
 * 'NGN 1,000.00'. String arithmetic only (no float ever touches the amount).
 */
export function formatMoney(amount: number, currency: string): string {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`amount must be a safe integer (lowest unit), got ${amount}`);
  const digits = MINOR_DIGITS[currency] ?? 2;
  const sign = amount < 0 ? '-' : '';
  const units = String(Math.abs(amount)).padStart(digits + 1, '0');
  const whole = units.slice(0, units.length - digits).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const minor = digits > 0 ? `.${units.slice(units.length - digits)}` : '';
  return `${sign}${currency} ${whole}${minor}`;
}

/** The flow's title: its kind from the table, else its workflow type's, else the workflow type. */
export function flowTitle(flow: string | undefined, workflowType: string): string {
  const key = flow !== undefined && Object.hasOwn(FLOW_TITLES, flow) ? flow : workflowType;
  return Object.hasOwn(FLOW_TITLES, key) ? FLOW_TITLES[key] : workflowType;
}

export interface FlowStartMetadata {
  staticSummary: string;
  staticDetails: string;
}

/**
 * The static summary and details a flow starts with: "Card payment NGN 1,000.00 · ORDER-123" and a few
 * lines of markdown (what it is, the reference to search for, the amount in the lowest unit).
 */
export function flowStartMetadata(workflowType: string, search: PaymentSearchFields): FlowStartMetadata {
  const title = flowTitle(search.flow, workflowType);
  const money =
    search.amount !== undefined && search.currency !== undefined && Number.isSafeInteger(search.amount)
      ? formatMoney(search.amount, search.currency)
      : undefined;
  const summary = [title, money].filter(Boolean).join(' ') + (search.reference ? ` · ${search.reference}` : '');
  const details = [
    `**${title}**`,
    ...(search.reference ? [`- reference: \`${search.reference}\` (search attribute PaymentReference)`] : []),
    ...(money ? [`- amount: ${money} (${search.amount} in the lowest unit)`] : []),
    `- workflow type: \`${workflowType}\``,
    '- current state: the current details, or the `state` query',
  ];
  return { staticSummary: summary, staticDetails: details.join('\n') };
}

/** A start's search attributes and its Web UI summary and details from the same fields. */
export function flowStartOptions(workflowType: string, search: PaymentSearchFields) {
  return { typedSearchAttributes: paymentSearchAttributes(search), ...flowStartMetadata(workflowType, search) };
}

/**
 * A child flow's summary and details, set by the workflow interceptor when its parent gave none: its
 * title, its amount and currency when its input has both (an integer and a three-letter code; nothing
 * else of the input is read), and its workflow id.
 */
export function childStartMetadata(
  workflowType: string,
  workflowId: string,
  args: readonly unknown[],
): FlowStartMetadata {
  const input = (typeof args[0] === 'object' && args[0] !== null ? args[0] : {}) as Record<string, unknown>;
  const money =
    typeof input.amount === 'number' && typeof input.currency === 'string' && /^[A-Z]{3}$/.test(input.currency)
      ? { amount: input.amount, currency: input.currency }
      : {};
  const m = flowStartMetadata(workflowType, money);
  return {
    staticSummary: `${m.staticSummary} · ${workflowId}`,
    staticDetails: `${m.staticDetails}\n- workflow id: \`${workflowId}\` (started by its parent flow)`,
  };
}

// --- activities ---

/** Each registered activity's summary in the Web UI (test/observability/ui-metadata.test.ts checks every one is here). */
export const ACTIVITY_SUMMARIES: Record<string, string> = {
  lookupTransaction: 'verify',
  chargeCard: 'charge card (B1)',
  authorizeCard: 'send PIN or OTP (B2)',
  chargeBank: 'debit bank account (B3)',
  validateBank: 'validate bank payment (B4)',
  initiateUssd: 'initiate USSD payment (B5)',
  initiateCheckout: 'initiate checkout (A1)',
  chargeToken: 'charge card token (A4)',
  cancelToken: 'cancel card token (A5)',
  cancelTokenAnswered: 'cancel card token (A5), with its answer',
  createMandate: 'create mandate (D1)',
  validateMandateOtp: 'send mandate OTP (D2)',
  debitMandate: 'debit mandate (D3)',
  cancelMandate: 'cancel mandate (D4)',
  getMandate: 'read mandate (D5)',
  findMandateByRef: 'find mandate by reference (D5)',
  resendMandateOtp: 'resend mandate OTP (D6)',
  requestScheduledMandateDebit: 'request scheduled mandate debit',
  posRemoteCreateRequest: 'create remote request (E1)',
  posRemotePollRequest: 'poll remote request (E2)',
  posRemoteRequeryOnce: 'requery remote request (E2)',
  posRemoteFindRequest: 'find remote request',
  posRemoteLookupRecord: 'look up remote request record (A6)',
  posTerminalLockAcquire: 'queue at the terminal lock',
  posTerminalInitiateTransaction: 'initiate terminal transaction (F3)',
  posTerminalRequeryTransaction: 'requery terminal transaction (F4)',
  posDiscardSealedCard: 'discard sealed card read',
  posRefundReserve: 'reserve refund at the ledger',
  vendListProviders: 'list electricity providers (H1)',
  vendLookupMeter: 'look up meter (H2)',
  vendLookupListedMeter: 'look up listed meter (H2)',
  vendPurchase: 'purchase electricity (H3)',
  vendFindByReference: 'find vend by reference (H4)',
  smsSendBatch: 'send SMS batch (G1)',
  smsCreateCampaign: 'create SMS campaign (G2)',
  smsFindCampaign: 'find SMS campaign (G3)',
  smsListCampaignIdsByName: 'list SMS campaigns by name (G3)',
  recordVirtualAccountCredit: 'record virtual-account credit',
  confirmVirtualAccountCredit: 'confirm virtual-account credit (C3)',
  readVirtualAccountCreditFreeze: 'read credit freeze',
  handOverVirtualAccountCredit: 'hand over virtual-account credit',
  isVirtualAccountCreditRecorded: 'check credit record',
  readWebhookErrorLog: 'read webhook error log (C10)',
  deleteWebhookErrorLogEntry: 'delete error-log entry (C11)',
  reconcileWindow: 'reconcile a window (A6)',
  emitMerchantEvent: 'start merchant event delivery',
  deliverMerchantEvent: 'deliver merchant event',
};

/** An activity's summary; authorizeCard says which of PIN or OTP it sends (its second argument, never the value). */
export function activitySummary(activityType: string, args: readonly unknown[]): string | undefined {
  if (activityType === 'authorizeCard' && (args[1] === 'pin' || args[1] === 'otp'))
    return `send ${args[1].toUpperCase()} (B2)`;
  return Object.hasOwn(ACTIVITY_SUMMARIES, activityType) ? ACTIVITY_SUMMARIES[activityType] : undefined;
}

// --- current details ---

/** A status in words; a status not listed is shown as it is, underscores as spaces. */
const STATUS_WORDS: Record<string, string> = {
  validating: 'validating the input',
  initiating: 'sending the first request',
  charging: 'charging',
  awaiting_card: 'waiting for the card again',
  awaiting_pin: 'waiting for the PIN',
  awaiting_otp: 'waiting for the OTP',
  awaiting_3ds: 'waiting for the payer at 3-D Secure',
  awaiting_code: 'waiting for the payer to dial the USSD code',
  awaiting_payment: 'waiting for the payer',
  awaiting_first_payment: 'waiting for the first payment',
  awaiting_final: 'waiting for the final answer',
  confirming: 'confirming with verify',
  pending: 'pending at the service',
  outcome_unknown: 'parked: outcome unknown',
  create_outcome_unknown: 'parked: outcome of the create unknown',
  poll_error: 'parked: polling failed',
};

/** Statuses that end a flow: said with "at" (when it ended), not "since". */
const ENDED_WORDS: Record<string, string> = {
  success: 'ended: succeeded',
  failed: 'ended: failed',
  expired: 'ended: expired',
  cancelled: 'ended: cancelled',
  unknown: 'ended: outcome unknown',
  completed: 'ended: completed',
  vended: 'ended: vended',
  declined: 'ended: declined',
  rejected: 'ended: rejected',
};

/** "10:02" in UTC from epoch milliseconds (workflow time). */
export function clockTime(epochMs: number): string {
  const d = new Date(epochMs);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`;
}

/**
 * A flow's current details: "waiting for the OTP since 10:02 UTC", and for a flow waiting on a timer
 * the time it wakes ("parked: outcome unknown since 10:02 UTC; its timer fires at 10:07 UTC"), or
 * the time it ended ("ended: succeeded at 10:03 UTC").
 */
export function currentDetailsFor(status: string, sinceMs: number, wakeAtMs?: number): string {
  if (Object.hasOwn(ENDED_WORDS, status)) return `${ENDED_WORDS[status]} at ${clockTime(sinceMs)}`;
  const words = Object.hasOwn(STATUS_WORDS, status) ? STATUS_WORDS[status] : status.replace(/_/g, ' ');
  const wake = wakeAtMs !== undefined && wakeAtMs > sinceMs ? `; its timer fires at ${clockTime(wakeAtMs)}` : '';
  return `${words} since ${clockTime(sinceMs)}${wake}`;
}

// Direct-debit mandate: create (D1), wait for the customer's OTP (Update; D2, D6 on an expired
// session), then debit — on the FIXED schedule with durable timers, or on request for VARIABLE
// (Update with a validator, idempotent by the caller's key) — until end_date, a spent balance, or
// cancellation (D4). See docs/flows-mandates.md.
//
// Money safety:
//  - D1 and every D3 go through the one send-once rule (./steps/send-once.ts). D1 is requeried by D5
//    merchant_ref; a debit by verify on its own transaction_reference (GET /transaction/verify).
//  - A requested debit's reference is derived from the caller's idempotency key
//    (`${mandateRef}-K<digest>`): the same key twice answers the same debit, never a second one.
//    Scheduled debits keep `${mandateRef}-D${sequence}`.
//  - D3's answer is read by its `data.status`: pending is requeried (bounded backoff) and then
//    parked as outcome_unknown; failed is failed.
//  - An outcome_unknown debit stays visible (PaymentStatus=outcome_unknown), is requeried in the
//    background for `unresolvedRequeryForMs`, can be resolved by an operator (resolveDebit), and
//    does not block later debits: its amount is only held back from `available`. The flow does
//    not end while a debit is unresolved.
//  - A Temporal cancel of the workflow runs a non-cancellable cleanup: the in-flight debit
//    settles, unresolved debits are requeried, the mandate is cancelled at the service (D4).
//  - D1 and D3 heartbeat while their call is open (10 s heartbeat timeout).
// continue-as-new keeps long mandates' history bounded.
// The BVN and the OTP never reach the workflow: the starter seals them into the claim-check
// store; the input carries `customer.bvnHandle` and the OTP Update a handle. D1 and D2 redeem
// them. A BVN whose record expired before D1 was sent ends the flow as failed (nothing was sent:
// start it again with the BVN); an expired OTP fails its Update (send it again) and the flow waits on.
//
// Layout, top to bottom: `mandateWorkflow` (the whole story in a few lines), then `MandateFlow`:
// its state, its handlers (`listen`), the main steps (`run`: create, approve, debit until the
// end), the debit steps, cancellation, and the bookkeeping the steps share.
import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  createMandateActivities,
  CreatedMandate,
  MandateDebitAnswer,
  MandateSnapshot,
} from '../activities/mandate';
import type { PaymentCommonActivities } from '../activities/payment-common';
import {
  DEBIT_SAFETY_DEFAULTS,
  DEFAULT_DEBITS_PER_RUN,
  FINAL_MANDATE_STATUSES,
  IDEMPOTENCY_KEY_RULE,
  MANDATE_DEBITS_KEPT,
  MANDATE_KEYS_KEPT,
  MINIMUM_DEBIT_KOBO,
  OBSERVE_READS_DEFAULT_MS,
  cancelMandateSignal,
  cancelMandateUpdate,
  dateToMs,
  debitKeyReference,
  debitMandateUpdate,
  debitReference,
  isUnresolvedDebit,
  mandateInputProblems,
  mandateDebitsQuery,
  mandateStateQuery,
  observedDebitReference,
  resendMandateOtpUpdate,
  resolveDebitUpdate,
  scheduledDebitAt,
  sealedBvnProblems,
  startOfDayMs,
  submitMandateOtpUpdate,
  type DebitRequest,
  type DebitSafetySettings,
  type FixedMandateSettings,
  type MandateCarry,
  type MandateDebit,
  type MandateInput,
  type MandateState,
  type ResolveDebitRequest,
} from '../shared/mandate';
import type { TransactionLookup } from '../shared/payment-common';
import type { MerchantEventType } from '../shared/merchant-event';
import { isClaimHandle, SECRET_UNAVAILABLE } from '../shared/claim-check';
import { paymentSearchAttributes } from '../shared/search-attributes';
import {
  SEND_ONCE_DEFAULTS,
  sendOnce,
  settle as settlePresence,
  type Presence,
  type SendOnceResult,
} from './steps/send-once';
import { FailureTypes, failureMessage, failureOf } from '../shared/failures';
import { moneySend, READ } from './steps/activity-options';
import { MerchantEvents, type EventTypes, type OutcomeFields } from './steps/merchant-events';

type Activities = ReturnType<typeof createMandateActivities>;

/** Reads and idempotent calls (D4, D5, D6): retried. */
const reads = proxyActivities<Activities>(READ);
/** D2: one attempt (its sealed OTP is redeemed once); the workflow decides what an unclear failure means. D2 does not heartbeat. */
const once = proxyActivities<Activities>({ ...READ, retry: { maximumAttempts: 1 } });
/** D1, D3 (money-moving): one attempt, heartbeating while the call is open, so a killed worker is noticed in seconds. */
const money = proxyActivities<Activities>(moneySend());
/** Verify by the debit's reference (the debit's requery). */
const verify = proxyActivities<PaymentCommonActivities>(READ);

const DAY_MS = 24 * 3600 * 1000;
const FAILURES_KEPT = 50;
const MAX_MANUAL_OTP_RESENDS = 5;
/** A D1 failure that proves nothing either way (a lost answer): anything else refused the first send. */
const UNCLEAR: readonly string[] = [FailureTypes.OutcomeUnknown, FailureTypes.Transient];
/** Consecutive documented not-found answers that prove an unresolved debit never reached the service. */
const ABSENT_READS = SEND_ONCE_DEFAULTS.absentReads;

/**
 * Patch (docs/operations.md): a FIXED mandate observes the debits the service makes on its own
 * schedule (D5) instead of sending D3 from its timers; executions that passed that point before
 * keep sending until their next continue-as-new.
 */
const FIXED_OBSERVED_PATCH = 'mandate-fixed-observed';

/** The mandate's own outcomes → its merchant event (docs/events.md); completed and the waits emit nothing. */
const MANDATE_EVENT_TYPES: EventTypes = {
  approved: 'mandate.approved',
  failed: 'mandate.rejected',
  expired: 'mandate.expired',
  cancelled: 'mandate.cancelled',
};
/** One debit's outcome → its event (part = the debit's reference). */
const DEBIT_EVENT_TYPES: EventTypes = {
  success: 'mandate.debit.succeeded',
  failed: 'mandate.debit.failed',
  outcome_unknown: 'mandate.debit.needs_attention',
};

type FoundDebit = Extract<TransactionLookup, { found: true }>;

/** What verify's record of a debit's reference proves. */
function fromVerify(
  record: FoundDebit,
  amount: number,
): { status: 'success' | 'failed' | 'pending' | 'outcome_unknown'; error?: string } {
  switch (record.status) {
    case 'Success':
      return record.amount !== undefined && record.amount !== amount
        ? { status: 'outcome_unknown', error: `verify shows ${record.amount} kobo under this reference, not ${amount}` }
        : { status: 'success' };
    case 'Failed':
    case 'Abandoned':
      return { status: 'failed', error: `verified as ${record.status}${record.reason ? `: ${record.reason}` : ''}` };
    default:
      return { status: 'pending' };
  }
}

export async function mandateWorkflow(input: MandateInput, carry?: MandateCarry): Promise<MandateState> {
  const flow = new MandateFlow(input, carry);
  flow.listen();
  flow.publish();
  void CancellationScope.nonCancellable(() => flow.watchUnresolved());
  try {
    const final = await flow.run();
    // The flow does not end while a debit may have moved money unrecorded.
    await condition(() => flow.unresolved().length === 0 && allHandlersFinished());
    await flow.eventsHandedOver();
    return final;
  } catch (err) {
    if (!isCancellation(err)) throw err;
    return flow.cleanUpAfterCancel();
  }
}

/** One run of a mandate (a continue-as-new starts the next from `carry`). */
class MandateFlow {
  // --- state ---

  /** What the query answers, and what continue-as-new carries. */
  readonly state: MandateState;
  private sequence: number;
  private sessionToken: string | undefined;
  private sessionResends = 0;
  private manualResends = 0;
  private cancelRequested = false;
  private debitsThisRun = 0;
  /** One service call at a time: a debit's balance check must see the previous debit's result. */
  private busy = false;
  /** end_date is inclusive. */
  private readonly endAt: number;
  private readonly settings: DebitSafetySettings;
  /** reference → debit, the last MANDATE_KEYS_KEPT (unresolved ones are never dropped). */
  private readonly debits = new Map<string, MandateDebit>();
  /** idempotency key → reference. */
  private readonly keys: Map<string, string>;
  /** References being sent or settled right now: a duplicate request waits for them. */
  private readonly inFlight = new Set<string>();
  /** The PaymentStatus last upserted. */
  private searchStatus: string | undefined;
  /** Where the mandate's outcomes are told (nothing without the input's `notify`). */
  private readonly events: MerchantEvents;
  /** The events queued so far, handed to their deliveries one after another. */
  private emissions: Promise<void> = Promise.resolve();
  /** FIXED: whether this run observes the service's debits (decided once, see observesFixed). */
  private observing: boolean | undefined;

  constructor(
    private readonly input: MandateInput,
    private readonly carry: MandateCarry | undefined,
  ) {
    this.state = carry?.state ?? {
      status: 'creating',
      mandateRef: input.mandateRef,
      debitType: input.debitType,
      amount: input.amount,
      balance: input.amount,
      totalDebited: 0,
      recentDebits: [],
      debitCount: 0,
      unresolvedDebits: [],
      failures: [],
      scheduleIndex: 0,
      skippedBeforeApproval: 0,
    };
    this.sequence = carry?.sequence ?? 0;
    this.endAt = dateToMs(input.endDate) + DAY_MS;
    this.settings = { ...DEBIT_SAFETY_DEFAULTS, ...definedOnly(input) };
    this.keys = new Map<string, string>(Object.entries(carry?.keys ?? {}));
    for (const d of [...(carry?.debits ?? this.state.recentDebits), ...this.state.unresolvedDebits])
      this.debits.set(d.reference, d);
    this.searchStatus = carry ? this.state.status : 'creating';
    this.events = new MerchantEvents(input.notify, 'mandate', input.mandateRef, carry?.eventSequence);
  }

  // --- handlers ---

  listen(): void {
    setHandler(mandateStateQuery, () => this.state);
    setHandler(mandateDebitsQuery, (references) => ({
      debits: references
        ? references.flatMap((r) => this.debits.get(r) ?? [])
        : [...this.debits.values()].sort((a, b) => a.sequence - b.sequence),
      lastSequence: this.sequence,
    }));
    setHandler(cancelMandateSignal, () => {
      this.cancelRequested = true;
    });
    setHandler(cancelMandateUpdate, () => this.cancelOnUpdate(), { validator: () => this.checkCancel() });
    // A continued run is past approval: its OTP handlers only refuse (see openOtpHandlers).
    if (this.carry) this.openOtpHandlers();
    setHandler(debitMandateUpdate, (req) => this.debitOnRequest(req), {
      validator: (req) => this.checkDebitRequest(req),
    });
    setHandler(resolveDebitUpdate, (req) => this.resolveDebit(req), {
      validator: (req) => this.checkResolve(req),
    });
  }

  /** cancelMandate (Update): waits for D1 in flight, then cancels (D4) under the lock. */
  private async cancelOnUpdate(): Promise<MandateState> {
    await condition(() => this.state.status !== 'creating'); // D1 in flight: cancel what it creates
    if (this.state.status === 'cancelled') return this.state;
    if (FINAL_MANDATE_STATUSES.includes(this.state.status)) {
      throw ApplicationFailure.create({
        type: 'MandateEnded',
        message: `the mandate already ended: ${this.state.status}`,
        nonRetryable: true,
      });
    }
    await this.exclusive(() => this.cancel());
    return this.state;
  }

  /**
   * The OTP Updates are registered only once the flow waits for the OTP, after the status upsert and
   * the OTP timer: an OTP that comes earlier waits in the SDK's buffer until then, or is refused at
   * the end of its activation ("No registered handler"; the starter says "not yet"). So its
   * acceptance is recorded after those commands however the SDK hands the jobs over: a history the
   * SDK's query fault made (docs/sdk-update-ordering.md: the OTP handled in an activation after the
   * creation's result, live; before it on replay) replays, and any other history records the same
   * commands as before (an OTP is only ever accepted while the flow waits for it).
   */
  private openOtpHandlers(): void {
    setHandler(submitMandateOtpUpdate, async (otp) => this.exclusive(() => this.submitOtp(otp)), {
      validator: (otp) => this.checkOtp(otp),
    });
    setHandler(resendMandateOtpUpdate, async () => this.exclusive(() => this.resendOtp()), {
      validator: () => this.checkResend(),
    });
  }

  private checkCancel(): void {
    if (this.state.status !== 'cancelled' && FINAL_MANDATE_STATUSES.includes(this.state.status))
      throw new Error(`the mandate already ended: ${this.state.status}`);
  }

  /** submitMandateOtp (Update, under the lock): D2; a session expiry sends D6 (bounded), then ends the mandate expired. */
  private async submitOtp(otp: string): Promise<MandateState> {
    const { state, input } = this;
    if (state.status !== 'awaiting_otp')
      throw ApplicationFailure.create({
        type: 'NotAwaitingOtp',
        message: `no OTP is expected: the mandate is ${state.status}`,
        nonRetryable: true,
      });
    try {
      const r = await once.validateMandateOtp(this.sessionToken!, otp);
      state.mandateReferenceNumber = r.mandateReferenceNumber;
    } catch (err) {
      const failure = failureOf(err);
      if (failure?.type === SECRET_UNAVAILABLE) {
        // The sealed OTP expired (or was used) before D2 was sent: nothing was sent, the flow keeps waiting.
        throw ApplicationFailure.create({
          type: SECRET_UNAVAILABLE,
          message: 'the OTP expired before it was sent: send it again',
          nonRetryable: true,
        });
      }
      if (failure?.type === 'SessionExpired') {
        if (this.sessionResends < (input.maxSessionResends ?? 2)) {
          this.sessionResends += 1;
          let resent = false;
          try {
            await reads.resendMandateOtp(this.sessionToken!);
            resent = true;
          } catch (resendErr) {
            this.fail(`resend OTP: ${failureMessage(resendErr)}`);
          }
          if (resent)
            throw ApplicationFailure.create({
              type: 'SessionExpired',
              message: 'The OTP session expired; a new OTP was sent to the customer.',
              nonRetryable: true,
            });
        }
        this.setStatus(
          'expired',
          this.sessionResends >= (input.maxSessionResends ?? 2)
            ? 'the OTP session expired too often'
            : 'the OTP session expired and no new OTP could be sent',
        );
        throw ApplicationFailure.create({
          type: 'SessionExpired',
          message: 'The OTP session expired; the mandate has expired.',
          nonRetryable: true,
        });
      }
      throw ApplicationFailure.create({
        type: failure?.type ?? 'OtpRejected',
        message: failure?.message ?? 'The OTP was not accepted.',
        nonRetryable: true,
      });
    }
    this.setStatus('approved');
    return state;
  }

  private checkOtp(otp: string): void {
    if (this.state.status !== 'awaiting_otp') throw new Error(`no OTP is expected in state ${this.state.status}`);
    // The starter checked the format (4 to 8 digits) and sealed it: only a handle enters history.
    if (!isClaimHandle(otp))
      throw new Error('otp must be sealed: pass the claim-check handle the starter made (submitMandateOtp)');
  }

  /** resendMandateOtp (Update, under the lock): D6 on request. */
  private async resendOtp(): Promise<MandateState> {
    if (this.state.status !== 'awaiting_otp')
      throw ApplicationFailure.create({
        type: 'NotAwaitingOtp',
        message: `no OTP is expected: the mandate is ${this.state.status}`,
        nonRetryable: true,
      });
    this.manualResends += 1;
    await reads.resendMandateOtp(this.sessionToken!);
    return this.state;
  }

  private checkResend(): void {
    if (this.state.status !== 'awaiting_otp') throw new Error(`no OTP is expected in state ${this.state.status}`);
    if (this.manualResends >= MAX_MANUAL_OTP_RESENDS)
      throw new Error(`at most ${MAX_MANUAL_OTP_RESENDS} OTP resends on request`);
  }

  /** debitMandate (Update, VARIABLE): one debit under the lock; the same idempotency key answers the same debit. */
  private async debitOnRequest(req: DebitRequest): Promise<MandateDebit> {
    const key = req.idempotencyKey;
    const known = key !== undefined ? this.keys.get(key) : undefined;
    if (known && this.debits.has(known)) return this.sameDebit(known);
    const entry = await this.exclusive(() => this.debitUnderLock(req, key));
    if (entry === undefined) return this.sameDebit(this.keys.get(key!)!);
    return this.settleIfPending(entry);
  }

  /** The requested debit, once it holds the lock; undefined when a duplicate got the lock first. */
  private async debitUnderLock(req: DebitRequest, key: string | undefined): Promise<MandateDebit | undefined> {
    const { state } = this;
    const again = key !== undefined ? this.keys.get(key) : undefined;
    if (again && this.debits.has(again)) return undefined; // a duplicate got the lock first
    // Re-checked here: a cancel or another debit may have run while this one waited.
    if (state.status !== 'approved')
      throw ApplicationFailure.create({
        type: 'NotApproved',
        message: `the mandate is ${state.status}, not approved`,
        nonRetryable: true,
      });
    if (req.amount > this.available()) {
      throw ApplicationFailure.create({
        type: 'OverBalance',
        message: `amount ${req.amount} exceeds the remaining balance ${this.available()}`,
        nonRetryable: true,
      });
    }
    return this.debit(req.amount, this.narrationFor(req.narration), 'requested', { key });
  }

  /** The same key again: the same debit, once it is no longer being sent or followed. */
  private async sameDebit(reference: string): Promise<MandateDebit> {
    await condition(() => !this.inFlight.has(reference));
    return this.debits.get(reference)!;
  }

  private checkDebitRequest(req: DebitRequest): void {
    const { state, input } = this;
    if (state.debitType !== 'variable') throw new Error('only a VARIABLE mandate is debited on request');
    if (req?.idempotencyKey !== undefined) {
      if (typeof req.idempotencyKey !== 'string' || !IDEMPOTENCY_KEY_RULE.pattern.test(req.idempotencyKey))
        throw new Error(IDEMPOTENCY_KEY_RULE.message);
      const knownRef = this.keys.get(req.idempotencyKey);
      const seen = knownRef ? this.debits.get(knownRef) : undefined;
      if (seen) {
        // The same request again: answered with the same debit, whatever happened since.
        if (seen.amount !== req.amount)
          throw new Error(
            `idempotencyKey ${req.idempotencyKey} was used for a debit of ${seen.amount} kobo, not ${String(req.amount)}`,
          );
        return;
      }
    }
    if (state.status !== 'approved') throw new Error(`the mandate is ${state.status}, not approved`);
    if (Date.now() >= this.endAt) throw new Error(`the mandate ended on ${input.endDate}`);
    if (!Number.isSafeInteger(req?.amount)) throw new Error('amount must be an integer in kobo');
    if (req.amount < MINIMUM_DEBIT_KOBO) throw new Error(`amount must be at least ${MINIMUM_DEBIT_KOBO} kobo (N200)`);
    if (req.amount > this.available())
      throw new Error(`amount ${req.amount} exceeds the remaining balance ${this.available()}`);
    if (
      req.narration !== undefined &&
      (typeof req.narration !== 'string' || req.narration.length === 0 || req.narration.length > 100)
    ) {
      throw new Error('narration must be 1-100 characters');
    }
  }

  /** resolveDebit (Update, operator): settles an unresolved debit as debited or not. */
  private async resolveDebit(req: ResolveDebitRequest): Promise<MandateDebit> {
    const d = this.findDebit(req.debitKey)!;
    const resolution = {
      outcome: req.outcome,
      reason: req.reason,
      operator: req.operator,
      at: new Date().toISOString(),
    };
    d.resolution = resolution;
    log.info('debit resolved by an operator', {
      reference: d.reference,
      outcome: req.outcome,
      operator: req.operator,
    });
    this.conclude(
      d,
      req.outcome === 'debited' ? 'success' : 'failed',
      'operator',
      `resolved by ${req.operator}: ${req.reason}`,
      true,
    );
    return d;
  }

  private checkResolve(req: ResolveDebitRequest): void {
    if (typeof req?.debitKey !== 'string' || req.debitKey === '')
      throw new Error('debitKey is required (the idempotency key or the reference)');
    if (req.outcome !== 'debited' && req.outcome !== 'not_debited')
      throw new Error("outcome must be 'debited' or 'not_debited'");
    if (typeof req.reason !== 'string' || req.reason.trim().length === 0 || req.reason.length > 500)
      throw new Error('reason must be 1-500 characters');
    if (typeof req.operator !== 'string' || req.operator.trim().length === 0 || req.operator.length > 100)
      throw new Error('operator must be 1-100 characters');
    const d = this.findDebit(req.debitKey);
    if (!d) throw new Error(`no debit ${req.debitKey} in this mandate`);
    if (!isUnresolvedDebit(d)) throw new Error(`debit ${d.reference} is already ${d.status}`);
    if (this.inFlight.has(d.reference))
      throw new Error(`debit ${d.reference} is being sent or requeried right now: try again shortly`);
  }

  // --- the main steps ---

  /** Creation and approval (first run only), then debiting until the end. */
  async run(): Promise<MandateState> {
    if (!this.carry && !((await this.start()) && (await this.approval()))) return this.finish();
    await this.debitUntilEnd();
    return this.end();
  }

  /** Creation (D1) of a valid input; false when the flow ends here. */
  private async start(): Promise<boolean> {
    const { input } = this;
    upsertSearchAttributes(
      paymentSearchAttributes({
        flow: 'mandate',
        reference: input.mandateRef,
        amount: input.amount,
        currency: 'NGN',
        status: 'creating',
      }),
    );
    this.searchStatus = 'creating';
    const problems = [...mandateInputProblems(input), ...sealedBvnProblems(input)];
    if (problems.length > 0) {
      this.setStatus('failed', `invalid input: ${problems.join('; ')}`);
      return false;
    }
    return this.create();
  }

  /** Approval: the OTP arrives as an Update (submitOtp), until the timeout; true once approved. */
  private async approval(): Promise<boolean> {
    const { state, input } = this;
    this.setStatus('awaiting_otp');
    const otpDeadline = Date.now() + (input.otpTimeoutMs ?? 15 * 60 * 1000);
    let otpHandlersOpen = false;
    while (state.status === 'awaiting_otp') {
      const remaining = otpDeadline - Date.now();
      if (remaining <= 0) {
        await this.exclusive(async () => {
          if (state.status === 'awaiting_otp') this.setStatus('expired', 'no OTP before the timeout');
        });
        break;
      }
      const answered = condition(() => state.status !== 'awaiting_otp' || this.cancelRequested, remaining);
      if (!otpHandlersOpen) this.openOtpHandlers(); // after the timer's command: see openOtpHandlers
      otpHandlersOpen = true;
      await answered;
      if (this.cancelRequested && state.status === 'awaiting_otp') await this.cancelOnSignal();
    }
    this.sessionToken = undefined;
    if (state.status === 'expired') await this.releaseAtService('expiry');
    if (state.status !== 'approved') return false;
    this.skipDatesBeforeApproval();
    return true;
  }

  /** Debiting until the end: FIXED dates (scheduledDate), or VARIABLE Updates (debitOnRequest). */
  private async debitUntilEnd(): Promise<void> {
    const { state, input } = this;
    const runLimit = input.debitsPerRun ?? DEFAULT_DEBITS_PER_RUN;
    let scheduleDone = false;
    while (!this.finished() && !scheduleDone) {
      if (this.cancelRequested) {
        await this.cancelOnSignal();
        continue;
      }
      if (this.debitsThisRun >= runLimit || workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        if (this.finished() || this.cancelRequested) continue;
        log.info('continuing as new to keep history bounded', { debitCount: state.debitCount });
        await this.eventsHandedOver();
        await continueAsNew<typeof mandateWorkflow>(input, this.carryOver());
      }
      if (input.fixed) {
        scheduleDone = this.observesFixed()
          ? await this.observedDate(input.fixed)
          : await this.scheduledDate(input.fixed);
      } else {
        // VARIABLE: debits arrive as Updates; wake for cancellation, the end date, or continue-as-new.
        await condition(
          () =>
            this.cancelRequested ||
            this.finished() ||
            this.debitsThisRun >= runLimit ||
            workflowInfo().continueAsNewSuggested,
          Math.max(this.endAt - Date.now(), 1),
        );
      }
    }
  }

  /** The end: no handler left running; an approved mandate completes, saying why. */
  private async end(): Promise<MandateState> {
    const { state } = this;
    state.nextDebitAt = undefined;
    await condition(allHandlersFinished);
    if (state.status === 'approved') {
      this.setStatus(
        'completed',
        state.balance < MINIMUM_DEBIT_KOBO
          ? 'balance spent'
          : Date.now() >= this.endAt
            ? 'end date reached'
            : 'schedule finished',
      );
    }
    return state;
  }

  /** The flow ends: no handler is left running. */
  private async finish(): Promise<MandateState> {
    await condition(allHandlersFinished);
    return this.state;
  }

  /** Nothing more to debit: no longer approved, the balance spent, or past end_date. */
  private finished(): boolean {
    return this.state.status !== 'approved' || this.state.balance < MINIMUM_DEBIT_KOBO || Date.now() >= this.endAt;
  }

  /** What the next run starts from. */
  private carryOver(): MandateCarry {
    const { state, sequence } = this;
    return {
      state,
      sequence,
      debits: [...this.debits.values()],
      keys: Object.fromEntries(this.keys),
      ...(this.events.emitted > 0 ? { eventSequence: this.events.emitted } : {}),
    };
  }

  /** FIXED: dates before the approval day are not debited: the customer had not authorised them. */
  private skipDatesBeforeApproval(): void {
    if (!this.input.fixed) return;
    const today = startOfDayMs(Date.now());
    while (scheduledDebitAt(this.input.fixed, this.state.scheduleIndex) < today) {
      this.state.scheduleIndex += 1;
      this.state.skippedBeforeApproval += 1;
    }
  }

  /**
   * D1 through send-once, requeried by D5 merchant_ref (our mandateRef). A mandate found after a
   * lost answer cannot be approved (its session token went with the answer): it is cancelled at
   * the service and the flow fails, asking for a new mandate.
   */
  private async create(): Promise<boolean> {
    const { state, input } = this;
    const result: SendOnceResult<CreatedMandate, MandateSnapshot> = await sendOnce({
      send: () => money.createMandate(input),
      requery: async (): Promise<Presence<MandateSnapshot>> => {
        const found = await reads.findMandateByRef(input.mandateRef);
        return found ? { found: true, record: found } : { found: false };
      },
      // Anything but a lost answer is a refusal of the first send (an expired sealed BVN included: nothing was sent).
      isRefusal: (err) => {
        const type = failureOf(err)?.type;
        return type != null && !UNCLEAR.includes(type);
      },
      settleMs: this.settings.debitSettleMs,
    });
    switch (result.outcome) {
      case 'answered':
        state.mandateId = result.answer.mandateId;
        this.sessionToken = result.answer.sessionToken;
        return true;
      case 'refused':
        // The sealed BVN expired (e.g. no worker ran within its TTL) before D1 was sent: no
        // mandate exists at the service. Ending says so; a silent wait would block the customer.
        if (result.failure.type === SECRET_UNAVAILABLE) {
          this.setStatus(
            'failed',
            'the sealed BVN expired before the mandate was created (nothing was sent to the service): start the mandate again with the BVN',
          );
        } else this.setStatus('failed', result.failure.message);
        return false;
      case 'found':
        state.mandateId = result.record.mandateId;
        await this.releaseAtService('a lost D1 response');
        this.setStatus(
          'failed',
          'the creation response was lost; the mandate it created was cancelled at the service; start a new mandate',
        );
        return false;
      case 'never-received':
        this.setStatus(
          'failed',
          `D1 went unanswered ${result.sends} times and no mandate exists for ${input.mandateRef} (${result.lost})`,
        );
        return false;
      case 'unverified':
        this.setStatus(
          'failed',
          `D1 went unanswered and the lookup failed (${result.lost}); check merchant_ref ${input.mandateRef} before starting again`,
        );
        return false;
    }
  }

  /** One FIXED date: wait for it, debit (retrying a refusal a bounded number of times). Returns true when the schedule is over. */
  private async scheduledDate(fixed: FixedMandateSettings): Promise<boolean> {
    const { state, input } = this;
    const at = scheduledDebitAt(fixed, state.scheduleIndex);
    if (at >= this.endAt) return true;
    const scheduledFor = new Date(at).toISOString().slice(0, 10);
    state.nextDebitAt = new Date(at).toISOString();
    const wait = at - Date.now();
    if (wait > 0 && (await condition(() => this.cancelRequested || state.status !== 'approved', wait))) return false;
    if (this.cancelRequested || state.status !== 'approved') return false;
    state.scheduleIndex += 1;
    const retries = input.scheduledDebitRetries ?? 2;
    const delay = input.scheduledRetryDelayMs ?? DAY_MS;
    for (let attempt = 0; ; attempt++) {
      const sent = await this.exclusive(async (): Promise<MandateDebit | 'ended'> => {
        if (state.status !== 'approved') return 'ended';
        // Unresolved debits do not stop the schedule: their amounts are held back from what this date may take.
        const amount = Math.min(fixed.initialDebitAmount, this.available());
        if (amount < MINIMUM_DEBIT_KOBO) {
          if (this.heldBack() > 0)
            this.fail(
              `scheduled debit for ${scheduledFor} not sent: ${this.available()} kobo available while ${this.heldBack()} kobo of debits are unresolved`,
            );
          return 'ended';
        }
        return this.debit(amount, this.narrationFor(), 'scheduled', { scheduledFor });
      });
      if (sent === 'ended') return false;
      const outcome = (await this.settleIfPending(sent)).status;
      if (outcome !== 'failed' || attempt >= retries || state.status !== 'approved') return false;
      // A refusal moved no money: try again later with a new reference, never past the next date.
      const retryAt = Date.now() + delay;
      if (retryAt >= Math.min(scheduledDebitAt(fixed, state.scheduleIndex), this.endAt)) return false;
      state.nextDebitAt = new Date(retryAt).toISOString();
      if (await condition(() => this.cancelRequested || state.status !== 'approved', delay)) return false;
    }
  }

  /**
   * FIXED: whether this run observes the service's own debits (the default) rather than sending D3
   * from its timers (`fixedDebits: 'send'`, and executions that passed here before the patch).
   */
  private observesFixed(): boolean {
    if (this.input.fixedDebits === 'send') return false;
    this.observing ??= patched(FIXED_OBSERVED_PATCH);
    return this.observing;
  }

  /**
   * One FIXED date, observed: the service debits it on its own (D1 gave it the schedule), so no D3
   * is sent. D5 is read after the date (observeReadsMs) until its total_debited grows; the growth is
   * recorded as the date's debit. Reads stop before the next date, whose reads count any later
   * growth. Returns true when the schedule is over.
   */
  private async observedDate(fixed: FixedMandateSettings): Promise<boolean> {
    const { state } = this;
    const index = state.scheduleIndex;
    const at = scheduledDebitAt(fixed, index);
    if (at >= this.endAt) return true;
    const next = scheduledDebitAt(fixed, index + 1);
    const reads = this.input.observeReadsMs ?? OBSERVE_READS_DEFAULT_MS;
    const scheduledFor = new Date(at).toISOString().slice(0, 10);
    const expected = Math.min(fixed.initialDebitAmount, state.balance);
    let answered = 0;
    for (const [n, offset] of reads.entries()) {
      if (n > 0 && at + offset >= next) break;
      state.nextDebitAt = new Date(at + offset).toISOString();
      if (await this.stoppedBy(at + offset)) return false;
      const read = await this.exclusive(() => this.observeOnce(index, scheduledFor, expected));
      if (read === 'moved' || read === 'ended') {
        state.scheduleIndex = index + 1;
        return false;
      }
      if (read === 'still') answered += 1;
    }
    state.scheduleIndex = index + 1;
    this.debitsThisRun += 1;
    const reference = observedDebitReference(this.input.mandateRef, index);
    if (answered > 0) {
      const entry = this.observedEntry(index, expected, scheduledFor);
      this.conclude(
        entry,
        'failed',
        'observed',
        `the service's debit for ${scheduledFor} did not show in D5 by ${new Date().toISOString()} (${answered} reads): no money moved as far as the service shows`,
      );
    } else {
      const why = `D5 could not be read after ${scheduledFor}: whether the service debited it is not known; the next date's read counts any debit`;
      this.fail(`${reference}: ${why}`);
      this.tell('mandate.debit.needs_attention', { status: 'outcome_unknown', reason: why, part: reference });
    }
    return false;
  }

  /** Waits until `at` (workflow time); true when a cancel was asked or the mandate stopped being approved. */
  private async stoppedBy(at: number): Promise<boolean> {
    const stop = () => this.cancelRequested || this.state.status !== 'approved';
    const wait = at - Date.now();
    if (wait > 0) await condition(stop, wait);
    return stop();
  }

  /** One D5 read of an observed date (under the lock): the service's total grew (moved), the mandate ended there, it did not grow (still), or D5 failed (unread). */
  private async observeOnce(
    index: number,
    scheduledFor: string,
    expected: number,
  ): Promise<'moved' | 'ended' | 'still' | 'unread'> {
    const { state } = this;
    if (state.status !== 'approved') return 'ended';
    const seen = await this.readMandate();
    if (!seen) return 'unread';
    const grew = seen.totalDebited - state.totalDebited;
    if (grew > 0) {
      this.debitsThisRun += 1;
      const entry = this.observedEntry(index, grew, scheduledFor);
      if (grew !== expected)
        this.fail(
          `${entry.reference}: the service debited ${grew} kobo for ${scheduledFor}; the schedule says ${expected}`,
        );
      this.conclude(entry, 'success', 'observed');
    }
    if (seen.status === 'cancelled' || seen.status === 'rejected') {
      this.setStatus('cancelled', `${seen.status} at the service`);
      return 'ended';
    }
    return grew > 0 ? 'moved' : 'still';
  }

  /** The entry of an observed date's debit (its reference is ours: D5 does not show the service's). */
  private observedEntry(index: number, amount: number, scheduledFor: string): MandateDebit {
    this.sequence += 1;
    const reference = observedDebitReference(this.input.mandateRef, index);
    return {
      sequence: this.sequence,
      reference,
      key: reference,
      amount,
      status: 'pending',
      kind: 'observed',
      at: new Date().toISOString(),
      scheduledFor,
    };
  }

  // --- debits ---

  /** A new debit: sent under the lock (balance checks see the previous debit), followed outside it when pending. */
  private async debit(
    amount: number,
    narration: string,
    kind: MandateDebit['kind'],
    opts: { key?: string; scheduledFor?: string } = {},
  ): Promise<MandateDebit> {
    const { input } = this;
    this.sequence += 1;
    const sequence = this.sequence;
    const reference = opts.key
      ? debitKeyReference(input.mandateRef, opts.key)
      : debitReference(input.mandateRef, sequence);
    const entry: MandateDebit = {
      sequence,
      reference,
      key: opts.key ?? reference,
      amount,
      status: 'pending',
      kind,
      at: new Date().toISOString(),
      ...(opts.scheduledFor ? { scheduledFor: opts.scheduledFor } : {}),
    };
    if (opts.key) this.keys.set(opts.key, reference);
    this.state.debitCount += 1;
    this.debitsThisRun += 1;
    this.inFlight.add(reference); // stored once its send settled (a duplicate request waits for the lock meanwhile)
    try {
      await this.sendDebit(entry, narration);
    } finally {
      this.inFlight.delete(reference);
    }
    return entry;
  }

  /** D3 through send-once; the entry ends success, failed, pending (the service said so) or outcome_unknown. */
  private async sendDebit(entry: MandateDebit, narration: string): Promise<void> {
    const req = {
      mandateId: this.state.mandateId!,
      amount: entry.amount,
      reference: entry.reference,
      narration,
      customerEmail: this.input.customerEmail,
    };
    let lastFailure: string | undefined;
    const result: SendOnceResult<MandateDebitAnswer, FoundDebit> = await sendOnce({
      send: async () => {
        try {
          return await money.debitMandate(req);
        } catch (err) {
          lastFailure = failureOf(err)?.type ?? undefined;
          throw err;
        }
      },
      requery: this.requeryDebit(entry.reference),
      settleMs: this.settings.debitSettleMs,
    });
    switch (result.outcome) {
      case 'answered':
        entry.serviceStatus = result.answer.serviceStatus;
        if (result.answer.status === 'success')
          this.conclude(entry, 'success', result.sends > 1 ? 'resend' : 'response');
        else if (result.answer.status === 'failed')
          this.conclude(entry, 'failed', 'response', `D3 answered status ${result.answer.serviceStatus}`);
        else {
          entry.status = 'pending';
          entry.error = `D3 answered status ${result.answer.serviceStatus || '(none)'}`;
          this.put(entry);
        }
        return;
      case 'refused':
        this.conclude(entry, 'failed', 'response', result.failure.message);
        if (/not ready/i.test(result.failure.message)) await this.endIfEndedAtService();
        return;
      case 'found':
        entry.error = result.lost;
        if (!this.applyRecord(entry, result.record, false)) {
          entry.status = 'pending';
          this.put(entry);
        }
        return;
      case 'never-received':
        // A "duplicate reference" refusal says the service holds the reference although verify
        // does not show it: that is no proof of absence.
        if (lastFailure === 'DuplicateReference')
          this.park(entry, `${result.lost}; the service knows the reference but verify does not show it`);
        else
          this.conclude(
            entry,
            'failed',
            'requery',
            `never reached the service (verify does not know ${entry.reference} after ${result.sends} sends): ${result.lost}`,
          );
        return;
      case 'unverified':
        this.park(entry, `${result.lost}; verify could not be asked`);
        return;
    }
  }

  /** A sent debit still pending: followed outside the lock until final or parked. */
  private async settleIfPending(entry: MandateDebit): Promise<MandateDebit> {
    if (entry.status !== 'pending') return entry;
    this.inFlight.add(entry.reference);
    try {
      await this.followPending(entry);
    } finally {
      this.inFlight.delete(entry.reference);
    }
    return entry;
  }

  /** A pending debit: requeried on a bounded backoff until final, then parked as outcome_unknown. */
  private async followPending(entry: MandateDebit): Promise<void> {
    const { settings } = this;
    for (const waitMs of settings.pendingRequeryMs) {
      if (entry.status !== 'pending') return; // an operator resolved it meanwhile
      const presence = await settlePresence({
        requery: this.requeryDebit(entry.reference),
        settleMs: waitMs,
        absentReads: 1,
      });
      if (entry.status !== 'pending') return;
      if (presence?.found && this.applyRecord(entry, presence.record, true)) return;
    }
    if (entry.status === 'pending')
      this.park(
        entry,
        `${entry.error ?? 'pending'}; still not final after ${settings.pendingRequeryMs.length} requeries`,
      );
  }

  /** Background: requeries outcome_unknown debits on a doubling backoff until found final or the period ends. */
  async watchUnresolved(): Promise<void> {
    const { settings } = this;
    for (;;) {
      const next = this.nextRequeryAt();
      if (next === undefined) {
        await condition(() => this.nextRequeryAt() !== undefined);
        continue;
      }
      const wait = next - Date.now();
      if (wait > 0) {
        await condition(() => (this.nextRequeryAt() ?? Infinity) < next, wait);
        continue;
      }
      const due = [...this.debits.values()].filter(
        (d) =>
          d.status === 'outcome_unknown' &&
          d.nextRequeryAt &&
          Date.parse(d.nextRequeryAt) <= Date.now() &&
          !this.inFlight.has(d.reference),
      );
      for (const d of due) {
        let presence: Presence<FoundDebit> | undefined;
        try {
          presence = await this.requeryDebit(d.reference)();
        } catch (err) {
          log.warn('requery of an unresolved debit failed', { reference: d.reference, error: failureMessage(err) });
        }
        if (d.status !== 'outcome_unknown') continue; // resolved meanwhile
        if (presence?.found && this.applyRecord(d, presence.record, true)) continue;
        // The documented not-found, read ABSENT_READS times in a row over minutes: the request never reached the service (send-once's proof).
        d.absentReads = presence && !presence.found ? (d.absentReads ?? 0) + 1 : 0;
        if (d.absentReads >= ABSENT_READS) {
          this.conclude(
            d,
            'failed',
            'requery',
            `${d.error ?? 'no answer'}; verify does not know ${d.reference} (${d.absentReads} reads): it never reached the service`,
            true,
          );
          continue;
        }
        d.requeries = (d.requeries ?? 0) + 1;
        const backoff = Math.min(settings.unresolvedRequeryFirstMs * 2 ** d.requeries, settings.unresolvedRequeryMaxMs);
        const until = Date.parse(d.requeryUntil ?? new Date(Date.now()).toISOString());
        if (Date.now() + backoff > until) {
          d.nextRequeryAt = undefined;
          this.fail(
            `${d.reference}: still unknown after requerying until ${d.requeryUntil}; an operator must resolve it (resolveDebit)`,
          );
        } else d.nextRequeryAt = new Date(Date.now() + backoff).toISOString();
        this.put(d);
      }
    }
  }

  /** The next background requery of outcome_unknown debits (ms), or undefined. */
  private nextRequeryAt(): number | undefined {
    let next: number | undefined;
    for (const d of this.debits.values()) {
      if (d.status !== 'outcome_unknown' || !d.nextRequeryAt || this.inFlight.has(d.reference)) continue;
      const at = Date.parse(d.nextRequeryAt);
      if (next === undefined || at < next) next = at;
    }
    return next;
  }

  /** Verify by the debit's reference, as send-once's requery: throws when the service could not be asked. */
  private requeryDebit(reference: string): () => Promise<Presence<FoundDebit>> {
    return async (): Promise<Presence<FoundDebit>> => {
      const found = await verify.lookupTransaction(reference);
      return found.found ? { found: true, record: found } : { found: false };
    };
  }

  // --- cancellation ---

  /** D4 (under the lock): the mandate is cancelled at the service, then here. */
  private async cancel(): Promise<void> {
    const { state } = this;
    if (state.status === 'cancelled') return; // idempotent
    let alreadyCancelled = false;
    if (state.mandateId) {
      const res = await reads.cancelMandate(state.mandateId);
      if (!res.cancelled) {
        this.fail(`cancel: ${res.reason ?? 'refused'}`);
        this.tell('mandate.needs_attention', {
          status: state.status,
          reason: `cancel requested, but the service did not cancel the mandate: ${res.reason ?? 'no reason given'}`,
        });
        throw ApplicationFailure.create({
          type: 'CancelFailed',
          message: `the service did not cancel the mandate: ${res.reason ?? 'no reason given'}`,
          nonRetryable: true,
        });
      }
      alreadyCancelled = res.alreadyCancelled;
    }
    state.nextDebitAt = undefined;
    this.setStatus(
      'cancelled',
      alreadyCancelled ? 'cancelled (the service reported it already cancelled)' : 'cancelled on request',
    );
  }

  /** The signal's cancel: a refusal is recorded and the mandate goes on; a new signal tries again. */
  private async cancelOnSignal(): Promise<void> {
    this.cancelRequested = false;
    try {
      await this.exclusive(() => this.cancel());
    } catch (err) {
      // cancel() has recorded the service's refusal already; anything else (D4 unreachable) is recorded here.
      if (!(err instanceof ApplicationFailure && err.type === 'CancelFailed'))
        this.fail(`cancel: ${failureMessage(err)}`);
    }
  }

  /** Best effort: an initiated mandate left behind would block the customer's e-mail for a new one. */
  private async releaseAtService(why: string): Promise<void> {
    if (!this.state.mandateId) return;
    try {
      const res = await reads.cancelMandate(this.state.mandateId);
      if (!res.cancelled) this.fail(`release after ${why}: ${res.reason ?? 'refused'}`);
    } catch (err) {
      this.fail(`release after ${why}: ${failureMessage(err)}`);
    }
  }

  /** "Not ready for debit": the mandate may have been cancelled or rejected at the service. */
  private async endIfEndedAtService(): Promise<void> {
    const seen = await this.readMandate();
    if (seen && (seen.status === 'cancelled' || seen.status === 'rejected'))
      this.setStatus('cancelled', `${seen.status} at the service`);
  }

  private async readMandate(): Promise<MandateSnapshot | undefined> {
    try {
      return await reads.getMandate(this.state.mandateId!);
    } catch (err) {
      log.warn('D5 read failed', { error: failureMessage(err) });
      return undefined;
    }
  }

  /**
   * The workflow was cancelled (Temporal cancel): in a non-cancellable scope, the in-flight call
   * finishes (send-once settles it), pending and unknown debits are requeried, the mandate is
   * cancelled at the service, and the flow records it. It ends only once no debit is unresolved
   * (the background requery and resolveDebit go on meanwhile).
   */
  async cleanUpAfterCancel(): Promise<MandateState> {
    const { state } = this;
    return CancellationScope.nonCancellable(async () => {
      // The in-flight send (send-once, non-cancellable) finishes; handlers following a pending debit stop.
      await condition(() => !this.busy && this.inFlight.size === 0);
      for (const d of this.unresolved()) {
        const presence = await settlePresence({ requery: this.requeryDebit(d.reference), settleMs: 0, absentReads: 1 });
        if (presence?.found) this.applyRecord(d, presence.record, true);
        if (d.status === 'pending')
          this.park(d, `${d.error ?? 'pending'}; the workflow was cancelled before it was final`);
      }
      const wasFinal = FINAL_MANDATE_STATUSES.includes(state.status);
      if (!wasFinal && state.mandateId) {
        try {
          const res = await reads.cancelMandate(state.mandateId);
          if (!res.cancelled) this.fail(`cancel after the workflow was cancelled: ${res.reason ?? 'refused'}`);
        } catch (err) {
          this.fail(`cancel after the workflow was cancelled: ${failureMessage(err)}`);
        }
      }
      state.nextDebitAt = undefined;
      if (!wasFinal)
        this.setStatus('cancelled', 'the workflow was cancelled; the mandate was cancelled at the service');
      await condition(() => this.unresolved().length === 0 && allHandlersFinished());
      await this.eventsHandedOver();
      return state;
    });
  }

  // --- bookkeeping the steps share ---

  /** Runs fn alone; a second caller waits (the loop re-checks: several waiters wake together). */
  private async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    while (this.busy) await condition(() => !this.busy);
    this.busy = true;
    try {
      return await fn();
    } finally {
      this.busy = false;
    }
  }

  private setStatus(status: MandateState['status'], endReason?: string): void {
    this.state.status = status;
    if (endReason) this.state.endReason = endReason;
    this.publish();
    const rejected = status === 'cancelled' && endReason?.startsWith('rejected');
    this.tell(rejected ? 'mandate.rejected' : MANDATE_EVENT_TYPES[status], {
      status,
      ...(endReason ? { reason: endReason } : {}),
    });
  }

  /**
   * Queues one merchant event after those before it (their data.sequence is in that order). Without
   * a target nothing is queued and no command is added: flows started before events (no `notify`
   * in their input) replay unchanged.
   */
  private tell(type: MerchantEventType | undefined, fields: OutcomeFields): void {
    if (!type || !this.events.enabled) return;
    this.emissions = this.emissions.then(() => this.events.emit(type, fields));
  }

  /** Every queued event handed to its delivery: awaited before the run ends or continues as new. */
  async eventsHandedOver(): Promise<void> {
    await this.emissions;
  }

  /** A debit's outcome as its event: part = its reference, the amount in kobo. */
  private tellDebit(entry: MandateDebit): void {
    this.tell(DEBIT_EVENT_TYPES[entry.status], {
      status: entry.status,
      amount: entry.amount,
      currency: 'NGN',
      part: entry.reference,
      ...(entry.error ? { reason: entry.error } : {}),
    });
  }

  private fail(message: string): void {
    this.state.failures = [...this.state.failures, message].slice(-FAILURES_KEPT);
  }

  private narrationFor(n?: string): string {
    return n ?? this.input.narration ?? this.input.description;
  }

  unresolved(): MandateDebit[] {
    return [...this.debits.values()].filter(isUnresolvedDebit);
  }

  private heldBack(): number {
    return this.unresolved().reduce((sum, d) => sum + d.amount, 0);
  }

  private available(): number {
    return this.state.balance - this.heldBack();
  }

  private findDebit(debitKey: string): MandateDebit | undefined {
    return this.debits.get(this.keys.get(debitKey) ?? debitKey);
  }

  /** Publishes the debits into the state (query), and PaymentStatus: outcome_unknown while any debit is unresolved. */
  publish(): void {
    const { state } = this;
    const all = [...this.debits.values()].sort((a, b) => a.sequence - b.sequence);
    state.recentDebits = all.slice(-MANDATE_DEBITS_KEPT);
    state.unresolvedDebits = all.filter(isUnresolvedDebit);
    state.available = state.balance - this.heldBack();
    const wanted = state.unresolvedDebits.length > 0 ? 'outcome_unknown' : state.status;
    if (wanted !== this.searchStatus) {
      this.searchStatus = wanted;
      upsertSearchAttributes(paymentSearchAttributes({ status: wanted }));
    }
  }

  /** Stores a debit, trimming the oldest settled ones beyond MANDATE_KEYS_KEPT. */
  private put(entry: MandateDebit): MandateDebit {
    const { debits, keys } = this;
    debits.set(entry.reference, entry);
    if (debits.size > MANDATE_KEYS_KEPT) {
      for (const d of [...debits.values()].sort((a, b) => a.sequence - b.sequence)) {
        if (debits.size <= MANDATE_KEYS_KEPT) break;
        if (!isUnresolvedDebit(d)) debits.delete(d.reference);
      }
    }
    while (keys.size > MANDATE_KEYS_KEPT) keys.delete(keys.keys().next().value as string);
    this.publish();
    return entry;
  }

  /** A debit's outcome became final (by an answer, a requery or an operator): balance and totals follow. */
  private conclude(
    entry: MandateDebit,
    status: 'success' | 'failed',
    confirmedBy: MandateDebit['confirmedBy'],
    error?: string,
    settledLater = false,
  ): void {
    entry.status = status;
    entry.confirmedBy = confirmedBy;
    entry.error = status === 'success' ? undefined : (error ?? entry.error);
    entry.nextRequeryAt = undefined;
    if (status === 'success') {
      this.state.balance -= entry.amount;
      this.state.totalDebited += entry.amount;
    } else this.fail(`${entry.reference}: ${entry.error ?? 'refused'}`);
    if (settledLater) this.fail(`${entry.reference}: settled as ${status} (${confirmedBy})`);
    this.put(entry);
    this.tellDebit(entry);
  }

  /** Parks a debit as outcome_unknown: visible, requeried in the background, resolvable by an operator. */
  private park(entry: MandateDebit, why: string): void {
    const now = Date.now();
    entry.status = 'outcome_unknown';
    entry.error = why;
    entry.requeries = entry.requeries ?? 0;
    entry.requeryUntil ??= new Date(now + this.settings.unresolvedRequeryForMs).toISOString();
    entry.nextRequeryAt = new Date(now + this.settings.unresolvedRequeryFirstMs).toISOString();
    this.fail(`${entry.reference}: outcome unknown (${why}); requeried until ${entry.requeryUntil}, or resolveDebit`);
    this.put(entry);
    this.tellDebit(entry);
  }

  /** Applies a verify record (found) to an unresolved debit; true when it is final now. */
  private applyRecord(entry: MandateDebit, record: FoundDebit, settledLater: boolean): boolean {
    const seen = fromVerify(record, entry.amount);
    if (seen.status === 'success' || seen.status === 'failed') {
      this.conclude(entry, seen.status, 'requery', seen.error, settledLater);
      return true;
    }
    if (seen.status === 'outcome_unknown') entry.error = seen.error;
    return false;
  }
}

/** The input's debit-safety settings that are set (undefined ones keep the defaults). */
function definedOnly(input: MandateInput): Partial<DebitSafetySettings> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(DEBIT_SAFETY_DEFAULTS) as (keyof DebitSafetySettings)[]) {
    if (input[k] !== undefined) out[k] = input[k];
  }
  return out as Partial<DebitSafetySettings>;
}

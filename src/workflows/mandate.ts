// Direct-debit mandate: create (D1), wait for the customer's OTP (Update; D2, D6 on an expired
// session), then debit — on the FIXED schedule with durable timers, or on request for VARIABLE
// (Update with a validator, idempotent by the caller's key) — until end_date, a spent balance, or
// cancellation (D4). See docs/flows-mandates.md.
//
// Money safety (patch 'mandate-money-safety'; runs started before it replay the old steps in
// ./mandate-legacy.ts):
//  - D1 and every D3 go through the one send-once rule (./send-once.ts). D1 is requeried by D5
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
} from '../activities/mandates';
import type { PaymentFlowActivities } from '../activities/payments';
import {
  DEBIT_SAFETY_DEFAULTS,
  DEFAULT_DEBITS_PER_RUN,
  FINAL_MANDATE_STATUSES,
  IDEMPOTENCY_KEY_RULE,
  MANDATE_DEBITS_KEPT,
  MANDATE_KEYS_KEPT,
  MINIMUM_DEBIT_KOBO,
  cancelMandateSignal,
  cancelMandateUpdate,
  dateToMs,
  debitKeyReference,
  debitMandateUpdate,
  debitReference,
  isUnresolvedDebit,
  mandateInputProblems,
  mandateStateQuery,
  resendMandateOtpUpdate,
  resolveDebitUpdate,
  scheduledDebitAt,
  sealedBvnProblems,
  startOfDayMs,
  submitMandateOtpUpdate,
  type DebitSafetySettings,
  type FixedMandateSettings,
  type MandateCarry,
  type MandateDebit,
  type MandateInput,
  type MandateState,
} from '../shared/mandate';
import type { TransactionLookup } from '../shared/payment-common';
import { isClaimHandle, SECRET_UNAVAILABLE } from '../shared/claim-check';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { legacyMandateSteps } from './mandate-legacy';
import {
  SEND_ONCE_DEFAULTS,
  sendOnce,
  settle as settlePresence,
  type Presence,
  type SendOnceResult,
} from './send-once';
import { failureOf } from '../shared/failures';

/** Flows started after the claim check: the input must carry the BVN as a handle (old flows replay without this check). */
const SEALED_BVN_PATCH = 'mandate-sealed-bvn';
/** Flows started after this send D1/D3 through send-once, with idempotent debits and unknown-outcome handling. */
const MONEY_SAFETY_PATCH = 'mandate-money-safety';

type Activities = ReturnType<typeof createMandateActivities>;

/** Reads and idempotent calls (D4, D5, D6): retried. */
const reads = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '1s' },
});
/** D2: one attempt; the workflow decides what an unclear failure means. */
const once = proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 1 } });
/** D1, D3 (money-moving): one attempt, heartbeating while the call is open, so a killed worker is noticed in seconds. */
const money = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  heartbeatTimeout: '10s',
  retry: { maximumAttempts: 1 },
});
/** Verify by the debit's reference (the debit's requery). */
const verify = proxyActivities<PaymentFlowActivities>({
  startToCloseTimeout: '30s',
  retry: {
    maximumAttempts: 5,
    initialInterval: '1s',
    maximumInterval: '10s',
    nonRetryableErrorTypes: ['InvalidRequest', 'BadRequest', 'Unauthorized'],
  },
});

const DAY_MS = 24 * 3600 * 1000;
const FAILURES_KEPT = 50;
const MAX_MANUAL_OTP_RESENDS = 5;
const UNCLEAR = ['OutcomeUnknown', 'Transient'];
/** Consecutive documented not-found answers that prove an unresolved debit never reached the service. */
const ABSENT_READS = SEND_ONCE_DEFAULTS.absentReads;

const messageOf = (err: unknown): string =>
  failureOf(err)?.message ?? (err instanceof Error ? err.message : String(err));

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
  const safe = patched(MONEY_SAFETY_PATCH);
  const state: MandateState = carry?.state ?? {
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
  let sequence = carry?.sequence ?? 0;
  let sessionToken: string | undefined;
  let sessionResends = 0;
  let manualResends = 0;
  let cancelRequested = false;
  let debitsThisRun = 0;
  let busy = false; // one service call at a time: a debit's balance check must see the previous debit's result
  const endAt = dateToMs(input.endDate) + DAY_MS; // end_date is inclusive
  const narrationFor = (n?: string) => n ?? input.narration ?? input.description;
  const settings: DebitSafetySettings = { ...DEBIT_SAFETY_DEFAULTS, ...definedOnly(input) };

  // --- the debits this flow knows (new runs): by reference, with the caller's keys ---
  /** reference → debit, the last MANDATE_KEYS_KEPT (unresolved ones are never dropped). */
  const debits = new Map<string, MandateDebit>();
  /** idempotency key → reference. */
  const keys = new Map<string, string>(Object.entries(carry?.keys ?? {}));
  /** References being sent or settled right now: a duplicate request waits for them. */
  const inFlight = new Set<string>();
  for (const d of [...(carry?.debits ?? state.recentDebits), ...state.unresolvedDebits]) {
    // 'unknown' (runs before the patch) is outcome_unknown here; the background requery takes it up at once.
    const legacyUnknown = d.status === 'unknown';
    debits.set(
      d.reference,
      legacyUnknown
        ? {
            ...d,
            status: 'outcome_unknown',
            requeries: 0,
            nextRequeryAt: new Date(Date.now()).toISOString(),
            requeryUntil: new Date(Date.now() + settings.unresolvedRequeryForMs).toISOString(),
          }
        : d,
    );
  }
  let searchStatus: string | undefined = carry ? state.status : 'creating';

  const unresolved = (): MandateDebit[] => [...debits.values()].filter(isUnresolvedDebit);
  const heldBack = (): number => unresolved().reduce((sum, d) => sum + d.amount, 0);
  const available = (): number => (safe ? state.balance - heldBack() : state.balance);

  /** Publishes the debits into the state (query), and PaymentStatus: outcome_unknown while any debit is unresolved. */
  function publish(): void {
    const all = [...debits.values()].sort((a, b) => a.sequence - b.sequence);
    state.recentDebits = all.slice(-MANDATE_DEBITS_KEPT);
    state.unresolvedDebits = all.filter(isUnresolvedDebit);
    state.available = state.balance - heldBack();
    const wanted = state.unresolvedDebits.length > 0 ? 'outcome_unknown' : state.status;
    if (wanted !== searchStatus) {
      searchStatus = wanted;
      upsertSearchAttributes(paymentSearchAttributes({ status: wanted }));
    }
  }

  /** Stores a debit (new runs), trimming the oldest settled ones beyond MANDATE_KEYS_KEPT. */
  function put(entry: MandateDebit): MandateDebit {
    debits.set(entry.reference, entry);
    if (debits.size > MANDATE_KEYS_KEPT) {
      for (const d of [...debits.values()].sort((a, b) => a.sequence - b.sequence)) {
        if (debits.size <= MANDATE_KEYS_KEPT) break;
        if (!isUnresolvedDebit(d)) debits.delete(d.reference);
      }
    }
    while (keys.size > MANDATE_KEYS_KEPT) keys.delete(keys.keys().next().value as string);
    publish();
    return entry;
  }

  const setStatus = (status: MandateState['status'], endReason?: string) => {
    state.status = status;
    if (endReason) state.endReason = endReason;
    if (safe) publish();
    else upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  const fail = (message: string) => {
    state.failures = [...state.failures, message].slice(-FAILURES_KEPT);
  };

  /** Runs fn alone; a second caller waits (the loop re-checks: several waiters wake together). */
  async function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    while (busy) await condition(() => !busy);
    busy = true;
    try {
      return await fn();
    } finally {
      busy = false;
    }
  }

  async function readMandate(): Promise<MandateSnapshot | undefined> {
    try {
      return await reads.getMandate(state.mandateId!);
    } catch (err) {
      log.warn('D5 read failed', { error: messageOf(err) });
      return undefined;
    }
  }

  /** "Not ready for debit": the mandate may have been cancelled or rejected at the service. */
  async function endIfEndedAtService(): Promise<void> {
    const seen = await readMandate();
    if (seen && (seen.status === 'cancelled' || seen.status === 'rejected'))
      setStatus('cancelled', `${seen.status} at the service`);
  }

  const legacy = legacyMandateSteps({
    input,
    state,
    nextSequence: () => ++sequence,
    countDebit: () => {
      state.debitCount += 1;
      debitsThisRun += 1;
    },
    fail,
    setStatus,
    setSession: (mandateId, token) => {
      state.mandateId = mandateId;
      sessionToken = token;
    },
    releaseAtService,
    endIfEndedAtService,
  });

  // --- debits (new runs) ---

  /** Verify by the debit's reference, as send-once's requery: throws when the service could not be asked. */
  const requeryDebit = (reference: string) => async (): Promise<Presence<FoundDebit>> => {
    const found = await verify.lookupTransaction(reference);
    return found.found ? { found: true, record: found } : { found: false };
  };

  /** A debit's outcome became final (by an answer, a requery or an operator): balance and totals follow. */
  function conclude(
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
      state.balance -= entry.amount;
      state.totalDebited += entry.amount;
    } else fail(`${entry.reference}: ${entry.error ?? 'refused'}`);
    if (settledLater) fail(`${entry.reference}: settled as ${status} (${confirmedBy})`);
    put(entry);
  }

  /** Parks a debit as outcome_unknown: visible, requeried in the background, resolvable by an operator. */
  function park(entry: MandateDebit, why: string): void {
    const now = Date.now();
    entry.status = 'outcome_unknown';
    entry.error = why;
    entry.requeries = entry.requeries ?? 0;
    entry.requeryUntil ??= new Date(now + settings.unresolvedRequeryForMs).toISOString();
    entry.nextRequeryAt = new Date(now + settings.unresolvedRequeryFirstMs).toISOString();
    fail(`${entry.reference}: outcome unknown (${why}); requeried until ${entry.requeryUntil}, or resolveDebit`);
    put(entry);
  }

  /** Applies a verify record (found) to an unresolved debit; true when it is final now. */
  function applyRecord(entry: MandateDebit, record: FoundDebit, settledLater: boolean): boolean {
    const seen = fromVerify(record, entry.amount);
    if (seen.status === 'success' || seen.status === 'failed') {
      conclude(entry, seen.status, 'requery', seen.error, settledLater);
      return true;
    }
    if (seen.status === 'outcome_unknown') entry.error = seen.error;
    return false;
  }

  /** D3 through send-once; the entry ends success, failed, pending (the service said so) or outcome_unknown. */
  async function sendDebit(entry: MandateDebit, narration: string): Promise<void> {
    const req = {
      mandateId: state.mandateId!,
      amount: entry.amount,
      reference: entry.reference,
      narration,
      customerEmail: input.customerEmail,
    };
    let lastFailure: string | undefined;
    const result: SendOnceResult<MandateDebitAnswer, FoundDebit> = await sendOnce({
      what: `debit (D3) ${entry.reference}`,
      send: async () => {
        try {
          return await money.debitMandate(req);
        } catch (err) {
          lastFailure = failureOf(err)?.type ?? undefined;
          throw err;
        }
      },
      requery: requeryDebit(entry.reference),
      settleMs: settings.debitSettleMs,
    });
    switch (result.outcome) {
      case 'answered':
        entry.serviceStatus = result.answer.serviceStatus;
        if (result.answer.status === 'success') conclude(entry, 'success', result.sends > 1 ? 'resend' : 'response');
        else if (result.answer.status === 'failed')
          conclude(entry, 'failed', 'response', `D3 answered status ${result.answer.serviceStatus}`);
        else {
          entry.status = 'pending';
          entry.error = `D3 answered status ${result.answer.serviceStatus || '(none)'}`;
          put(entry);
        }
        return;
      case 'refused':
        conclude(entry, 'failed', 'response', result.failure.message);
        if (/not ready/i.test(result.failure.message)) await endIfEndedAtService();
        return;
      case 'found':
        entry.error = result.lost;
        if (!applyRecord(entry, result.record, false)) {
          entry.status = 'pending';
          put(entry);
        }
        return;
      case 'never-received':
        // A "duplicate reference" refusal says the service holds the reference although verify
        // does not show it: that is no proof of absence.
        if (lastFailure === 'DuplicateReference')
          park(entry, `${result.lost}; the service knows the reference but verify does not show it`);
        else
          conclude(
            entry,
            'failed',
            'requery',
            `never reached the service (verify does not know ${entry.reference} after ${result.sends} sends): ${result.lost}`,
          );
        return;
      case 'unverified':
        park(entry, `${result.lost}; verify could not be asked`);
        return;
    }
  }

  /** A pending debit: requeried on a bounded backoff until final, then parked as outcome_unknown. */
  async function followPending(entry: MandateDebit): Promise<void> {
    for (const waitMs of settings.pendingRequeryMs) {
      if (entry.status !== 'pending') return; // an operator resolved it meanwhile
      const presence = await settlePresence({
        requery: requeryDebit(entry.reference),
        settleMs: waitMs,
        absentReads: 1,
      });
      if (entry.status !== 'pending') return;
      if (presence?.found && applyRecord(entry, presence.record, true)) return;
    }
    if (entry.status === 'pending')
      park(entry, `${entry.error ?? 'pending'}; still not final after ${settings.pendingRequeryMs.length} requeries`);
  }

  /** A new debit: sent under the lock (balance checks see the previous debit), followed outside it when pending. */
  async function debit(
    amount: number,
    narration: string,
    kind: MandateDebit['kind'],
    opts: { key?: string; scheduledFor?: string } = {},
  ): Promise<MandateDebit> {
    sequence += 1;
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
    if (opts.key) keys.set(opts.key, reference);
    state.debitCount += 1;
    debitsThisRun += 1;
    inFlight.add(reference); // stored once its send settled (a duplicate request waits for the lock meanwhile)
    try {
      await sendDebit(entry, narration);
    } finally {
      inFlight.delete(reference);
    }
    return entry;
  }

  async function settleIfPending(entry: MandateDebit): Promise<MandateDebit> {
    if (entry.status !== 'pending') return entry;
    inFlight.add(entry.reference);
    try {
      await followPending(entry);
    } finally {
      inFlight.delete(entry.reference);
    }
    return entry;
  }

  /** The next background requery of outcome_unknown debits (ms), or undefined. */
  function nextRequeryAt(): number | undefined {
    let next: number | undefined;
    for (const d of debits.values()) {
      if (d.status !== 'outcome_unknown' || !d.nextRequeryAt || inFlight.has(d.reference)) continue;
      const at = Date.parse(d.nextRequeryAt);
      if (next === undefined || at < next) next = at;
    }
    return next;
  }

  /** Background: requeries outcome_unknown debits on a doubling backoff until found final or the period ends. */
  async function watchUnresolved(): Promise<void> {
    for (;;) {
      const next = nextRequeryAt();
      if (next === undefined) {
        await condition(() => nextRequeryAt() !== undefined);
        continue;
      }
      const wait = next - Date.now();
      if (wait > 0) {
        await condition(() => (nextRequeryAt() ?? Infinity) < next, wait);
        continue;
      }
      const due = [...debits.values()].filter(
        (d) =>
          d.status === 'outcome_unknown' &&
          d.nextRequeryAt &&
          Date.parse(d.nextRequeryAt) <= Date.now() &&
          !inFlight.has(d.reference),
      );
      for (const d of due) {
        let presence: Presence<FoundDebit> | undefined;
        try {
          presence = await requeryDebit(d.reference)();
        } catch (err) {
          log.warn('requery of an unresolved debit failed', { reference: d.reference, error: messageOf(err) });
        }
        if (d.status !== 'outcome_unknown') continue; // resolved meanwhile
        if (presence?.found && applyRecord(d, presence.record, true)) continue;
        // The documented not-found, read ABSENT_READS times in a row over minutes: the request never reached the service (send-once's proof).
        d.absentReads = presence && !presence.found ? (d.absentReads ?? 0) + 1 : 0;
        if (d.absentReads >= ABSENT_READS) {
          conclude(
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
          fail(
            `${d.reference}: still unknown after requerying until ${d.requeryUntil}; an operator must resolve it (resolveDebit)`,
          );
        } else d.nextRequeryAt = new Date(Date.now() + backoff).toISOString();
        put(d);
      }
    }
  }

  function findDebit(debitKey: string): MandateDebit | undefined {
    return debits.get(keys.get(debitKey) ?? debitKey);
  }

  // --- cancel ---

  async function cancel(): Promise<void> {
    if (state.status === 'cancelled') return; // idempotent
    let alreadyCancelled = false;
    if (state.mandateId) {
      const res = await reads.cancelMandate(state.mandateId);
      if (!res.cancelled) {
        fail(`cancel: ${res.reason ?? 'refused'}`);
        throw ApplicationFailure.create({
          type: 'CancelFailed',
          message: `the service did not cancel the mandate: ${res.reason ?? 'no reason given'}`,
          nonRetryable: true,
        });
      }
      alreadyCancelled = res.alreadyCancelled;
    }
    state.nextDebitAt = undefined;
    setStatus(
      'cancelled',
      alreadyCancelled ? 'cancelled (the service reported it already cancelled)' : 'cancelled on request',
    );
  }

  /** The signal's cancel: a refusal is recorded and the mandate goes on; a new signal tries again. */
  async function cancelOnSignal(): Promise<void> {
    cancelRequested = false;
    try {
      await exclusive(cancel);
    } catch (err) {
      // cancel() has recorded the service's refusal already; anything else (D4 unreachable) is recorded here.
      if (!(err instanceof ApplicationFailure && err.type === 'CancelFailed')) fail(`cancel: ${messageOf(err)}`);
    }
  }

  /** Best effort: an initiated mandate left behind would block the customer's e-mail for a new one. */
  async function releaseAtService(why: string): Promise<void> {
    if (!state.mandateId) return;
    try {
      const res = await reads.cancelMandate(state.mandateId);
      if (!res.cancelled) fail(`release after ${why}: ${res.reason ?? 'refused'}`);
    } catch (err) {
      fail(`release after ${why}: ${messageOf(err)}`);
    }
  }

  /**
   * The workflow was cancelled (Temporal cancel): in a non-cancellable scope, the in-flight call
   * finishes (send-once settles it), pending and unknown debits are requeried, the mandate is
   * cancelled at the service, and the flow records it. It ends only once no debit is unresolved
   * (the background requery and resolveDebit go on meanwhile).
   */
  async function cleanUpAfterCancel(): Promise<MandateState> {
    return CancellationScope.nonCancellable(async () => {
      // The in-flight send (send-once, non-cancellable) finishes; handlers following a pending debit stop.
      await condition(() => !busy && inFlight.size === 0);
      for (const d of unresolved()) {
        const presence = await settlePresence({ requery: requeryDebit(d.reference), settleMs: 0, absentReads: 1 });
        if (presence?.found) applyRecord(d, presence.record, true);
        if (d.status === 'pending') park(d, `${d.error ?? 'pending'}; the workflow was cancelled before it was final`);
      }
      const wasFinal = FINAL_MANDATE_STATUSES.includes(state.status);
      if (!wasFinal && state.mandateId) {
        try {
          const res = await reads.cancelMandate(state.mandateId);
          if (!res.cancelled) fail(`cancel after the workflow was cancelled: ${res.reason ?? 'refused'}`);
        } catch (err) {
          fail(`cancel after the workflow was cancelled: ${messageOf(err)}`);
        }
      }
      state.nextDebitAt = undefined;
      if (!wasFinal) setStatus('cancelled', 'the workflow was cancelled; the mandate was cancelled at the service');
      await condition(() => unresolved().length === 0 && allHandlersFinished());
      return state;
    });
  }

  setHandler(mandateStateQuery, () => state);
  setHandler(cancelMandateSignal, () => {
    cancelRequested = true;
  });
  setHandler(
    cancelMandateUpdate,
    async () => {
      await condition(() => state.status !== 'creating'); // D1 in flight: cancel what it creates
      if (state.status === 'cancelled') return state;
      if (FINAL_MANDATE_STATUSES.includes(state.status)) {
        throw ApplicationFailure.create({
          type: 'MandateEnded',
          message: `the mandate already ended: ${state.status}`,
          nonRetryable: true,
        });
      }
      await exclusive(cancel);
      return state;
    },
    {
      validator: () => {
        if (state.status !== 'cancelled' && FINAL_MANDATE_STATUSES.includes(state.status))
          throw new Error(`the mandate already ended: ${state.status}`);
      },
    },
  );
  setHandler(
    submitMandateOtpUpdate,
    async (otp) =>
      exclusive(async () => {
        if (state.status !== 'awaiting_otp')
          throw ApplicationFailure.create({
            type: 'NotAwaitingOtp',
            message: `no OTP is expected: the mandate is ${state.status}`,
            nonRetryable: true,
          });
        try {
          const r = await once.validateMandateOtp(sessionToken!, otp);
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
            if (sessionResends < (input.maxSessionResends ?? 2)) {
              sessionResends += 1;
              let resent = false;
              try {
                await reads.resendMandateOtp(sessionToken!);
                resent = true;
              } catch (resendErr) {
                fail(`resend OTP: ${messageOf(resendErr)}`);
              }
              if (resent)
                throw ApplicationFailure.create({
                  type: 'SessionExpired',
                  message: 'The OTP session expired; a new OTP was sent to the customer.',
                  nonRetryable: true,
                });
            }
            setStatus(
              'expired',
              sessionResends >= (input.maxSessionResends ?? 2)
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
        setStatus('approved');
        return state;
      }),
    {
      validator: (otp) => {
        if (state.status !== 'awaiting_otp') throw new Error(`no OTP is expected in state ${state.status}`);
        // The starter checked the format (4 to 8 digits) and sealed it: only a handle enters history.
        if (!isClaimHandle(otp))
          throw new Error('otp must be sealed: pass the claim-check handle the starter made (submitMandateOtp)');
      },
    },
  );
  setHandler(
    resendMandateOtpUpdate,
    async () =>
      exclusive(async () => {
        if (state.status !== 'awaiting_otp')
          throw ApplicationFailure.create({
            type: 'NotAwaitingOtp',
            message: `no OTP is expected: the mandate is ${state.status}`,
            nonRetryable: true,
          });
        manualResends += 1;
        await reads.resendMandateOtp(sessionToken!);
        return state;
      }),
    {
      validator: () => {
        if (state.status !== 'awaiting_otp') throw new Error(`no OTP is expected in state ${state.status}`);
        if (manualResends >= MAX_MANUAL_OTP_RESENDS)
          throw new Error(`at most ${MAX_MANUAL_OTP_RESENDS} OTP resends on request`);
      },
    },
  );

  /** The same key again: the same debit, once it is no longer being sent or followed. */
  async function sameDebit(reference: string): Promise<MandateDebit> {
    await condition(() => !inFlight.has(reference));
    return debits.get(reference)!;
  }

  setHandler(
    debitMandateUpdate,
    async (req) => {
      const key = safe ? req.idempotencyKey : undefined;
      const known = key !== undefined ? keys.get(key) : undefined;
      if (known && debits.has(known)) return sameDebit(known);
      const entry = await exclusive(async () => {
        const again = key !== undefined ? keys.get(key) : undefined;
        if (again && debits.has(again)) return undefined; // a duplicate got the lock first
        // Re-checked here: a cancel or another debit may have run while this one waited.
        if (state.status !== 'approved')
          throw ApplicationFailure.create({
            type: 'NotApproved',
            message: `the mandate is ${state.status}, not approved`,
            nonRetryable: true,
          });
        if (!safe && !(await legacy.settleUnresolved())) {
          throw ApplicationFailure.create({
            type: 'UnresolvedDebit',
            message: `an earlier debit's outcome is still unknown (${state.unresolvedDebits.map((d) => d.reference).join(', ')}); no new debit until D5 settles it`,
            nonRetryable: true,
          });
        }
        if (req.amount > available()) {
          throw ApplicationFailure.create({
            type: 'OverBalance',
            message: `amount ${req.amount} exceeds the remaining balance ${available()}`,
            nonRetryable: true,
          });
        }
        if (!safe) return legacy.debit(req.amount, narrationFor(req.narration), 'requested');
        return debit(req.amount, narrationFor(req.narration), 'requested', { key: key ?? undefined });
      });
      if (entry === undefined) return sameDebit(keys.get(key!)!);
      return safe ? settleIfPending(entry) : entry;
    },
    {
      validator: (req) => {
        if (state.debitType !== 'variable') throw new Error('only a VARIABLE mandate is debited on request');
        if (safe && req?.idempotencyKey !== undefined) {
          if (typeof req.idempotencyKey !== 'string' || !IDEMPOTENCY_KEY_RULE.pattern.test(req.idempotencyKey))
            throw new Error(IDEMPOTENCY_KEY_RULE.message);
          const knownRef = keys.get(req.idempotencyKey);
          const seen = knownRef ? debits.get(knownRef) : undefined;
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
        if (Date.now() >= endAt) throw new Error(`the mandate ended on ${input.endDate}`);
        if (!Number.isSafeInteger(req?.amount)) throw new Error('amount must be an integer in kobo');
        if (req.amount < MINIMUM_DEBIT_KOBO)
          throw new Error(`amount must be at least ${MINIMUM_DEBIT_KOBO} kobo (N200)`);
        if (req.amount > available())
          throw new Error(`amount ${req.amount} exceeds the remaining balance ${available()}`);
        if (
          req.narration !== undefined &&
          (typeof req.narration !== 'string' || req.narration.length === 0 || req.narration.length > 100)
        ) {
          throw new Error('narration must be 1-100 characters');
        }
      },
    },
  );
  setHandler(
    resolveDebitUpdate,
    async (req) => {
      const d = findDebit(req.debitKey)!;
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
      conclude(
        d,
        req.outcome === 'debited' ? 'success' : 'failed',
        'operator',
        `resolved by ${req.operator}: ${req.reason}`,
        true,
      );
      return d;
    },
    {
      validator: (req) => {
        if (!safe) throw new Error('this run predates resolveDebit: unresolved debits are settled through D5');
        if (typeof req?.debitKey !== 'string' || req.debitKey === '')
          throw new Error('debitKey is required (the idempotency key or the reference)');
        if (req.outcome !== 'debited' && req.outcome !== 'not_debited')
          throw new Error("outcome must be 'debited' or 'not_debited'");
        if (typeof req.reason !== 'string' || req.reason.trim().length === 0 || req.reason.length > 500)
          throw new Error('reason must be 1-500 characters');
        if (typeof req.operator !== 'string' || req.operator.trim().length === 0 || req.operator.length > 100)
          throw new Error('operator must be 1-100 characters');
        const d = findDebit(req.debitKey);
        if (!d) throw new Error(`no debit ${req.debitKey} in this mandate`);
        if (!isUnresolvedDebit(d)) throw new Error(`debit ${d.reference} is already ${d.status}`);
        if (inFlight.has(d.reference))
          throw new Error(`debit ${d.reference} is being sent or requeried right now: try again shortly`);
      },
    },
  );

  async function finish(): Promise<MandateState> {
    await condition(allHandlersFinished);
    return state;
  }

  if (!safe) return runMandate();
  publish();
  void CancellationScope.nonCancellable(() => watchUnresolved());
  try {
    const final = await runMandate();
    // The flow does not end while a debit may have moved money unrecorded.
    await condition(() => unresolved().length === 0 && allHandlersFinished());
    return final;
  } catch (err) {
    if (!isCancellation(err)) throw err;
    return cleanUpAfterCancel();
  }

  async function runMandate(): Promise<MandateState> {
    // --- creation and approval (first run only) ---
    if (!carry) {
      upsertSearchAttributes(
        paymentSearchAttributes({
          flow: 'mandate',
          reference: input.mandateRef,
          amount: input.amount,
          currency: 'NGN',
          status: 'creating',
        }),
      );
      searchStatus = 'creating';
      const problems = mandateInputProblems(input);
      if (patched(SEALED_BVN_PATCH)) problems.push(...sealedBvnProblems(input));
      if (problems.length > 0) {
        setStatus('failed', `invalid input: ${problems.join('; ')}`);
        return finish();
      }
      if (!(await (safe ? create() : legacy.create()))) return finish();
      setStatus('awaiting_otp');
      const otpDeadline = Date.now() + (input.otpTimeoutMs ?? 15 * 60 * 1000);
      while (state.status === 'awaiting_otp') {
        const remaining = otpDeadline - Date.now();
        if (remaining <= 0) {
          await exclusive(async () => {
            if (state.status === 'awaiting_otp') setStatus('expired', 'no OTP before the timeout');
          });
          break;
        }
        await condition(() => state.status !== 'awaiting_otp' || cancelRequested, remaining);
        if (cancelRequested && state.status === 'awaiting_otp') await cancelOnSignal();
      }
      sessionToken = undefined;
      if (state.status === 'expired') await releaseAtService('expiry');
      if (state.status !== 'approved') return finish();
      if (input.fixed) {
        // Dates before the approval day are not debited: the customer had not authorised them.
        const today = startOfDayMs(Date.now());
        while (scheduledDebitAt(input.fixed, state.scheduleIndex) < today) {
          state.scheduleIndex += 1;
          state.skippedBeforeApproval += 1;
        }
      }
    }

    // --- debiting until the end ---
    const runLimit = input.debitsPerRun ?? DEFAULT_DEBITS_PER_RUN;
    const finished = () => state.status !== 'approved' || state.balance < MINIMUM_DEBIT_KOBO || Date.now() >= endAt;
    let scheduleDone = false;

    while (!finished() && !scheduleDone) {
      if (cancelRequested) {
        await cancelOnSignal();
        continue;
      }
      if (debitsThisRun >= runLimit || workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        if (finished() || cancelRequested) continue;
        log.info('continuing as new to keep history bounded', { debitCount: state.debitCount });
        await continueAsNew<typeof mandateWorkflow>(
          input,
          safe
            ? { state, sequence, debits: [...debits.values()], keys: Object.fromEntries(keys) }
            : { state, sequence },
        );
      }
      if (input.fixed) {
        scheduleDone = await scheduledDate(input.fixed);
      } else {
        // VARIABLE: debits arrive as Updates; wake for cancellation, the end date, or continue-as-new.
        await condition(
          () => cancelRequested || finished() || debitsThisRun >= runLimit || workflowInfo().continueAsNewSuggested,
          Math.max(endAt - Date.now(), 1),
        );
      }
    }
    state.nextDebitAt = undefined;
    await condition(allHandlersFinished);
    if (state.status === 'approved') {
      setStatus(
        'completed',
        state.balance < MINIMUM_DEBIT_KOBO
          ? 'balance spent'
          : Date.now() >= endAt
            ? 'end date reached'
            : 'schedule finished',
      );
    }
    return state;
  }

  /**
   * D1 through send-once, requeried by D5 merchant_ref (our mandateRef). A mandate found after a
   * lost answer cannot be approved (its session token went with the answer): it is cancelled at
   * the service and the flow fails, asking for a new mandate.
   */
  async function create(): Promise<boolean> {
    const result: SendOnceResult<CreatedMandate, MandateSnapshot> = await sendOnce({
      what: 'create mandate (D1)',
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
      settleMs: settings.debitSettleMs,
    });
    switch (result.outcome) {
      case 'answered':
        state.mandateId = result.answer.mandateId;
        sessionToken = result.answer.sessionToken;
        return true;
      case 'refused':
        // The sealed BVN expired (e.g. no worker ran within its TTL) before D1 was sent: no
        // mandate exists at the service. Ending says so; a silent wait would block the customer.
        if (result.failure.type === SECRET_UNAVAILABLE) {
          setStatus(
            'failed',
            'the sealed BVN expired before the mandate was created (nothing was sent to the service): start the mandate again with the BVN',
          );
        } else setStatus('failed', result.failure.message);
        return false;
      case 'found':
        state.mandateId = result.record.mandateId;
        await releaseAtService('a lost D1 response');
        setStatus(
          'failed',
          'the creation response was lost; the mandate it created was cancelled at the service; start a new mandate',
        );
        return false;
      case 'never-received':
        setStatus(
          'failed',
          `D1 went unanswered ${result.sends} times and no mandate exists for ${input.mandateRef} (${result.lost})`,
        );
        return false;
      case 'unverified':
        setStatus(
          'failed',
          `D1 went unanswered and the lookup failed (${result.lost}); check merchant_ref ${input.mandateRef} before starting again`,
        );
        return false;
    }
  }

  /** One FIXED date: wait for it, debit (retrying a refusal a bounded number of times). Returns true when the schedule is over. */
  async function scheduledDate(fixed: FixedMandateSettings): Promise<boolean> {
    const at = scheduledDebitAt(fixed, state.scheduleIndex);
    if (at >= endAt) return true;
    const scheduledFor = new Date(at).toISOString().slice(0, 10);
    state.nextDebitAt = new Date(at).toISOString();
    const wait = at - Date.now();
    if (wait > 0 && (await condition(() => cancelRequested || state.status !== 'approved', wait))) return false;
    if (cancelRequested || state.status !== 'approved') return false;
    state.scheduleIndex += 1;
    const retries = input.scheduledDebitRetries ?? 2;
    const delay = input.scheduledRetryDelayMs ?? DAY_MS;
    for (let attempt = 0; ; attempt++) {
      const sent = await exclusive(async (): Promise<MandateDebit | 'ended'> => {
        if (state.status !== 'approved') return 'ended';
        if (!safe) {
          if (!(await legacy.settleUnresolved())) {
            fail(`scheduled debit for ${scheduledFor} not sent: an earlier debit's outcome is still unknown`);
            return 'ended';
          }
          const legacyAmount = Math.min(fixed.initialDebitAmount, state.balance);
          if (legacyAmount < MINIMUM_DEBIT_KOBO) return 'ended';
          return legacy.debit(legacyAmount, narrationFor(), 'scheduled', scheduledFor);
        }
        // Unresolved debits do not stop the schedule: their amounts are held back from what this date may take.
        const amount = Math.min(fixed.initialDebitAmount, available());
        if (amount < MINIMUM_DEBIT_KOBO) {
          if (heldBack() > 0)
            fail(
              `scheduled debit for ${scheduledFor} not sent: ${available()} kobo available while ${heldBack()} kobo of debits are unresolved`,
            );
          return 'ended';
        }
        return debit(amount, narrationFor(), 'scheduled', { scheduledFor });
      });
      if (sent === 'ended') return false;
      const outcome = safe ? (await settleIfPending(sent)).status : sent.status;
      if (outcome !== 'failed' || attempt >= retries || state.status !== 'approved') return false;
      // A refusal moved no money: try again later with a new reference, never past the next date.
      const retryAt = Date.now() + delay;
      if (retryAt >= Math.min(scheduledDebitAt(fixed, state.scheduleIndex), endAt)) return false;
      state.nextDebitAt = new Date(retryAt).toISOString();
      if (await condition(() => cancelRequested || state.status !== 'approved', delay)) return false;
    }
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

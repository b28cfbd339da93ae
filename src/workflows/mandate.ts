// Direct-debit mandate: create (D1), wait for the customer's OTP (Update; D2, D6 on an expired
// session), then debit — on the FIXED schedule with durable timers, or on request for VARIABLE
// (Update with a validator) — until end_date, a spent balance, or cancellation (D4).
// Every debit's reference is `${mandateRef}-D${sequence}`. D3 is sent once; an unknown outcome
// (or a "duplicate reference" refusal) is settled through D5 before anything is sent again, and
// a resend reuses the same reference, so the service's duplicate check stops a second debit.
// continue-as-new keeps long mandates' history bounded. See docs/flows-mandates.md.
// The BVN and the OTP never reach the workflow: the starter seals them into the claim-check
// store; the input carries `customer.bvnHandle` and the OTP Update a handle. D1 and D2 redeem
// them. A BVN whose record expired before D1 was sent ends the flow as failed (nothing was sent:
// start it again with the BVN); an expired OTP fails its Update (send it again) and the flow waits on.
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { createMandateActivities, MandateSnapshot } from '../activities/mandates';
import {
  DEFAULT_DEBITS_PER_RUN,
  FINAL_MANDATE_STATUSES,
  MANDATE_DEBITS_KEPT,
  MINIMUM_DEBIT_KOBO,
  cancelMandateSignal,
  cancelMandateUpdate,
  dateToMs,
  debitMandateUpdate,
  debitReference,
  mandateInputProblems,
  mandateStateQuery,
  resendMandateOtpUpdate,
  scheduledDebitAt,
  sealedBvnProblems,
  startOfDayMs,
  submitMandateOtpUpdate,
  type FixedMandateSettings,
  type MandateCarry,
  type MandateDebit,
  type MandateInput,
  type MandateState,
} from '../shared/mandate';
import { isClaimHandle, SECRET_UNAVAILABLE } from '../shared/claim-check';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { failureOf } from './activity-failure';

/** Flows started after the claim check: the input must carry the BVN as a handle (old flows replay without this check). */
const SEALED_BVN_PATCH = 'mandate-sealed-bvn';

type Activities = ReturnType<typeof createMandateActivities>;

/** Reads and idempotent calls (D4, D5, D6): retried. */
const reads = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 5, initialInterval: '1s' } });
/** D1, D2, D3: one attempt; the workflow decides what an unclear failure means. */
const once = proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 1 } });

const DAY_MS = 24 * 3600 * 1000;
const FAILURES_KEPT = 50;
const MAX_MANUAL_OTP_RESENDS = 5;
const UNCLEAR = ['OutcomeUnknown', 'Transient'];

const messageOf = (err: unknown): string => failureOf(err)?.message ?? (err instanceof Error ? err.message : String(err));

export async function mandateWorkflow(input: MandateInput, carry?: MandateCarry): Promise<MandateState> {
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

  const setStatus = (status: MandateState['status'], endReason?: string) => {
    state.status = status;
    if (endReason) state.endReason = endReason;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
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

  function record(entry: MandateDebit): void {
    if (entry.status === 'success') {
      state.balance -= entry.amount;
      state.totalDebited += entry.amount;
    } else if (entry.status === 'unknown') {
      state.unresolvedDebits = [...state.unresolvedDebits, entry];
      fail(`${entry.reference}: outcome unknown (${entry.error ?? 'no answer'}); settled through D5 before the next debit`);
    } else fail(`${entry.reference}: ${entry.error ?? 'refused'}`);
    state.recentDebits = [...state.recentDebits.filter((d) => d.reference !== entry.reference), entry].slice(-MANDATE_DEBITS_KEPT);
  }

  /**
   * D3 gave no plain answer (no response, or "duplicate reference"). The flow is the mandate's
   * only debitor, so D5's total_debited minus our confirmed total is what this debit applied.
   * Proven absent after an unanswered call: one resend with the same reference (the service's
   * duplicate check refuses it if the first arrived after all). Never a new reference.
   */
  async function settle(entry: MandateDebit, req: Parameters<Activities['debitMandate']>[0], mayResend: boolean): Promise<void> {
    const seen = await readMandate();
    const landed = seen ? seen.totalDebited - state.totalDebited : undefined;
    if (landed === entry.amount) {
      entry.status = 'success';
      entry.confirmedBy = 'requery';
      entry.error = undefined;
      return;
    }
    if (landed === 0 && mayResend) {
      try {
        await once.debitMandate(req);
        entry.status = 'success';
        entry.confirmedBy = 'resend';
        entry.error = undefined;
      } catch (err) {
        const type = failureOf(err)?.type;
        entry.error = messageOf(err);
        if (type === 'DuplicateReference') return settle(entry, req, false);
        if (!UNCLEAR.includes(type ?? '')) entry.status = 'failed';
      }
      return;
    }
    entry.error =
      landed === undefined ? `${entry.error ?? 'no answer'}; D5 could not be read`
      : landed === 0 ? `${entry.error ?? 'no answer'}; D5 shows no change`
      : `${entry.error ?? 'no answer'}; D5 shows ${landed} kobo debited beyond what this flow confirmed`;
  }

  async function debit(amount: number, narration: string, kind: MandateDebit['kind'], scheduledFor?: string): Promise<MandateDebit> {
    sequence += 1;
    const reference = debitReference(input.mandateRef, sequence);
    const entry: MandateDebit = { sequence, reference, amount, status: 'unknown', kind, at: new Date().toISOString(), ...(scheduledFor ? { scheduledFor } : {}) };
    const req = { mandateId: state.mandateId!, amount, reference, narration, customerEmail: input.customerEmail };
    state.debitCount += 1;
    debitsThisRun += 1;
    try {
      await once.debitMandate(req);
      entry.status = 'success';
      entry.confirmedBy = 'response';
    } catch (err) {
      const type = failureOf(err)?.type;
      entry.error = messageOf(err);
      if (type === 'DuplicateReference' || UNCLEAR.includes(type ?? '')) await settle(entry, req, type !== 'DuplicateReference');
      else entry.status = 'failed';
    }
    record(entry);
    if (entry.status === 'failed' && /not ready/i.test(entry.error ?? '')) await endIfEndedAtService();
    return entry;
  }

  /** "Not ready for debit": the mandate may have been cancelled or rejected at the service. */
  async function endIfEndedAtService(): Promise<void> {
    const seen = await readMandate();
    if (seen && (seen.status === 'cancelled' || seen.status === 'rejected')) setStatus('cancelled', `${seen.status} at the service`);
  }

  /**
   * Before any new debit: settle the debits whose outcome stayed unknown. All landed or none
   * landed are the readable answers; none landed → failed, and never resent (a later request may
   * already stand in for it). Anything else stays unresolved and blocks new debits.
   */
  async function settleUnresolved(): Promise<boolean> {
    if (state.unresolvedDebits.length === 0) return true;
    const seen = await readMandate();
    if (!seen) return false;
    const landed = seen.totalDebited - state.totalDebited;
    const pending = state.unresolvedDebits.reduce((s, d) => s + d.amount, 0);
    if (landed !== pending && landed !== 0) return false;
    for (const d of state.unresolvedDebits) {
      const settled: MandateDebit = landed === 0
        ? { ...d, status: 'failed', confirmedBy: 'requery', error: `${d.error ?? ''}; not applied (D5 shows no change)` }
        : { ...d, status: 'success', confirmedBy: 'requery', error: undefined };
      if (settled.status === 'success') {
        state.balance -= d.amount;
        state.totalDebited += d.amount;
      }
      fail(`${d.reference}: settled as ${settled.status} through D5`);
      state.recentDebits = state.recentDebits.map((r) => (r.reference === d.reference ? settled : r));
    }
    state.unresolvedDebits = [];
    return true;
  }

  async function cancel(): Promise<void> {
    if (state.status === 'cancelled') return; // idempotent
    let alreadyCancelled = false;
    if (state.mandateId) {
      const res = await reads.cancelMandate(state.mandateId);
      if (!res.cancelled) {
        fail(`cancel: ${res.reason ?? 'refused'}`);
        throw ApplicationFailure.create({ type: 'CancelFailed', message: `the service did not cancel the mandate: ${res.reason ?? 'no reason given'}`, nonRetryable: true });
      }
      alreadyCancelled = res.alreadyCancelled;
    }
    state.nextDebitAt = undefined;
    setStatus('cancelled', alreadyCancelled ? 'cancelled (the service reported it already cancelled)' : 'cancelled on request');
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
        throw ApplicationFailure.create({ type: 'MandateEnded', message: `the mandate already ended: ${state.status}`, nonRetryable: true });
      }
      await exclusive(cancel);
      return state;
    },
    {
      validator: () => {
        if (state.status !== 'cancelled' && FINAL_MANDATE_STATUSES.includes(state.status)) throw new Error(`the mandate already ended: ${state.status}`);
      },
    },
  );
  setHandler(
    submitMandateOtpUpdate,
    async (otp) =>
      exclusive(async () => {
        if (state.status !== 'awaiting_otp') throw ApplicationFailure.create({ type: 'NotAwaitingOtp', message: `no OTP is expected: the mandate is ${state.status}`, nonRetryable: true });
        try {
          const r = await once.validateMandateOtp(sessionToken!, otp);
          state.mandateReferenceNumber = r.mandateReferenceNumber;
        } catch (err) {
          const failure = failureOf(err);
          if (failure?.type === SECRET_UNAVAILABLE) {
            // The sealed OTP expired (or was used) before D2 was sent: nothing was sent, the flow keeps waiting.
            throw ApplicationFailure.create({ type: SECRET_UNAVAILABLE, message: 'the OTP expired before it was sent: send it again', nonRetryable: true });
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
              if (resent) throw ApplicationFailure.create({ type: 'SessionExpired', message: 'The OTP session expired; a new OTP was sent to the customer.', nonRetryable: true });
            }
            setStatus('expired', sessionResends >= (input.maxSessionResends ?? 2) ? 'the OTP session expired too often' : 'the OTP session expired and no new OTP could be sent');
            throw ApplicationFailure.create({ type: 'SessionExpired', message: 'The OTP session expired; the mandate has expired.', nonRetryable: true });
          }
          throw ApplicationFailure.create({ type: failure?.type ?? 'OtpRejected', message: failure?.message ?? 'The OTP was not accepted.', nonRetryable: true });
        }
        setStatus('approved');
        return state;
      }),
    {
      validator: (otp) => {
        if (state.status !== 'awaiting_otp') throw new Error(`no OTP is expected in state ${state.status}`);
        // The starter checked the format (4 to 8 digits) and sealed it: only a handle enters history.
        if (!isClaimHandle(otp)) throw new Error('otp must be sealed: pass the claim-check handle the starter made (submitMandateOtp)');
      },
    },
  );
  setHandler(
    resendMandateOtpUpdate,
    async () =>
      exclusive(async () => {
        if (state.status !== 'awaiting_otp') throw ApplicationFailure.create({ type: 'NotAwaitingOtp', message: `no OTP is expected: the mandate is ${state.status}`, nonRetryable: true });
        manualResends += 1;
        await reads.resendMandateOtp(sessionToken!);
        return state;
      }),
    {
      validator: () => {
        if (state.status !== 'awaiting_otp') throw new Error(`no OTP is expected in state ${state.status}`);
        if (manualResends >= MAX_MANUAL_OTP_RESENDS) throw new Error(`at most ${MAX_MANUAL_OTP_RESENDS} OTP resends on request`);
      },
    },
  );
  setHandler(
    debitMandateUpdate,
    async (req) =>
      exclusive(async () => {
        // Re-checked here: a cancel or another debit may have run while this one waited.
        if (state.status !== 'approved') throw ApplicationFailure.create({ type: 'NotApproved', message: `the mandate is ${state.status}, not approved`, nonRetryable: true });
        if (!(await settleUnresolved())) {
          throw ApplicationFailure.create({
            type: 'UnresolvedDebit',
            message: `an earlier debit's outcome is still unknown (${state.unresolvedDebits.map((d) => d.reference).join(', ')}); no new debit until D5 settles it`,
            nonRetryable: true,
          });
        }
        if (req.amount > state.balance) throw ApplicationFailure.create({ type: 'OverBalance', message: `amount ${req.amount} exceeds the remaining balance ${state.balance}`, nonRetryable: true });
        return debit(req.amount, narrationFor(req.narration), 'requested');
      }),
    {
      validator: (req) => {
        if (state.debitType !== 'variable') throw new Error('only a VARIABLE mandate is debited on request');
        if (state.status !== 'approved') throw new Error(`the mandate is ${state.status}, not approved`);
        if (Date.now() >= endAt) throw new Error(`the mandate ended on ${input.endDate}`);
        if (!Number.isSafeInteger(req?.amount)) throw new Error('amount must be an integer in kobo');
        if (req.amount < MINIMUM_DEBIT_KOBO) throw new Error(`amount must be at least ${MINIMUM_DEBIT_KOBO} kobo (N200)`);
        if (req.amount > state.balance) throw new Error(`amount ${req.amount} exceeds the remaining balance ${state.balance}`);
        if (req.narration !== undefined && (typeof req.narration !== 'string' || req.narration.length === 0 || req.narration.length > 100)) {
          throw new Error('narration must be 1-100 characters');
        }
      },
    },
  );

  async function finish(): Promise<MandateState> {
    await condition(allHandlersFinished);
    return state;
  }

  // --- creation and approval (first run only) ---
  if (!carry) {
    upsertSearchAttributes(paymentSearchAttributes({ flow: 'mandate', reference: input.mandateRef, amount: input.amount, currency: 'NGN', status: 'creating' }));
    const problems = mandateInputProblems(input);
    if (patched(SEALED_BVN_PATCH)) problems.push(...sealedBvnProblems(input));
    if (problems.length > 0) {
      setStatus('failed', `invalid input: ${problems.join('; ')}`);
      return finish();
    }
    if (!(await create())) return finish();
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
      await continueAsNew<typeof mandateWorkflow>(input, { state, sequence });
    }
    if (input.fixed) {
      scheduleDone = await scheduledDate(input.fixed);
    } else {
      // VARIABLE: debits arrive as Updates; wake for cancellation, the end date, or continue-as-new.
      await condition(() => cancelRequested || finished() || debitsThisRun >= runLimit || workflowInfo().continueAsNewSuggested, Math.max(endAt - Date.now(), 1));
    }
  }
  state.nextDebitAt = undefined;
  await condition(allHandlersFinished);
  if (state.status === 'approved') {
    setStatus('completed', state.balance < MINIMUM_DEBIT_KOBO ? 'balance spent' : Date.now() >= endAt ? 'end date reached' : 'schedule finished');
  }
  return state;

  /** D1, once. An unanswered call is looked up by our reference (D5 merchant_ref) before anything else. */
  async function create(): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        const created = await once.createMandate(input);
        state.mandateId = created.mandateId;
        sessionToken = created.sessionToken;
        return true;
      } catch (err) {
        const type = failureOf(err)?.type;
        if (type === SECRET_UNAVAILABLE) {
          // The sealed BVN expired (e.g. no worker ran within its TTL) before D1 was sent: no
          // mandate exists at the service. Ending says so; a silent wait would block the customer.
          setStatus('failed', 'the sealed BVN expired before the mandate was created (nothing was sent to the service): start the mandate again with the BVN');
          return false;
        }
        if (!UNCLEAR.includes(type ?? '')) {
          setStatus('failed', messageOf(err));
          return false;
        }
        let found: MandateSnapshot | undefined;
        try {
          found = await reads.findMandateByRef(input.mandateRef);
        } catch (lookupErr) {
          setStatus('failed', `D1 went unanswered and the lookup failed (${messageOf(lookupErr)}); check merchant_ref ${input.mandateRef} before starting again`);
          return false;
        }
        if (found) {
          // Created, but its session token went with the lost response: no OTP can approve it.
          state.mandateId = found.mandateId;
          await releaseAtService('a lost D1 response');
          setStatus('failed', 'the creation response was lost; the mandate it created was cancelled at the service; start a new mandate');
          return false;
        }
        if (attempt >= 2) {
          setStatus('failed', `D1 went unanswered twice and no mandate exists for ${input.mandateRef}`);
          return false;
        }
        // Proven absent: one more D1 with the same reference.
      }
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
      const outcome = await exclusive(async () => {
        if (state.status !== 'approved') return 'ended';
        if (!(await settleUnresolved())) {
          fail(`scheduled debit for ${scheduledFor} not sent: an earlier debit's outcome is still unknown`);
          return 'ended';
        }
        const amount = Math.min(fixed.initialDebitAmount, state.balance);
        if (amount < MINIMUM_DEBIT_KOBO) return 'ended';
        return (await debit(amount, narrationFor(), 'scheduled', scheduledFor)).status;
      });
      if (outcome !== 'failed' || attempt >= retries || state.status !== 'approved') return false;
      // A refusal moved no money: try again later with a new reference, never past the next date.
      const retryAt = Date.now() + delay;
      if (retryAt >= Math.min(scheduledDebitAt(fixed, state.scheduleIndex), endAt)) return false;
      state.nextDebitAt = new Date(retryAt).toISOString();
      if (await condition(() => cancelRequested || state.status !== 'approved', delay)) return false;
    }
  }
}

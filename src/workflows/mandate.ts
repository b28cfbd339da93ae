// Direct-debit mandate: create (D1), wait for the customer's OTP (Update; D2, D6 on an expired
// session), then debit — on the FIXED schedule with durable timers, or on request for VARIABLE
// (Update with a validator) — until end_date, a spent balance, or cancellation (D4).
// Every debit's reference is `${mandateRef}-D${sequence}`; an unknown outcome is reconciled
// through D5 before anything is sent again. continue-as-new keeps long mandates' history bounded.
import {
  ApplicationFailure,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { createMandateActivities } from '../activities/mandates';
import {
  MINIMUM_DEBIT_KOBO,
  cancelMandateSignal,
  cancelMandateUpdate,
  dateToMs,
  debitMandateUpdate,
  debitReference,
  fixedSchedule,
  mandateStateQuery,
  resendMandateOtpUpdate,
  submitMandateOtpUpdate,
  type MandateCarry,
  type MandateDebit,
  type MandateInput,
  type MandateState,
} from '../shared/mandate';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { failureOf } from './activity-failure';

type Activities = ReturnType<typeof createMandateActivities>;

const reads = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 5, initialInterval: '1s' } });
const once = proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 1 } });

const DAY_MS = 24 * 3600 * 1000;

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
    failures: [],
  };
  let sequence = carry?.sequence ?? 0;
  let sessionToken: string | undefined;
  let resends = 0;
  let cancelRequested = false;
  let debitsThisRun = 0;
  let busy = false; // one debit at a time: balance checks must see the previous debit's result

  const setStatus = (status: MandateState['status'], endReason?: string) => {
    state.status = status;
    if (endReason) state.endReason = endReason;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };

  async function debit(amount: number, narration: string): Promise<MandateDebit> {
    sequence += 1;
    const reference = debitReference(input.mandateRef, sequence);
    const entry: MandateDebit = { sequence, reference, amount, status: 'unknown', at: new Date().toISOString() };
    const before = state.totalDebited;
    const send = () => once.debitMandate({ mandateId: state.mandateId!, amount, reference, narration, customerEmail: input.customerEmail });
    try {
      await send();
      entry.status = 'success';
    } catch (err) {
      const type = failureOf(err)?.type;
      if (type === 'OutcomeUnknown' || type === 'Transient') {
        // Requery first: the service's total_debited says whether our debit landed.
        const seen = await reads.getMandate(state.mandateId!);
        if (seen && seen.totalDebited >= before + amount) entry.status = 'success';
        else if (seen && seen.totalDebited === before) {
          try {
            await send(); // proven absent: one more attempt with the same reference
            entry.status = 'success';
          } catch (retryErr) {
            entry.status = 'unknown';
            entry.error = (retryErr as Error).message;
          }
        } else entry.error = 'outcome unknown: the mandate could not be read back';
      } else {
        entry.status = 'failed';
        entry.error = err instanceof Error && 'cause' in err && err.cause instanceof Error ? err.cause.message : (err as Error).message;
      }
    }
    if (entry.status === 'success') {
      state.balance -= amount;
      state.totalDebited += amount;
    } else {
      state.failures.push(`${reference}: ${entry.error ?? entry.status}`);
    }
    state.debitCount += 1;
    debitsThisRun += 1;
    state.recentDebits = [...state.recentDebits, entry].slice(-20);
    return entry;
  }

  async function cancel(): Promise<void> {
    if (state.status === 'cancelled') return; // idempotent
    if (state.mandateId) {
      const res = await reads.cancelMandate(state.mandateId);
      if (!res.cancelled) {
        state.failures.push(`cancel: ${res.reason ?? 'refused'}`);
        throw ApplicationFailure.create({ type: 'CancelFailed', message: `the service did not cancel the mandate: ${res.reason ?? 'no reason given'}`, nonRetryable: true });
      }
    }
    setStatus('cancelled', 'cancelled on request');
  }

  setHandler(mandateStateQuery, () => state);
  setHandler(cancelMandateSignal, () => {
    cancelRequested = true;
  });
  setHandler(cancelMandateUpdate, async () => {
    await condition(() => !busy);
    await cancel();
    return state;
  });
  setHandler(
    submitMandateOtpUpdate,
    async (otp) => {
      busy = true;
      try {
        await once.validateMandateOtp(sessionToken!, otp).then((r) => {
          state.mandateReferenceNumber = r.mandateReferenceNumber;
        });
      } catch (err) {
        const failure = failureOf(err);
        if (failure?.type === 'SessionExpired') {
          if (resends < (input.maxSessionResends ?? 2)) {
            resends += 1;
            await reads.resendMandateOtp(sessionToken!);
            throw ApplicationFailure.create({ type: 'SessionExpired', message: 'The OTP session expired; a new OTP was sent to the customer.', nonRetryable: true });
          }
          setStatus('expired', 'the OTP session expired too often');
          throw ApplicationFailure.create({ type: 'SessionExpired', message: 'The OTP session expired; the mandate has expired.', nonRetryable: true });
        }
        throw ApplicationFailure.create({ type: failure?.type ?? 'OtpRejected', message: failure?.message ?? 'The OTP was not accepted.', nonRetryable: true });
      } finally {
        busy = false;
      }
      setStatus('approved');
      return state;
    },
    {
      validator: (otp) => {
        if (state.status !== 'awaiting_otp') throw new Error(`no OTP is expected in state ${state.status}`);
        if (typeof otp !== 'string' || !/^\d{4,8}$/.test(otp)) throw new Error('otp must be 4 to 8 digits');
      },
    },
  );
  setHandler(
    resendMandateOtpUpdate,
    async () => {
      await reads.resendMandateOtp(sessionToken!);
      resends += 1;
      return state;
    },
    {
      validator: () => {
        if (state.status !== 'awaiting_otp') throw new Error(`no OTP is expected in state ${state.status}`);
      },
    },
  );
  setHandler(
    debitMandateUpdate,
    async (req) => {
      await condition(() => !busy);
      busy = true;
      try {
        if (req.amount > state.balance) throw ApplicationFailure.create({ type: 'OverBalance', message: `amount ${req.amount} exceeds the remaining balance ${state.balance}`, nonRetryable: true });
        return await debit(req.amount, req.narration ?? input.narration ?? input.description);
      } finally {
        busy = false;
      }
    },
    {
      validator: (req) => {
        if (state.debitType !== 'variable') throw new Error('only a VARIABLE mandate is debited on request');
        if (state.status !== 'approved') throw new Error(`the mandate is ${state.status}, not approved`);
        if (!Number.isSafeInteger(req?.amount)) throw new Error('amount must be an integer in kobo');
        if (req.amount < MINIMUM_DEBIT_KOBO) throw new Error(`amount must be at least ${MINIMUM_DEBIT_KOBO} kobo (N200)`);
        if (req.amount > state.balance) throw new Error(`amount ${req.amount} exceeds the remaining balance ${state.balance}`);
      },
    },
  );

  // --- creation and approval (first run only) ---
  if (!carry) {
    upsertSearchAttributes(paymentSearchAttributes({ flow: 'mandate', reference: input.mandateRef, amount: input.amount, currency: 'NGN', status: 'creating' }));
    try {
      const created = await once.createMandate(input);
      state.mandateId = created.mandateId;
      sessionToken = created.sessionToken;
    } catch (err) {
      const failure = err instanceof Error && 'cause' in err && err.cause instanceof Error ? err.cause : (err as Error);
      setStatus('failed', failure.message);
      return state;
    }
    setStatus('awaiting_otp');
    const answered = await condition(() => state.status !== 'awaiting_otp' || cancelRequested, input.otpTimeoutMs ?? 15 * 60 * 1000);
    if (cancelRequested && state.status === 'awaiting_otp') await cancel();
    if (!answered && state.status === 'awaiting_otp') setStatus('expired', 'no OTP before the timeout');
    if (state.status !== 'approved') return state;
    sessionToken = undefined;
  }

  // --- debiting until the end ---
  const endAt = dateToMs(input.endDate) + DAY_MS;
  const schedule = input.fixed ? fixedSchedule(input.fixed, input.endDate).filter((_, i) => i >= state.debitCount) : [];
  const runLimit = input.debitsPerRun ?? 50;
  const finished = () => state.status !== 'approved' || state.balance < MINIMUM_DEBIT_KOBO || Date.now() >= endAt;

  while (!finished()) {
    if (cancelRequested) {
      await cancel();
      break;
    }
    if (debitsThisRun >= runLimit || workflowInfo().continueAsNewSuggested) {
      await condition(() => !busy);
      log.info('continuing as new to keep history bounded', { debitCount: state.debitCount });
      await continueAsNew<typeof mandateWorkflow>(input, { state, sequence });
    }
    if (input.debitType === 'fixed' && input.fixed) {
      const next = schedule.shift();
      if (next === undefined) break;
      state.nextDebitAt = new Date(next).toISOString();
      const wait = next - Date.now();
      if (wait > 0 && (await condition(() => cancelRequested || state.status !== 'approved', wait))) continue;
      await condition(() => !busy);
      if (cancelRequested || state.status !== 'approved') continue;
      const amount = Math.min(input.fixed.initialDebitAmount, state.balance);
      if (amount >= MINIMUM_DEBIT_KOBO) await debit(amount, input.narration ?? input.description);
    } else {
      // VARIABLE: debits arrive as Updates; wake for cancellation, the end date, or continue-as-new.
      await condition(() => cancelRequested || finished() || debitsThisRun >= runLimit, Math.max(endAt - Date.now(), 1));
    }
  }
  state.nextDebitAt = undefined;
  await condition(() => !busy);
  if (state.status === 'approved') setStatus('completed', state.balance < MINIMUM_DEBIT_KOBO ? 'balance spent' : 'end date reached');
  return state;
}

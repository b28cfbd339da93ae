// Mandate activities: create, validate the OTP, resend it, debit (money-moving), cancel, and the
// lookups (by mandate id and by our reference). Failures become ApplicationFailures with deliberate
// types; the create and the debit are scheduled with maximumAttempts 1 and a short heartbeat timeout
// (they heartbeat while the call is open), and the workflow settles an unclear outcome through
// send-once: a create by the mandate lookup on merchant_ref, a debit by verify on its reference
// (docs/flows-mandates.md). The BVN (create) and the OTP (validation) arrive as claim-check handles
// and are redeemed here with withSealed, right before the call; nothing here logs a request body.
import { ApplicationFailure } from '@temporalio/activity';
import { BadRequestError, DependencyFailedError, type MandateCreateRequest, type PaymentsApiError } from '../api';
import type { ActivityDeps } from './deps';
import { keptForResend, withSealed } from './claim-check';
import { bindActivities } from './bind';
import { moneyCall, read } from './calls';
import { heartbeatWhile } from './heartbeat';
import type { MandateInput } from '../shared/mandate';
import { toActivityFailure } from './failures';

export interface CreatedMandate {
  mandateId: string;
  /** Needed for the OTP validation and resend only; kept out of queries and search attributes. */
  sessionToken: string;
}

export interface MandateSnapshot {
  mandateId: string;
  status: string;
  balance: number;
  totalDebited: number;
}

export interface MandateDebitRequest {
  mandateId: string;
  amount: number;
  /** `${mandateRef}-D${sequence}`: the same on every attempt of the same debit. */
  reference: string;
  narration: string;
  customerEmail: string;
}

/**
 * What the debit's answer says happened, read from `data.status` — never from the HTTP code: `success`
 * (or successful) applied; `failed` (failure, declined, reversed) moved no money; anything else
 * (pending, processing, a missing or unknown status) proves nothing yet and is requeried.
 */
export type DebitAnswerStatus = 'success' | 'failed' | 'pending';

export interface MandateDebitAnswer {
  status: DebitAnswerStatus;
  /** `data.status` as the service wrote it ('' when absent). */
  serviceStatus: string;
  /** `data.amount` (the sample's `aamount`), kobo, when given. */
  amount?: number;
}

export function debitAnswerStatus(serviceStatus: string | null | undefined): DebitAnswerStatus {
  const s = String(serviceStatus ?? '')
    .trim()
    .toLowerCase();
  if (s === 'success' || s === 'successful') return 'success';
  if (s === 'failed' || s === 'failure' || s === 'declined' || s === 'reversed') return 'failed';
  return 'pending';
}

/** The service refused a debit reference it has seen: the debit may already be applied (the workflow requeries it by verify). */
export const isDuplicateReference = (err: PaymentsApiError): boolean =>
  err instanceof BadRequestError &&
  /duplicate|already (been )?(used|processed|exists)/i.test(err.serviceMessage ?? err.message);

type MandateRecord = {
  mandate_id?: string | number | null;
  status?: string | null;
  balance?: number | null;
  total_debited?: number | null;
};
const snapshot = (rec: MandateRecord): MandateSnapshot => ({
  mandateId: String(rec.mandate_id),
  status: String(rec.status ?? ''),
  balance: rec.balance ?? 0,
  totalDebited: rec.total_debited ?? 0,
});

type MandateDeps = Pick<ActivityDeps, 'api' | 'logger' | 'claimCheck'>;

/** The OTP validation and resend answer 424 when the session is invalid or expired: a new OTP needs a new mandate. */
function sessionExpired(err: unknown, what: string): ApplicationFailure {
  if (!(err instanceof DependencyFailedError)) return toActivityFailure(err, { moneyMoving: false, what });
  return ApplicationFailure.nonRetryable('Invalid or expired session.', 'SessionExpired');
}

/** The create request, with the BVN redeemed from its handle. */
function createRequest(input: MandateInput, bvn: string): MandateCreateRequest {
  return {
    mandate_type: 'emandate',
    debit_type: input.debitType,
    amount: input.amount,
    account_number: input.accountNumber,
    bank_code: input.bankCode,
    description: input.description,
    start_date: input.startDate,
    end_date: input.endDate,
    customer_email: input.customerEmail,
    transaction_reference: input.mandateRef,
    customerInformation: {
      identity: { type: 'bvn', number: bvn },
      firstName: input.customer.firstName,
      lastName: input.customer.lastName,
      address: input.customer.address,
      phone: input.customer.phone,
    },
    ...(input.fixed
      ? {
          fixedMandateSettings: {
            frequency: input.fixed.frequency,
            interval: input.fixed.interval,
            initial_debit_amount: input.fixed.initialDebitAmount,
            initial_debit_date: input.fixed.initialDebitDate,
          },
        }
      : {}),
  };
}

/**
 * Creates the mandate (D1) with the sealed BVN (the workflow refuses an input without one; kept after
 * an unclear failure, for a resend once the lookup proved the first never created the mandate). Our mandateRef is the
 * transaction_reference, so an unanswered call can be looked up. Heartbeats while the call is open
 * (the workflow gives it a short heartbeat timeout).
 */
function createMandate({ api, logger, claimCheck }: MandateDeps, input: MandateInput): Promise<CreatedMandate> {
  return moneyCall('create mandate', async () => {
    const create = (bvn: string) => api.mandates.create(createRequest(input, bvn));
    const send = () => withSealed(claimCheck, input.customer.bvnHandle, 'bvn', create, { afterError: keptForResend });
    const res = await heartbeatWhile(send, { call: 'D1' });
    if (!res.data.session_token)
      throw ApplicationFailure.nonRetryable('create mandate: the service returned no session_token', 'ServiceError');
    logger.info({ mandateRef: input.mandateRef, mandateId: res.data.mandate_id }, 'mandate created');
    return { mandateId: String(res.data.mandate_id), sessionToken: res.data.session_token };
  });
}

/** Validates the mandate's OTP (D2), sealed (the handle from the Update); deleted once the service answered. */
async function validateMandateOtp(
  { api, claimCheck }: MandateDeps,
  sessionToken: string,
  otpHandle: string,
): Promise<{ mandateReferenceNumber?: string }> {
  try {
    const res = await withSealed(claimCheck, otpHandle, 'mandate-otp', (otp: string) =>
      api.mandates.validateOtp({ session_token: sessionToken, otp }),
    );
    return { mandateReferenceNumber: res.data.mandate_reference_number ?? undefined };
  } catch (err) {
    throw sessionExpired(err, 'validate mandate OTP');
  }
}

async function resendMandateOtp({ api }: MandateDeps, sessionToken: string): Promise<void> {
  try {
    await api.mandates.resendOtp({ session_token: sessionToken });
  } catch (err) {
    throw sessionExpired(err, 'resend mandate OTP');
  }
}

/**
 * Debits the mandate (D3), money-moving: one attempt, heartbeating while the call is open. The answer's `data.status`
 * says what happened (a 200 saying pending or failed is no success). A refusal of the reference
 * as a duplicate is reported as `DuplicateReference`, never as success: the workflow requeries
 * the reference before it calls the debit applied.
 */
async function debitMandate({ api, logger }: MandateDeps, req: MandateDebitRequest): Promise<MandateDebitAnswer> {
  try {
    const debit = {
      amount: req.amount,
      mandate_id: req.mandateId,
      transaction_reference: req.reference,
      narration: req.narration,
      customer_email: req.customerEmail,
    };
    const res = await heartbeatWhile(() => api.mandates.debit(debit), { call: 'D3', reference: req.reference });
    const serviceStatus = String(res.data.status ?? '');
    const amount = typeof res.data.amount === 'number' ? { amount: res.data.amount } : {};
    logger.info({ reference: req.reference, amount: req.amount, status: serviceStatus }, 'mandate debit answered');
    return { status: debitAnswerStatus(serviceStatus), serviceStatus, ...amount };
  } catch (err) {
    if (err instanceof BadRequestError && isDuplicateReference(err)) {
      throw ApplicationFailure.nonRetryable(`debit ${req.reference}: ${err.message}`, 'DuplicateReference');
    }
    throw toActivityFailure(err, { moneyMoving: true, what: `debit ${req.reference}` });
  }
}

/** Cancels one mandate (D4); the partial result is read per id ('Mandate already cancelled' counts as cancelled). */
function cancelMandate(
  { api }: MandateDeps,
  mandateId: string,
): Promise<{ cancelled: boolean; alreadyCancelled: boolean; reason?: string }> {
  return read('cancel mandate', async () => {
    const { data } = await api.mandates.cancel({ mandateIds: [mandateId] });
    if (data.canceledMandates.map(String).includes(mandateId)) return { cancelled: true, alreadyCancelled: false };
    const failed = data.failedMandates.find((f) => String(f.mandateId) === mandateId);
    if (failed && /already cancel/i.test(failed.failureReason ?? ''))
      return { cancelled: true, alreadyCancelled: true };
    return {
      cancelled: false,
      alreadyCancelled: false,
      reason: failed?.failureReason ?? 'not reported by the service',
    };
  });
}

/** The lookup's documented "no such mandate" (src/api/not-found.ts) is an answer; any other 404 is an error. */
const noMandate = { notFound: 'mandateByReference' as const, answer: undefined };

/** The mandate by mandate_id (D5): the service's view of status, balance and total_debited. */
function getMandate({ api }: MandateDeps, mandateId: string): Promise<MandateSnapshot | undefined> {
  const lookUp = async () => {
    const res = await api.mandates.list({ mandate_id: mandateId });
    const rec = res.data.records.find((r) => String(r.mandate_id) === mandateId);
    return rec ? snapshot(rec) : undefined;
  };
  return read('look up mandate', lookUp, noMandate);
}

/** The mandate by merchant_ref, our mandateRef (D5): did an unanswered create make the mandate? */
function findMandateByRef({ api }: MandateDeps, mandateRef: string): Promise<MandateSnapshot | undefined> {
  const lookUp = async () => {
    const res = await api.mandates.list({ merchant_ref: mandateRef });
    const rec = res.data.records.find((r) => r.reference === mandateRef || r.merchant_reference === mandateRef);
    return rec ? snapshot(rec) : undefined;
  };
  return read('look up mandate by reference', lookUp, noMandate);
}

export function createMandateActivities(deps: ActivityDeps) {
  return bindActivities(deps, {
    createMandate,
    validateMandateOtp,
    resendMandateOtp,
    debitMandate,
    cancelMandate,
    getMandate,
    findMandateByRef,
  });
}

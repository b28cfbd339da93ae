// A small model of the service for mandate tests on the time-skipping server: mandates with a
// balance and total_debited (what D5 shows), the debits we send (D3, each reference once), and the
// debits the service makes on its own schedule (`debitsOnItsOwn`), which no D3 of ours names.
// The service's clock is the test server's: an activity's scheduled time (skipped time included).
// Every OTP is accepted; the BVN and OTP handles are taken as given (the claim check is tested in
// mandate-workflow and mandate-e2e).
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { MandateDebitRequest } from '../../src/activities/mandate';
import { applyFakeDebit, cancelFakeMandate, type MandateTestActivities } from './helpers';

const refuse = (type: string, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true });

interface ModelMandate {
  ref: string;
  balance: number;
  total: number;
  status: string;
  /** The service's own debits: each applies once the service's clock passes its time. */
  own: { at: number; amount: number; applied: boolean }[];
}

/** The service's clock: when the running activity was scheduled, on the test server's (skipped) time. */
const serviceNow = (): number => Context.current().info.currentAttemptScheduledTimestampMs;

export function fixedMandateService() {
  /** Every D3 we sent, by reference, in order. */
  const d3: MandateDebitRequest[] = [];
  const applied = new Map<string, number>();
  const mandates = new Map<string, ModelMandate>();
  const counts = { d5: 0 };
  /** Faults: the next D3 answer lost (not applied), the next D3 refused, verify down, D5 down until a service time. */
  const knobs = {
    loseNextDebit: false,
    refuseNextDebit: undefined as string | undefined,
    verifyDown: false,
    d5DownBefore: 0,
    /** D4 answers the mandate in failedMandates with this reason. */
    cancelRefusal: undefined as string | undefined,
  };

  const byRef = (ref: string): [string, ModelMandate] | undefined =>
    [...mandates.entries()].find(([, m]) => m.ref === ref);
  const snapshot = (id: string, m: ModelMandate) => ({
    mandateId: id,
    status: m.status,
    balance: m.balance,
    totalDebited: m.total,
  });

  const activities: MandateTestActivities = {
    async createMandate(input) {
      const id = `MD-${input.mandateRef}`;
      mandates.set(id, { ref: input.mandateRef, balance: input.amount, total: 0, status: 'initiated', own: [] });
      return { mandateId: id, sessionToken: `session-${id}` };
    },
    async validateMandateOtp(token) {
      mandates.get(token.replace(/^session-/, ''))!.status = 'approved';
      return { mandateReferenceNumber: 'MRN1' };
    },
    async resendMandateOtp() {},
    async debitMandate(req) {
      d3.push(req);
      const m = mandates.get(req.mandateId)!;
      if (m.status !== 'approved') throw refuse('BadRequest', `debit ${req.reference}: Mandate is not ready for debit`);
      if (knobs.loseNextDebit) {
        knobs.loseNextDebit = false;
        throw refuse('OutcomeUnknown', `debit ${req.reference}: headers timeout`);
      }
      const refusal = knobs.refuseNextDebit;
      knobs.refuseNextDebit = undefined;
      if (refusal) throw refuse('BadRequest', `debit ${req.reference}: ${refusal}`);
      applyFakeDebit(m, req, applied);
      return { status: 'success', serviceStatus: 'success', amount: req.amount };
    },
    async lookupTransaction(ref) {
      if (knobs.verifyDown) throw refuse('ServiceError', 'verify transaction: 503');
      const amount = applied.get(ref);
      return amount !== undefined ? { found: true, status: 'Success', amount } : { found: false };
    },
    async cancelMandate(id) {
      return cancelFakeMandate(mandates.get(id)!, knobs.cancelRefusal);
    },
    async getMandate(id) {
      counts.d5 += 1;
      const now = serviceNow();
      if (now < knobs.d5DownBefore) throw refuse('ServiceError', 'look up mandate: 503');
      const m = mandates.get(id);
      if (!m) return undefined;
      for (const d of m.own)
        if (!d.applied && d.at <= now && m.status === 'approved' && d.amount <= m.balance) {
          d.applied = true;
          m.balance -= d.amount;
          m.total += d.amount;
        }
      return snapshot(id, m);
    },
    async findMandateByRef(ref) {
      const found = byRef(ref);
      return found ? snapshot(...found) : undefined;
    },
  };

  /** The service will debit the mandate on its own at these times (no D3 of ours names them). */
  const debitsOnItsOwn = (mandateRef: string, debits: { at: number; amount: number }[]) => {
    byRef(mandateRef)![1].own.push(...debits.map((d) => ({ ...d, applied: false })));
  };
  /** The service's record of a mandate (D5), by our reference. */
  const record = (mandateRef: string) => byRef(mandateRef)?.[1];
  /** The service cancels or rejects the mandate on its side. */
  const endAtService = (mandateRef: string, status: 'cancelled' | 'rejected') => {
    byRef(mandateRef)![1].status = status;
  };

  return { activities, d3, applied, counts, knobs, debitsOnItsOwn, record, endAtService };
}
export type FixedMandateService = ReturnType<typeof fixedMandateService>;

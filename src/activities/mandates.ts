// Mandate activities: D1 create, D2 validate OTP, D6 resend, D3 debit (money-moving), D4
// cancel, D5 lookup. Failures become ApplicationFailures with deliberate types; the debit is
// scheduled with maximumAttempts 1 and, on an unknown outcome, reconciled through D5.
import { ApplicationFailure } from '@temporalio/activity';
import { DependencyFailedError, NotFoundError } from '../api';
import type { ActivityDeps } from './index';
import { toActivityFailure } from './pos';
import type { MandateInput } from '../shared/mandate';

export interface CreatedMandate {
  mandateId: string;
  /** Needed for D2/D6 only; kept out of queries and search attributes. */
  sessionToken: string;
}

export interface MandateSnapshot {
  status: string;
  balance: number;
  totalDebited: number;
}

export function createMandateActivities({ api, logger }: ActivityDeps) {
  return {
    async createMandate(input: MandateInput): Promise<CreatedMandate> {
      try {
        const res = await api.mandates.create({
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
            identity: { type: 'bvn', number: input.customer.bvn },
            firstName: input.customer.firstName,
            lastName: input.customer.lastName,
            address: input.customer.address,
            phone: input.customer.phone,
          },
          ...(input.fixed
            ? { fixedMandateSettings: { frequency: input.fixed.frequency, interval: input.fixed.interval, initial_debit_amount: input.fixed.initialDebitAmount, initial_debit_date: input.fixed.initialDebitDate } }
            : {}),
        } as never);
        const data = res.data as { mandate_id: string; session_token: string };
        logger.info({ mandateRef: input.mandateRef, mandateId: data.mandate_id }, 'mandate created');
        return { mandateId: data.mandate_id, sessionToken: data.session_token };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'create mandate' });
      }
    },

    async validateMandateOtp(sessionToken: string, otp: string): Promise<{ mandateReferenceNumber?: string }> {
      try {
        const res = await api.mandates.validateOtp({ session_token: sessionToken, otp } as never);
        return { mandateReferenceNumber: (res.data as { mandate_reference_number?: string }).mandate_reference_number };
      } catch (err) {
        if (err instanceof DependencyFailedError) {
          throw ApplicationFailure.create({ type: 'SessionExpired', message: 'Invalid or expired session.', nonRetryable: true });
        }
        throw toActivityFailure(err, { moneyMoving: false, what: 'validate mandate OTP' });
      }
    },

    async resendMandateOtp(sessionToken: string): Promise<void> {
      try {
        await api.mandates.resendOtp({ session_token: sessionToken } as never);
      } catch (err) {
        if (err instanceof DependencyFailedError) throw ApplicationFailure.create({ type: 'SessionExpired', message: 'Invalid or expired session.', nonRetryable: true });
        throw toActivityFailure(err, { moneyMoving: false, what: 'resend mandate OTP' });
      }
    },

    /** Money-moving: one attempt; the workflow reconciles an unknown outcome through D5. */
    async debitMandate(req: { mandateId: string; amount: number; reference: string; narration: string; customerEmail: string }): Promise<void> {
      try {
        await api.mandates.debit({ amount: req.amount, mandate_id: req.mandateId, transaction_reference: req.reference, narration: req.narration, customer_email: req.customerEmail } as never);
        logger.info({ reference: req.reference, amount: req.amount }, 'mandate debited');
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: `debit ${req.reference}` });
      }
    },

    async cancelMandate(mandateId: string): Promise<{ cancelled: boolean; alreadyCancelled: boolean; reason?: string }> {
      try {
        const res = await api.mandates.cancel({ mandateIds: [mandateId] } as never);
        const data = res.data as { canceledMandates: string[]; failedMandates: { mandateId: string; failureReason: string }[] };
        if (data.canceledMandates.includes(mandateId)) return { cancelled: true, alreadyCancelled: false };
        const failed = data.failedMandates.find((f) => f.mandateId === mandateId);
        if (failed && /already cancelled/i.test(failed.failureReason)) return { cancelled: true, alreadyCancelled: true };
        return { cancelled: false, alreadyCancelled: false, reason: failed?.failureReason ?? 'not reported by the service' };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: false, what: 'cancel mandate' });
      }
    },

    /** D5 by mandate_id: the service's view of balance and total_debited. */
    async getMandate(mandateId: string): Promise<MandateSnapshot | undefined> {
      try {
        const res = await api.mandates.list({ mandate_id: mandateId } as never);
        const rec = (res.data as { records: { status: string; balance: number; total_debited: number }[] }).records[0];
        return rec ? { status: rec.status, balance: rec.balance, totalDebited: rec.total_debited } : undefined;
      } catch (err) {
        if (err instanceof NotFoundError) return undefined;
        throw toActivityFailure(err, { moneyMoving: false, what: 'look up mandate' });
      }
    },
  };
}

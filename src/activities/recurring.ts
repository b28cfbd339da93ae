// Activities of the recurring flow: A4 charges the token a first payment left, A5 cancels it.
//
// Money-moving calls are proxied with one attempt and every failure is typed (toActivityFailure):
// a refusal (BadRequest, InvalidRequest, Unauthorized, NotFound) proves nothing happened; anything
// else is an unknown outcome that the workflow settles by verifying the reference first
// (lookupTransaction, ./payment-common.ts).
// A5 (cancel) is idempotent and may be retried by its retry policy.
import { BadRequestError } from '../api';
import type { ActivityDeps } from './deps';
import { heartbeatWhile } from './heartbeat';
import { toActivityFailure } from './failures';

export function createRecurringActivities({ api, logger }: ActivityDeps) {
  return {
    /** A4. Money-moving: one attempt; the workflow verifies the reference first and after an unknown outcome. */
    async chargeToken(req: {
      tokenId: string;
      amount: number;
      reference: string;
    }): Promise<{ transactionStatus?: string }> {
      try {
        const { data } = await heartbeatWhile(
          api.tokens.charge({ amount: req.amount, token_id: req.tokenId, transaction_ref: req.reference }),
        );
        logger.info({ transactionRef: req.reference, status: data.transaction_status }, 'token charge answered');
        return { transactionStatus: data.transaction_status ?? undefined };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: `charge token for ${req.reference}` });
      }
    },

    /** A5. true when cancelled now, false when the service refused ('Recurring Payment was not cancelled': already cancelled or unknown). */
    async cancelToken(tokenId: string): Promise<boolean> {
      try {
        const { data } = await api.tokens.cancel({ auth_code: [tokenId] });
        return data.auth_code.includes(tokenId);
      } catch (err) {
        if (err instanceof BadRequestError) return false;
        throw toActivityFailure(err, { moneyMoving: false, what: 'cancel token' });
      }
    },
  };
}

export type RecurringActivities = ReturnType<typeof createRecurringActivities>;

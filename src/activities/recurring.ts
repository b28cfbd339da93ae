// Activities of the recurring flow: charge the token a first payment left, and cancel it.
//
// Money-moving calls are made once, their failures typed for the workflow (moneyCall, ./calls.ts).
// The cancel is idempotent and may be retried by its retry policy. Any 400 from it is the
// service's refusal, whatever its message (askTokenCancel: one home, also used by the
// cancel-token starter).
import { BadRequestError, type PaymentsClient } from '../api';
import type { TokenCancelAnswer } from '../shared/recurring';
import type { ActivityDeps } from './deps';
import { bindActivities } from './bind';
import { heartbeatWhile } from './heartbeat';
import { moneyCall, read } from './calls';

/** Charges the card token (A4). Money-moving: one attempt; the workflow verifies the reference first and after an unknown outcome. */
function chargeToken(
  { api, logger }: ActivityDeps,
  req: { tokenId: string; amount: number; reference: string },
): Promise<{ transactionStatus?: string }> {
  return moneyCall(`charge token for ${req.reference}`, async () => {
    const charge = { amount: req.amount, token_id: req.tokenId, transaction_ref: req.reference };
    const { data } = await heartbeatWhile(api.tokens.charge(charge));
    logger.info({ transactionRef: req.reference, status: data.transaction_status }, 'token charge answered');
    return { transactionStatus: data.transaction_status ?? undefined };
  });
}

/**
 * The token cancel (A5) as plans before the patch `recurring-a5-unknown-parks` ask it: true when cancelled now,
 * false on any 400 (refused). Kept for the histories of those plans.
 */
async function cancelToken(deps: ActivityDeps, tokenId: string): Promise<boolean> {
  return (await cancelTokenAnswered(deps, tokenId)).cancelled;
}

/** The token cancel (A5) with the refusal's message: cancelled now, or refused (any 400); any other failure is typed and retried. */
function cancelTokenAnswered({ api }: ActivityDeps, tokenId: string): Promise<TokenCancelAnswer> {
  return read('cancel token', () => askTokenCancel(api, tokenId));
}

export function createRecurringActivities(deps: ActivityDeps) {
  return bindActivities(deps, { chargeToken, cancelToken, cancelTokenAnswered });
}

/**
 * Asks the service once to cancel the token (A5): cancelled when the answer lists the token; refused on any 400 (the service's message
 * kept) or a 200 that does not list it. Anything else (5xx, timeouts, a lost answer) is thrown: the
 * token's state is then unknown, and the cancel may be asked again (it is idempotent).
 */
export async function askTokenCancel(api: PaymentsClient, tokenId: string): Promise<TokenCancelAnswer> {
  try {
    const { data } = await api.tokens.cancel({ auth_code: [tokenId] });
    if (data.auth_code.includes(tokenId)) return { cancelled: true };
    return { cancelled: false, refusal: 'the cancel answered without this token among the cancelled ones' };
  } catch (err) {
    if (err instanceof BadRequestError) return { cancelled: false, refusal: err.serviceMessage || err.message };
    throw err;
  }
}

export type RecurringActivities = ReturnType<typeof createRecurringActivities>;

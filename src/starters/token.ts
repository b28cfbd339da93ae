// Cancelling a saved card token (A5) outside a running plan: a token a plain checkout saved, or one
// a Schedule charges after a plan moved to it. One idempotent call that moves no money, so it is a
// starter calling the service directly with bounded retries, not a flow (docs/choices.md).
// The rules are a plan's (src/workflows/recurring.ts, tryCancelToken): any 400 is the service's
// refusal (the token was not cancelled by this call); a 5xx, a timeout or a lost answer is asked
// again for `retryForMs`, then the outcome is unknown: the token may still be live.
import { setTimeout as pause } from 'node:timers/promises';
import { z } from 'zod';
import { askTokenCancel } from '../activities/recurring';
import { isPaymentsApiError } from '../api/errors';
import type { StarterContext } from './connect';
import { ms, parsePayment } from './payment-common';

/** How the cancel is asked again after a failure that may be retried: pauses doubling up to maxPauseMs. */
export const TOKEN_CANCEL_RETRY = {
  /** How long the cancel is asked again before the outcome is reported unknown. */
  forMs: 60_000,
  firstPauseMs: 1_000,
  maxPauseMs: 10_000,
} as const;

export const tokenCancelInputSchema = z.object({
  tokenId: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be 1-100 letters, digits, _ . or -'),
  retryForMs: ms.optional(),
});
export type TokenCancelInput = z.input<typeof tokenCancelInputSchema>;

/** What the cancel came to: cancelled now; refused (any 400, the service's message); unknown (it kept failing). */
export type TokenCancelOutcome =
  | { status: 'cancelled'; tokenId: string; attempts: number }
  | { status: 'refused'; tokenId: string; attempts: number; message: string }
  | { status: 'unknown'; tokenId: string; attempts: number; message: string };

/**
 * Cancels a saved card token (A5). A failure that may not be retried (a 401 or 403: the key,
 * the configuration) is thrown at once; one that may (5xx, 429, timeouts, lost answers: the cancel is
 * idempotent) is asked again until `retryForMs` has passed, then answered `unknown`.
 */
export async function cancelSavedToken(
  ctx: Pick<StarterContext, 'api'>,
  raw: TokenCancelInput,
): Promise<TokenCancelOutcome> {
  const { tokenId, retryForMs = TOKEN_CANCEL_RETRY.forMs } = parsePayment(tokenCancelInputSchema, raw);
  const giveUpAt = Date.now() + retryForMs;
  let wait: number = TOKEN_CANCEL_RETRY.firstPauseMs;
  for (let attempts = 1; ; attempts += 1) {
    try {
      const answer = await askTokenCancel(ctx.api, tokenId);
      return answer.cancelled
        ? { status: 'cancelled', tokenId, attempts }
        : { status: 'refused', tokenId, attempts, message: answer.refusal };
    } catch (err) {
      if (!isPaymentsApiError(err) || !err.retrySafe) throw err;
      if (Date.now() + wait > giveUpAt) return { status: 'unknown', tokenId, attempts, message: err.message };
    }
    await pause(wait);
    wait = Math.min(wait * 2, TOKEN_CANCEL_RETRY.maxPauseMs);
  }
}

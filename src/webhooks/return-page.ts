// GET /payments/return (E-3), where the payer's browser lands: a payment's state for a signed,
// unexpired link (src/config/return-links.ts), else a neutral page; rate-limited per client address.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { verifyReturnLink } from '../config/return-links';
import { cardPaymentStateQuery } from '../shared/card-payment';
import { checkoutStateQuery } from '../shared/checkout';
import { directPaymentStateQuery } from '../shared/payment-common';
import { tokenChargeStateQuery } from '../shared/recurring';
import { RateLimiter } from '../http/rate-limit';
import { paymentFlowRun } from '../temporal/payment-run';

/** The state query of each payment flow type (its answer has `status`). */
const PAYMENT_STATE_QUERIES: Record<string, string> = {
  cardPaymentWorkflow: cardPaymentStateQuery.name,
  checkoutWorkflow: checkoutStateQuery.name,
  bankPaymentWorkflow: directPaymentStateQuery.name,
  ussdPaymentWorkflow: directPaymentStateQuery.name,
  tokenChargeWorkflow: tokenChargeStateQuery.name,
};

const NEUTRAL_PAGE =
  '<!doctype html><html><head><title>Payment</title></head><body><h1>Thank you</h1><p id="state">Your payment is being confirmed. The merchant will let you know the result.</p></body></html>';

export interface ReturnPageOptions {
  /** RETURN_LINK_KEY: a state is shown only for a link signed with it. Unset: always the neutral page. */
  returnLinks?: { key: string };
  /** Requests per client address and window (default 30 per minute). */
  rateLimit?: { limit: number; windowMs: number };
}

export class ReturnPage {
  private readonly limiter: RateLimiter;

  constructor(
    private readonly client: Client,
    private readonly opts: ReturnPageOptions,
  ) {
    this.limiter = new RateLimiter(opts.rateLimit ?? { limit: 30 });
  }

  async answer(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const address = req.socket.remoteAddress ?? 'unknown';
    const retryAfterS = this.limiter.take(address);
    if (retryAfterS > 0) {
      res.writeHead(429, { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': String(retryAfterS) });
      res.end('Too many requests');
      return;
    }
    // Only a signed, unexpired link shows a state; a bare or guessed reference gets the neutral page.
    const link = this.opts.returnLinks
      ? verifyReturnLink(url.searchParams, this.opts.returnLinks.key)
      : { refused: 'unsigned' as const };
    if (!('reference' in link)) return htmlPage(res, NEUTRAL_PAGE);
    const ref = escapeHtml(link.reference);
    const state = escapeHtml(await this.paymentState(link.reference));
    htmlPage(
      res,
      `<!doctype html><html><head><title>Payment ${ref}</title></head><body><h1>Payment ${ref}</h1><p id="state">Status: ${state}</p></body></html>`,
    );
  }

  /** The flow's own run (not a holder a late webhook started after it closed): its step, or how it ended. */
  private async paymentState(reference: string): Promise<string> {
    try {
      const { handle } = await paymentFlowRun(this.client, reference);
      const description = await handle.describe();
      const status = description.searchAttributes.PaymentStatus?.[0];
      const state = typeof status === 'string' ? status : description.status.name.toLowerCase();
      // A running payment writes PaymentStatus only at its start and end: its query has the step it is at.
      const query = PAYMENT_STATE_QUERIES[description.type];
      if (description.status.name !== 'RUNNING' || !query) return state;
      return await handle
        .query<{ status: string }>(query)
        .then((s) => s.status)
        .catch(() => state);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      return 'not found';
    }
  }
}

function htmlPage(res: ServerResponse, html: string): void {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(html);
}

function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

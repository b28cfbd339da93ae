// Tokenised cards (A3-A5): a recurring checkout paid by card yields a token (the payment webhook's
// payment_information.token_id); it can be charged (A4) and cancelled (A5).
import { z } from 'zod';
import { addRoutes, fail, ok, type Reply, type RequestContext, type Router } from './http';
import { amountsFor, chargeResult, type PaymentStore } from './payments';
import { identifier, identifiers, rule, type RouteFields } from './validation';

// Charge with token: a negative amount is the spec's own message; any other non-integer is ours.
const CHARGE_TOKEN_FIELDS: RouteFields = {
  body: z.object({
    amount: rule(
      (v) => !((typeof v === 'number' && v < 0) || (typeof v === 'string' && /^-\d/.test(v))),
      'cannot be < 0',
    )
      .pipe(
        rule(
          (v) => Number.isSafeInteger(Number(v)) && v !== '' && typeof v !== 'boolean',
          'must be an integer in the lowest currency unit',
        ),
      )
      .pipe(rule((v) => Number(v) !== 0, 'must be greater than 0')),
    token_id: identifier(),
    transaction_ref: identifier().optional().or(z.literal('')),
  }),
};
const CANCEL_TOKENS_FIELDS: RouteFields = {
  body: z.object({
    auth_code: identifiers('must be a token id or a list of token ids'),
  }),
};

/** Charges a card by its token (A4). */
function chargeToken(store: PaymentStore, { body, secretKey }: RequestContext): Reply {
  const amount = Number(body.amount);
  const tokenId = String(body.token_id);
  const token = store.tokens.get(tokenId);
  if (!token) return fail(400, 'Invalid token_id');
  if (!token.active) return fail(400, 'Token has been cancelled: Recurring Payment is no longer active');
  const ref = store.refFor(body.transaction_ref);
  // Case-sensitive, unique across every transaction of the merchant: a repeat never charges twice.
  if (store.byRef.has(ref)) return fail(400, 'Duplicate transaction reference');
  const p = store.create({
    ref,
    origin: 'token',
    type: 'Card',
    ...amountsFor(amount, false),
    currency: token.currency,
    email: token.email,
    customerName: null,
    isRecurring: true,
    key: secretKey,
    card: { pan: token.pan, expiry: token.expiry },
    tokenId,
  });
  store.succeed(p);
  return ok(chargeResult(p, store.clock));
}

/** Cancels tokenised cards (A5): {auth_code: [ids]} (a single id string is accepted too). */
function cancelTokens(store: PaymentStore, { body }: RequestContext): Reply {
  const ids = Array.isArray(body.auth_code) ? body.auth_code.map(String) : [String(body.auth_code)];
  const cancelled = [...new Set(ids)].filter((id) => store.tokens.get(id)?.active);
  if (cancelled.length === 0) return fail(400, 'Recurring Payment was not cancelled');
  for (const id of cancelled) store.tokens.get(id)!.active = false;
  return ok({ auth_code: cancelled });
}

export function registerTokens(router: Router, store: PaymentStore): void {
  addRoutes(router, 'direct', store, [
    ['POST', '/transaction/charge_card', CHARGE_TOKEN_FIELDS, chargeToken],
    ['PATCH', '/transaction/cancel/recurring', CANCEL_TOKENS_FIELDS, cancelTokens],
  ]);
}

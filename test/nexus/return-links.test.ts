// Return URLs of payments started through Nexus (issue #42 §4): a link to our /payments/return is
// signed where the handler holds RETURN_LINK_KEY and refused where it does not (it could not be
// signed, so it would show the payer nothing); in production every return URL must be https. The
// operation's own start function is called with no Temporal behind it: a refusal comes first, and
// anything that passes goes on to start a workflow (which needs a Nexus context, absent here).
// Signing itself is checked end to end in payments-nexus.test.ts. Also: who counts as the same caller.
import { HandlerError } from 'nexus-rpc';
import { isCaller } from '../../src/nexus/caller';
import { paymentsNexusHandler, type PaymentsNexusOptions } from '../../src/nexus/payments-handler';

type StartFn = (ctx: unknown, input: unknown) => Promise<unknown>;
type Op = 'checkoutPayment' | 'cardPayment' | 'recurringPlan';
const KEY = { key: 'k'.repeat(32), ttlSeconds: 600 };

/** What the start did: refused (the HandlerError's message) or went on to start a workflow. */
async function outcome(opts: PaymentsNexusOptions, op: Op, input: unknown): Promise<string> {
  const handlers = (paymentsNexusHandler(opts) as unknown as { handlers: Record<Op, { handler: StartFn }> }).handlers;
  try {
    await handlers[op].handler({}, input);
    return 'started';
  } catch (err) {
    return err instanceof HandlerError ? `refused: ${err.message}` : 'went on to start';
  }
}

const checkout = (callbackUrl?: string) => ({
  transactionRef: `nx-rl-${Date.now()}`,
  amount: 250_000,
  currency: 'NGN',
  email: 'ada@example.com',
  ...(callbackUrl ? { callbackUrl } : {}),
});
const sealedCard = (redirectUrl: string) => ({
  transactionRef: `nx-rl-${Date.now()}`,
  amount: 100_000,
  currency: 'NGN',
  customer: { name: 'Ada Obi', email: 'ada@example.com' },
  card: { handle: `cc_${'a'.repeat(22)}`, bin: '539983', last4: '0000', brand: 'mastercard' },
  redirectUrl,
});
const plan = (callbackUrl: string) => ({
  planRef: `nx-rl-${Date.now()}`,
  amount: 150_000,
  currency: 'NGN',
  email: 'ada@example.com',
  intervalMs: 60_000,
  checkout: { callbackUrl },
});

const OUR_RETURN = 'https://pay.example.com/payments/return';
const NO_KEY = /a link to \/payments\/return must be signed and this worker holds no RETURN_LINK_KEY/;

describe('return URLs of payments started through Nexus', () => {
  it('without RETURN_LINK_KEY, a link to /payments/return is refused, naming the field; a page of the merchant passes', async () => {
    expect(await outcome({ production: false }, 'checkoutPayment', checkout(OUR_RETURN))).toMatch(
      new RegExp(`^refused: callbackUrl: ${NO_KEY.source}`),
    );
    expect(await outcome({ production: false }, 'cardPayment', sealedCard(OUR_RETURN))).toMatch(
      new RegExp(`^refused: redirectUrl: ${NO_KEY.source}`),
    );
    expect(await outcome({ production: false }, 'recurringPlan', plan(OUR_RETURN))).toMatch(
      new RegExp(`^refused: checkout\\.callbackUrl: ${NO_KEY.source}`),
    );
    expect(await outcome({ production: false }, 'checkoutPayment', checkout('https://shop.example.com/done'))).toBe(
      'went on to start',
    );
    expect(await outcome({ production: false }, 'checkoutPayment', checkout())).toBe('went on to start');
  });

  it('with RETURN_LINK_KEY, a link to /payments/return goes on (to be signed)', async () => {
    expect(await outcome({ production: false, returnLinks: KEY }, 'checkoutPayment', checkout(OUR_RETURN))).toBe(
      'went on to start',
    );
    expect(await outcome({ production: true, returnLinks: KEY }, 'cardPayment', sealedCard(OUR_RETURN))).toBe(
      'went on to start',
    );
  });

  it('in production a plain-http return URL is refused, naming the field; outside production it passes', async () => {
    const http = 'http://shop.example.com/done';
    expect(await outcome({ production: true, returnLinks: KEY }, 'checkoutPayment', checkout(http))).toBe(
      'refused: callbackUrl: must be an https:// URL in production',
    );
    expect(await outcome({ production: true, returnLinks: KEY }, 'cardPayment', sealedCard(http))).toBe(
      'refused: redirectUrl: must be an https:// URL in production',
    );
    expect(await outcome({ production: true, returnLinks: KEY }, 'recurringPlan', plan(http))).toBe(
      'refused: checkout.callbackUrl: must be an https:// URL in production',
    );
    expect(await outcome({ production: false, returnLinks: KEY }, 'checkoutPayment', checkout(http))).toBe(
      'went on to start',
    );
  });
});

describe('the caller a flow records', () => {
  const a = { endpoint: 'payments-merchant-a', namespace: 'merchant-a' };
  it('is the same caller only through the same endpoint, and the same namespace where both are known', () => {
    expect(isCaller(a, a)).toBe(true);
    expect(isCaller(a, { endpoint: a.endpoint })).toBe(true); // a cancel request carries no link
    expect(isCaller({ endpoint: a.endpoint }, a)).toBe(true);
    expect(isCaller(a, { endpoint: 'payments-merchant-b', namespace: 'merchant-a' })).toBe(false);
    expect(isCaller(a, { endpoint: a.endpoint, namespace: 'merchant-b' })).toBe(false);
    expect(isCaller(undefined, a)).toBe(false); // started by the starters: no Nexus caller owns it
    expect(isCaller('payments-merchant-a', a)).toBe(false);
  });
});

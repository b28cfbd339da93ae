// Return URLs of payments started through Nexus (issue #42 §4): a link to our /payments/return is
// signed where the handler holds RETURN_LINK_KEY and refused where it does not (it could not be
// signed, so it would show the payer nothing); in production every return URL must be https. The
// operation's own start function is called with no Temporal behind it: a refusal comes first, and
// anything that passes goes on to start a workflow (which needs a Nexus context, absent here).
// Signing itself is checked end to end in payments-nexus.test.ts. Also: who counts as the same caller,
// and a cancel or a step from another caller, run in a handler context over a fake Temporal (a forged
// operation token cannot be sent from a caller's workflow, so the end-to-end test cannot try it).
import { WorkflowNotFoundError } from '@temporalio/client';
import { asyncLocalStorage } from '@temporalio/nexus/lib/context';
import {
  generateActivityOperationToken,
  generateUpdateWorkflowOperationToken,
  generateWorkflowRunOperationToken,
} from '@temporalio/nexus/lib/token';
import { HandlerError } from 'nexus-rpc';
import { isCaller, NEXUS_CALLER_MEMO } from '../../src/nexus/caller';
import { paymentsNexusHandler, type PaymentsNexusOptions } from '../../src/nexus/payments-handler';

type StartFn = (ctx: unknown, input: unknown) => Promise<unknown>;
type Op = 'checkoutPayment' | 'cardPayment' | 'recurringPlan';
const KEY = { key: 'k'.repeat(32), ttlSeconds: 600 };

/** What the start did: refused (the HandlerError's message) or went on to start a workflow. */
async function outcome(opts: PaymentsNexusOptions, op: Op, input: unknown): Promise<string> {
  const handlers = (paymentsNexusHandler(opts) as unknown as { handlers: Record<Op, { start: StartFn }> }).handlers;
  try {
    await handlers[op].start({}, input);
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

describe('a step or a cancel from a caller that did not start the flow', () => {
  const ours = { endpoint: 'payments-merchant-a', namespace: 'merchant-a' };
  /** Flows by workflow id, each with the caller its memo records; what was cancelled or updated. */
  function fakeTemporal(flows: Record<string, unknown>) {
    const touched: string[] = [];
    const handle = (id: string) => ({
      describe: async () => {
        if (!(id in flows)) throw new WorkflowNotFoundError('workflow not found', id, undefined);
        return { memo: flows[id] === undefined ? {} : { [NEXUS_CALLER_MEMO]: flows[id] } };
      },
      cancel: async () => void touched.push(`cancel ${id}`),
      query: async () => {
        touched.push(`query ${id}`);
        return { status: 'approved' };
      },
    });
    return { client: { workflow: { getHandle: handle } }, touched };
  }
  /** Runs `fn` as the handler would, for a request that came through `endpoint`. */
  const asRequestThrough = <T>(endpoint: string, client: unknown, fn: () => Promise<T>) =>
    asyncLocalStorage.run({ endpoint, client, namespace: 'default', taskQueue: 'payments' } as never, fn) as Promise<T>;
  const handlers = () =>
    (
      paymentsNexusHandler({ production: false }) as unknown as {
        handlers: Record<string, { cancel: (ctx: unknown, token: string) => Promise<void> }> &
          Record<'mandateState', (ctx: unknown, input: unknown) => Promise<unknown>>;
      }
    ).handlers;
  const refusal = async (p: Promise<unknown>) => {
    try {
      await p;
      return 'done';
    } catch (err) {
      return err instanceof HandlerError ? `${err.type}: ${err.message}` : String(err);
    }
  };
  const token = (wid: string) => generateWorkflowRunOperationToken('default', wid);

  it('cancelling a start operation: only the caller that started the flow cancels it; another gets the unknown answer', async () => {
    const { client, touched } = fakeTemporal({ 'payment-a': ours, 'payment-s': undefined });
    const cancel = (endpoint: string, wid: string) =>
      asRequestThrough(endpoint, client, () => handlers().vend.cancel({ headers: {} }, token(wid)));
    const unknown = await refusal(cancel('payments-merchant-b', 'payment-none'));
    expect(unknown).toBe('BAD_REQUEST: token: no flow by this reference was started through this endpoint');
    expect(await refusal(cancel('payments-merchant-b', 'payment-a'))).toBe(unknown);
    expect(await refusal(cancel(ours.endpoint, 'payment-s'))).toBe(unknown); // started by the starters
    expect(touched).toEqual([]);
    expect(await refusal(cancel(ours.endpoint, 'payment-a'))).toBe('done');
    expect(touched).toEqual(['cancel payment-a']);
  });

  it("a cancel reads the workflow id from the SDK's own token; a token that names no workflow run of ours cancels nothing", async () => {
    const { client, touched } = fakeTemporal({ 'payment-a': ours });
    const cancelWith = (t: string) =>
      refusal(asRequestThrough(ours.endpoint, client, () => handlers().vend.cancel({ headers: {} }, t)));
    const unknown = 'BAD_REQUEST: token: no flow by this reference was started through this endpoint';
    // Tokens the SDK writes for an activity or an Update, even one naming our flow's id: we never answer with them.
    expect(await cancelWith(generateActivityOperationToken('default', 'payment-a', 'run-1'))).toBe(unknown);
    expect(await cancelWith(generateUpdateWorkflowOperationToken('default', 'payment-a', 'run-1', 'u-1'))).toBe(
      unknown,
    );
    // A token that is not one at all is a bad request, and reaches no flow.
    expect(await cancelWith('not a token')).toBe('BAD_REQUEST: invalid operation token');
    expect(await cancelWith(Buffer.from('{"t":1,"ns":"default"}').toString('base64url'))).toBe(
      'BAD_REQUEST: invalid workflow run operation token',
    );
    expect(touched).toEqual([]);
    expect(await cancelWith(generateWorkflowRunOperationToken('default', 'payment-a'))).toBe('done');
    expect(touched).toEqual(['cancel payment-a']);
  });

  it('a step names the same refusal for an unknown reference and for a flow of another namespace on the same endpoint', async () => {
    const { client, touched } = fakeTemporal({ 'mandate-MA': ours });
    const state = (ref: string, namespace: string) =>
      asRequestThrough(ours.endpoint, client, () =>
        handlers().mandateState(
          {
            headers: {},
            inboundLinks: [
              {
                url: new URL(
                  `temporal:///namespaces/${namespace}/workflows/w/r/history?referenceType=EventReference&eventID=1&eventType=NexusOperationScheduled`,
                ),
                type: 'temporal.api.common.v1.Link.WorkflowEvent',
              },
            ],
          },
          { mandateRef: ref },
        ),
      );
    const unknown = await refusal(state('MNONE', 'merchant-a'));
    expect(unknown).toBe('BAD_REQUEST: mandateRef: no mandate by this reference was started through this endpoint');
    expect(await refusal(state('MA', 'merchant-b'))).toBe(unknown);
    expect(touched).toEqual([]);
  });
});

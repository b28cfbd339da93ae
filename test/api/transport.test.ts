// Transport and error semantics against a real HTTP server: headers, request ids, timeouts,
// connection failures before and after sending, 5xx, non-JSON bodies, envelopes, aborts.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { MockAgent } from 'undici';
import {
  AuthenticationError,
  ConnectionError,
  PaymentsApiError,
  PaymentsClient,
  RequestAbortedError,
  RequestValidationError,
  ResponseValidationError,
  ServerError,
  TimeoutError,
  BadRequestError,
  RateLimitError,
} from '../../src/api';
import { clientFor, ok, refused, rejectionOf, TEST_KEY, useFakeService } from './helpers/fake-service';
import { posTerminalSale } from './helpers/requests';
import { eventually } from '../support/polling';

const chargeCard = {
  transaction_reference: 'ORD-0001',
  amount: 10_000,
  customer: { name: 'Ada Obi', email: 'ada@example.com' },
  card: { number: '5555555555554444', cvv: '123', expiry_month: '09', expiry_year: '29' },
};
const stepResult = {
  amount: 10000,
  transaction_ref: 'ORD-0001',
  currency: 'NGN',
  transaction_type: 'Card',
  gateway_ref: 'GW-1',
  merchant_amount: 9850,
  transaction_status: 'ValidatePin',
  message: 'Charge attempted',
};

const fake = useFakeService();

describe('request shape', () => {
  it('sends Bearer auth, JSON, a generated x-request-id, and returns the envelope', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', ok(stepResult, 'success'));
    const res = await fake.client.direct.chargeCard(chargeCard);
    const req = fake.svc.last();
    expect(req.method).toBe('POST');
    expect(req.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers.accept).toBe('application/json');
    expect(req.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res).toEqual({
      data: stepResult,
      message: 'success',
      status: 200,
      bodyStatus: 200,
      success: true,
      requestId: req.headers['x-request-id'],
      clientRequestId: req.headers['x-request-id'],
      operation: 'direct.chargeCard',
    });
  });

  it("reads the server's x-request-id back and accepts a caller-supplied one", async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', {
      ...ok(stepResult),
      headers: { 'x-request-id': 'srv-123' },
    });
    const res = await fake.client.direct.chargeCard(chargeCard, { requestId: 'activity-42' });
    expect(fake.svc.last().headers['x-request-id']).toBe('activity-42');
    expect(res.requestId).toBe('srv-123');
    expect(res.clientRequestId).toBe('activity-42');
  });

  it('each call gets its own request id', async () => {
    fake.svc.on('GET', '/transaction/verify/R1', ok({ transaction_ref: 'R1', transaction_status: 'Success' }));
    await fake.client.transactions.verify({ transaction_ref: 'R1' });
    await fake.client.transactions.verify({ transaction_ref: 'R1' });
    expect(fake.svc.requests[0].headers['x-request-id']).not.toBe(fake.svc.requests[1].headers['x-request-id']);
  });

  it('keeps a path prefix of the base URL', async () => {
    const prefixed = new PaymentsClient({ baseUrl: `${fake.svc.url}/api/`, secretKey: TEST_KEY });
    fake.svc.on('GET', '/api/transaction/verify/R1', ok({ transaction_ref: 'R1', transaction_status: 'Pending' }));
    await expect(prefixed.transactions.verify({ transaction_ref: 'R1' })).resolves.toMatchObject({
      data: { transaction_status: 'Pending' },
    });
    await prefixed.close();
  });

  it('validates before any byte is sent', async () => {
    const err = await rejectionOf(fake.client.direct.chargeCard({ ...chargeCard, amount: 100.5 }));
    expect(err).toBeInstanceOf(RequestValidationError);
    expect(err).toBeInstanceOf(PaymentsApiError);
    expect(err).toMatchObject({
      operation: 'direct.chargeCard',
      requestSent: false,
      retrySafe: false,
      outcomeUnknown: false,
      status: undefined,
    });
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'amount', message: expect.stringMatching(/integer in the lowest currency unit.*never rounded/) },
    ]);
    expect(fake.svc.requests).toHaveLength(0);
  });

  it('never puts the request body into an error', async () => {
    const err = await rejectionOf(
      fake.client.direct.chargeCard({ ...chargeCard, card: { ...chargeCard.card, cvv: '12' } }),
    );
    expect(JSON.stringify(err)).not.toContain('5555555555554444');
    expect(err.message).not.toContain('5555555555554444');
    expect(err.message).toContain('card.cvv: must be 3 or 4 digits');
  });
});

describe('timeouts', () => {
  it('a timeout after the request was sent is TimeoutError with outcomeUnknown for a money-moving call', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', 'hang');
    const started = Date.now();
    const err = await rejectionOf(fake.client.direct.chargeCard(chargeCard, { timeoutMs: 300 }));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({
      operation: 'direct.chargeCard',
      requestSent: true,
      outcomeUnknown: true,
      retrySafe: false,
      moneyMoving: true,
      status: undefined,
    });
    expect(fake.svc.requests).toHaveLength(1); // it did reach the service
  });

  it('a timeout on a read is retry-safe and not "unknown"', async () => {
    fake.svc.on('GET', '/transaction/by-ref/M1', 'hang');
    const err = await rejectionOf(fake.client.posTerminal.requery({ merchant_ref: 'M1' }, { timeoutMs: 200 }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ requestSent: true, outcomeUnknown: false, retrySafe: true, moneyMoving: false });
  });

  it('a body that stops half-way times out with outcomeUnknown and keeps the HTTP status', async () => {
    fake.svc.on('POST', '/transaction', 'hang-body');
    const err = await rejectionOf(fake.client.posTerminal.initiate(posTerminalSale(), { timeoutMs: 300 }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({
      operation: 'posTerminal.initiate',
      status: 200,
      outcomeUnknown: true,
      retrySafe: false,
    });
  });

  it('the client-wide timeoutMs applies when no per-call one is given', async () => {
    const quick = clientFor(fake.svc, { timeoutMs: 200 });
    fake.svc.on('POST', '/transaction/mandate/debit', 'hang');
    const err = await rejectionOf(
      quick.mandates.debit({
        amount: 20_000,
        mandate_id: 'm1',
        transaction_reference: 'DD-1',
        narration: 'June',
        customer_email: 'a@b.co',
      }),
    );
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ outcomeUnknown: true, operation: 'mandates.debit' });
    await quick.close();
  });
});

describe('connection failures', () => {
  it('a connection reset after the request was written is ConnectionError with outcomeUnknown', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', 'reset');
    const err = await rejectionOf(fake.client.direct.chargeCard(chargeCard));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({
      requestSent: true,
      outcomeUnknown: true,
      retrySafe: false,
      operation: 'direct.chargeCard',
    });
    expect(fake.svc.requests).toHaveLength(1);
  });

  it('a reset on a read is retry-safe', async () => {
    fake.svc.on('GET', '/virtual-account/merchant/transactions', 'reset');
    const err = await rejectionOf(fake.client.virtualAccounts.merchantTransactions());
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ requestSent: true, outcomeUnknown: false, retrySafe: true });
  });

  it('a refused connection never sent the request: retrySafe, not unknown', async () => {
    const port = await freePort();
    const refused = new PaymentsClient({ baseUrl: `http://127.0.0.1:${port}`, secretKey: TEST_KEY });
    const err = await rejectionOf(refused.direct.chargeCard(chargeCard));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({
      requestSent: false,
      retrySafe: true,
      outcomeUnknown: false,
      code: 'ECONNREFUSED',
      operation: 'direct.chargeCard',
    });
    await refused.close();
  });

  it('a closed client refuses calls without sending', async () => {
    const c = clientFor(fake.svc);
    await c.close();
    const err = await rejectionOf(c.transactions.verify({ transaction_ref: 'R1' }));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ requestSent: false, retrySafe: true });
    expect(fake.svc.requests).toHaveLength(0);
  });
});

describe('aborts', () => {
  it('an already-aborted signal stops the call before sending', async () => {
    const err = await rejectionOf(fake.client.direct.chargeCard(chargeCard, { signal: AbortSignal.abort() }));
    expect(err).toBeInstanceOf(RequestAbortedError);
    expect(err).toMatchObject({ requestSent: false, retrySafe: true, outcomeUnknown: false });
    expect(fake.svc.requests).toHaveLength(0);
  });

  it('an abort after sending leaves the outcome unknown', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', 'hang');
    const ac = new AbortController();
    const p = fake.client.direct.chargeCard(chargeCard, { signal: ac.signal });
    await eventually(() => fake.svc.requests.length === 1, { timeoutMs: 2_000, intervalMs: 10 });
    ac.abort();
    const err = await rejectionOf(p);
    expect(err).toBeInstanceOf(RequestAbortedError);
    expect(err).toMatchObject({ requestSent: true, outcomeUnknown: true, retrySafe: false });
  });
});

describe('HTTP errors', () => {
  it('5xx on a money-moving call: ServerError, outcome unknown', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', { status: 502, raw: '<html>Bad Gateway</html>' });
    const err = await rejectionOf(fake.client.direct.chargeCard(chargeCard));
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({
      status: 502,
      outcomeUnknown: true,
      retrySafe: false,
      body: '<html>Bad Gateway</html>',
      serviceMessage: '',
    });
    expect(err.message).toBe('direct.chargeCard: HTTP 502 Bad Gateway with an empty message');
  });

  it('5xx on a read: ServerError, retry-safe', async () => {
    fake.svc.on('GET', '/transaction/verify/R1', refused(500, 'Internal error'));
    const err = await rejectionOf(fake.client.transactions.verify({ transaction_ref: 'R1' }));
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ status: 500, message: 'Internal error', outcomeUnknown: false, retrySafe: true });
  });

  it('401 with an empty message', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', {
      status: 401,
      body: { success: false, message: '', data: {} },
    });
    const err = await rejectionOf(fake.client.direct.chargeCard(chargeCard));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({
      status: 401,
      serviceMessage: '',
      bodyStatus: undefined,
      retrySafe: false,
      outcomeUnknown: false,
      body: { success: false, message: '', data: {} },
    });
    expect(err.message).toBe('direct.chargeCard: HTTP 401 Unauthorized with an empty message');
  });

  it('429 is retry-safe', async () => {
    fake.svc.on('GET', '/transaction/verify/R1', { status: 429, body: { message: 'slow down' } });
    const err = await rejectionOf(fake.client.transactions.verify({ transaction_ref: 'R1' }));
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ retrySafe: true, outcomeUnknown: false });
  });

  it('a 2xx whose envelope says status 400 / success false is an error, not a result', async () => {
    fake.svc.on('POST', '/transaction/charge_card', {
      status: 200,
      body: { status: '400', success: false, message: 'amount cannot be < 0', data: null },
    });
    const err = await rejectionOf(
      fake.client.tokens.charge({ amount: 100, token_id: 'AUTH_x', transaction_ref: 'T-1' }),
    );
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 200, bodyStatus: 400, message: 'amount cannot be < 0', outcomeUnknown: false });
  });

  it('a 2xx with a body that is not JSON is a ResponseValidationError (unknown for money-moving calls)', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', { status: 200, raw: 'OK' });
    const err = await rejectionOf(fake.client.direct.chargeCard(chargeCard));
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect(err).toMatchObject({ status: 200, outcomeUnknown: true, retrySafe: false, body: 'OK' });
  });

  it('a 2xx whose data breaks the schema: ResponseValidationError naming the field', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', ok({ ...stepResult, amount: 100.5 }));
    const err = await rejectionOf(fake.client.direct.chargeCard(chargeCard));
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect((err as unknown as ResponseValidationError).issues).toEqual([
      { path: 'data.amount', message: expect.stringMatching(/fractional amount is refused/) },
    ]);
    expect(err).toMatchObject({ outcomeUnknown: true, moneyMoving: true });
  });

  it('a 2xx read that breaks the schema is not "unknown"', async () => {
    fake.svc.on('GET', '/transaction/verify/R1', ok({ transaction_ref: 'R1', transaction_status: 'Refunded' }));
    const err = await rejectionOf(fake.client.transactions.verify({ transaction_ref: 'R1' }));
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect(err).toMatchObject({ outcomeUnknown: false, retrySafe: false });
    expect(err.message).toContain('data.transaction_status: must be Success, Failed, Abandoned or Pending');
  });

  it('error toJSON is log-safe and carries the flags', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', { status: 503, body: { message: 'down' } });
    const err = (await rejectionOf(fake.client.direct.chargeCard(chargeCard))) as unknown as PaymentsApiError;
    expect(err.toJSON()).toMatchObject({
      name: 'ServerError',
      operation: 'direct.chargeCard',
      status: 503,
      outcomeUnknown: true,
      retrySafe: false,
    });
    expect(err.toJSON()).not.toHaveProperty('body');
  });
});

describe('injected dispatcher (undici MockAgent)', () => {
  it('uses the injected dispatcher and leaves it open on close()', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    agent
      .get('https://api.example.test')
      .intercept({
        path: '/transaction/verify/ABC',
        method: 'GET',
        headers: { authorization: 'Bearer sandbox_sk_mock' },
      })
      .reply(200, {
        status: 200,
        success: true,
        message: 'Verification successful',
        data: { transaction_ref: 'ABC', transaction_status: 'success', transaction_amount: 5000 },
      });
    const c = new PaymentsClient({
      baseUrl: 'https://api.example.test',
      secretKey: 'sandbox_sk_mock',
      dispatcher: agent,
    });
    const res = await c.transactions.verify({ transaction_ref: 'ABC' });
    expect(res.data).toMatchObject({ transaction_status: 'Success', transaction_amount: 5000 });
    await c.close();
    agent.assertNoPendingInterceptors();
    await agent.close();
  });
});

describe('constructor', () => {
  it('refuses missing options', () => {
    expect(() => new PaymentsClient({ baseUrl: '', secretKey: 'x' })).toThrow(/baseUrl/);
    expect(() => new PaymentsClient({ baseUrl: 'http://x', secretKey: '' })).toThrow(/secretKey/);
    expect(() => new PaymentsClient({ baseUrl: 'ftp://x', secretKey: 'k' })).toThrow(/http/);
    expect(() => new PaymentsClient({ baseUrl: 'http://x', secretKey: 'k', timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

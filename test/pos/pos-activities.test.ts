// Unit tests of the POS activities and the terminal session, with scripted API clients:
// how each client error becomes a typed failure (money-moving ones never retryable), what
// the activities keep from a transaction, and where pin_key can and cannot be seen.
import { inspect } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/activity';
import {
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  NotFoundError,
  RequestValidationError,
  ResponseValidationError,
  ServerError,
  TimeoutError,
  type PaymentsClient,
} from '../../src/api';
import { createPosTerminalActivities } from '../../src/activities/pos-terminal';
import type { ActivityDeps } from '../../src/activities';
import { createLogger } from '../../src/logging/logger';
import {
  POS_SEALED_FIELDS,
  PosTransactionInputSchema,
  type PosInitiateResponse,
  type PosSealedCardData,
  type PosSealedInitiateRequest,
} from '../../src/shared/pos-terminal';
import { ClaimCheckStore, SecretUnavailableError } from '../../src/claim-check/store';
import { SECRET_UNAVAILABLE } from '../../src/shared/claim-check';
import { openPosTerminalSession } from '../../src/starters/pos-terminal';
import { LogCapture, testConfig } from '../support/stack';
import { cardInput } from './helpers';
import { toActivityFailure } from '../../src/activities/failures';
import { FailureTypes } from '../../src/shared/failures';

const init = {
  operation: 'posTerminal.initiate',
  message: 'x',
  retrySafe: false,
  outcomeUnknown: false,
  requestSent: true,
};

describe('client errors → activity failures', () => {
  const cases: [string, Error, boolean, string, boolean][] = [
    // name, error, moneyMoving, expected type, expected nonRetryable
    [
      'validation',
      new RequestValidationError('posTerminal.initiate', [{ path: 'pin_block', message: 'must be 16 hex' }]),
      true,
      FailureTypes.InvalidRequest,
      true,
    ],
    ['400', new BadRequestError({ ...init, status: 400 }), true, FailureTypes.BadRequest, true],
    ['401', new AuthenticationError({ ...init, status: 401 }), false, FailureTypes.Unauthorized, true],
    ['404', new NotFoundError({ ...init, status: 404 }), false, FailureTypes.NotFound, true],
    [
      'timeout after sending (F3)',
      new TimeoutError({ ...init, outcomeUnknown: true }),
      true,
      FailureTypes.OutcomeUnknown,
      true,
    ],
    [
      'reset after sending (F3)',
      new ConnectionError({ ...init, outcomeUnknown: true }),
      true,
      FailureTypes.OutcomeUnknown,
      true,
    ],
    [
      '5xx (F3)',
      new ServerError({ ...init, status: 502, outcomeUnknown: true }),
      true,
      FailureTypes.OutcomeUnknown,
      true,
    ],
    [
      'unreadable 2xx (F3)',
      new ResponseValidationError({ ...init, outcomeUnknown: true, issues: [] }),
      true,
      FailureTypes.OutcomeUnknown,
      true,
    ],
    [
      'refused before sending (F3): still not retried by Temporal',
      new ConnectionError({ ...init, requestSent: false, retrySafe: true }),
      true,
      FailureTypes.Transient,
      true,
    ],
    ['a bug (F3)', new TypeError('boom'), true, FailureTypes.OutcomeUnknown, true],
    ['5xx (F4 read)', new ServerError({ ...init, status: 503, retrySafe: true }), false, FailureTypes.Transient, false],
    [
      'unreadable 2xx (F4 read)',
      new ResponseValidationError({ ...init, issues: [] }),
      false,
      FailureTypes.ServiceError,
      true,
    ],
  ];
  it.each(cases)('%s', (_name, err, moneyMoving, type, nonRetryable) => {
    const f = toActivityFailure(err, { moneyMoving, what: 'op' });
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect({ type: f.type, nonRetryable: f.nonRetryable }).toEqual({ type, nonRetryable });
  });
});

describe('POS terminal activities', () => {
  const capture = new LogCapture();
  const config = testConfig();
  let store: ClaimCheckStore;
  beforeAll(async () => {
    store = await ClaimCheckStore.connect({
      databaseUrl: config.claimCheck.databaseUrl,
      keys: config.claimCheck.keys,
      ttlMs: 60_000,
    });
  });
  afterAll(() => store?.close());
  const deps = (api: unknown): ActivityDeps => ({
    api: api as PaymentsClient,
    logger: createLogger({ destination: capture }),
    config,
    claimCheck: store,
  });

  /** The starter's split: the card read sealed (purpose 'pos-card'), the rest of the F3 request with the handle. */
  async function sealed(
    merchantRef: string,
  ): Promise<{ req: PosSealedInitiateRequest; card: PosSealedCardData; handle: string }> {
    const full = PosTransactionInputSchema.parse(cardInput(merchantRef));
    delete full.options;
    const card = Object.fromEntries(POS_SEALED_FIELDS.map((f) => [f, full[f]])) as PosSealedCardData;
    const handle = await store.seal('pos-card', card);
    const rest = Object.fromEntries(
      Object.entries(full).filter(([k]) => !(POS_SEALED_FIELDS as readonly string[]).includes(k)),
    );
    return {
      req: {
        ...rest,
        card: { handle, bin: card.card_pan.slice(0, 6), last4: card.card_pan.slice(-4) },
      } as PosSealedInitiateRequest,
      card,
      handle,
    };
  }
  const answer = (code: string) => ({
    data: {
      status: code === '00' ? 'success' : 'failed',
      response_code: code,
      amount: 150000,
      merchant_ref: 'M1',
      payment_info: { card_pan: '539983******0008', cardholder_name: 'ADA OBI' },
      rrn: '1',
    },
  });

  it('initiate redeems the sealed card read: the service gets every card field, the record is deleted once it answered; only the masked PAN comes back and no card data is logged', async () => {
    const sent: Record<string, unknown>[] = [];
    const api = {
      posTerminal: {
        initiate: async (req: Record<string, unknown>) => {
          sent.push(req);
          return answer('00');
        },
      },
    };
    const acts = createPosTerminalActivities(deps(api));
    const { req, card, handle } = await sealed('M1');
    const res = (await new MockActivityEnvironment().run(acts.posTerminalInitiateTransaction, req, {
      attempt: 1,
    })) as PosInitiateResponse;
    expect(res.transaction).toEqual(
      expect.objectContaining({ status: 'success', response_code: '00', card_pan_masked: '539983******0008' }),
    );
    expect(JSON.stringify(res)).not.toContain('ADA OBI');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ ...card, merchant_ref: 'M1', terminal_id: 'TERM0001', aid: req.aid });
    expect(sent[0]).not.toHaveProperty('card');
    await expect(store.open(handle, 'pos-card')).rejects.toThrow(SecretUnavailableError);
    for (const secret of [card.card_pan, card.track2, card.chipdata, card.pin_block!])
      expect(capture.text).not.toContain(secret);
  });

  it('initiate keeps the sealed card read after a 96 or a lost answer (a 404 requery may allow a resend), deletes it after a refusal', async () => {
    let next: () => unknown = () => answer('96');
    const api = { posTerminal: { initiate: async () => next() } };
    const acts = createPosTerminalActivities(deps(api));
    const env = new MockActivityEnvironment();

    const s96 = await sealed('M96');
    await env.run(acts.posTerminalInitiateTransaction, s96.req, { attempt: 1 });
    await expect(store.open(s96.handle, 'pos-card')).resolves.toEqual(s96.card);
    await env.run(acts.posDiscardSealedCard, s96.handle);
    await expect(store.open(s96.handle, 'pos-card')).rejects.toThrow(SecretUnavailableError);

    const lost = await sealed('MLOST');
    next = () => {
      throw new TimeoutError({ ...init, message: 'timeout', outcomeUnknown: true });
    };
    await expect(env.run(acts.posTerminalInitiateTransaction, lost.req, { attempt: 1 })).rejects.toMatchObject({
      type: FailureTypes.OutcomeUnknown,
    });
    await expect(store.open(lost.handle, 'pos-card')).resolves.toEqual(lost.card);

    const refused = await sealed('MREF');
    next = () => {
      throw new BadRequestError({ ...init, status: 400, message: 'Duplicate merchant_ref' });
    };
    await expect(env.run(acts.posTerminalInitiateTransaction, refused.req, { attempt: 1 })).rejects.toMatchObject({
      type: FailureTypes.BadRequest,
    });
    await expect(store.open(refused.handle, 'pos-card')).rejects.toThrow(SecretUnavailableError);
  });

  it('initiate with a handle that no longer opens fails SecretUnavailable (non-retryable) and sends nothing', async () => {
    let calls = 0;
    const api = { posTerminal: { initiate: async () => ((calls += 1), answer('00')) } };
    const acts = createPosTerminalActivities(deps(api));
    const { req, handle } = await sealed('MGONE');
    await store.discard(handle);
    await expect(
      new MockActivityEnvironment().run(acts.posTerminalInitiateTransaction, req, { attempt: 1 }),
    ).rejects.toMatchObject({ type: SECRET_UNAVAILABLE, nonRetryable: true });
    expect(calls).toBe(0);
  });

  it('requery: 404 is the answer "not found", other errors are failures', async () => {
    const api = {
      posTerminal: {
        requery: async (req: { merchant_ref: string }) => {
          if (req.merchant_ref === 'gone')
            throw new NotFoundError({
              ...init,
              operation: 'posTerminal.requery',
              status: 404,
              message: 'Transaction not found',
              serviceMessage: 'Transaction not found',
            });
          if (req.merchant_ref === 'down')
            throw new ServerError({ ...init, operation: 'posTerminal.requery', status: 503, retrySafe: true });
          return { data: { status: 'failed', response_code: '51', amount: 1, merchant_ref: req.merchant_ref } };
        },
      },
    };
    const acts = createPosTerminalActivities(deps(api));
    const env = new MockActivityEnvironment();
    await expect(env.run(acts.posTerminalRequeryTransaction, { merchant_ref: 'gone' })).resolves.toEqual({
      found: false,
    });
    await expect(env.run(acts.posTerminalRequeryTransaction, { merchant_ref: 'ok' })).resolves.toMatchObject({
      found: true,
      transaction: { response_code: '51' },
    });
    await expect(env.run(acts.posTerminalRequeryTransaction, { merchant_ref: 'down' })).rejects.toMatchObject({
      type: FailureTypes.Transient,
      nonRetryable: false,
    });
  });

  it('a 404 about a missing route or terminal is not proof of "never received"', async () => {
    const api = {
      posTerminal: {
        requery: async () => {
          throw new NotFoundError({
            ...init,
            operation: 'posTerminal.requery',
            status: 404,
            message: 'Route not found',
            serviceMessage: 'Route not found',
          });
        },
      },
    };
    const acts = createPosTerminalActivities(deps(api));
    await expect(
      new MockActivityEnvironment().run(acts.posTerminalRequeryTransaction, { merchant_ref: 'M1' }),
    ).rejects.toMatchObject({ type: FailureTypes.ServiceError, nonRetryable: true });
  });
});

describe('POS terminal session (F1 + F2 outside Temporal)', () => {
  const PIN_KEY = '0123456789ABCDEF0123456789ABCDEF';
  const api = {
    posTerminal: {
      getConfiguration: async () => ({
        data: { terminal: { terminal_id: 'TID9', serial_no: 'SN1', status: 'active' }, merchant: { name: 'Shop' } },
      }),
      keyExchange: async (req: { refresh: boolean }) => ({
        data: {
          terminal_id: 'TID9',
          pin_key: req.refresh ? 'FEDCBA9876543210FEDCBA9876543210' : PIN_KEY,
          master_key: 'A'.repeat(32),
          working_key: 'B'.repeat(32),
        },
      }),
    },
  };

  it('hands pin_key to the caller only through pinKey(); JSON and inspect never show it', async () => {
    const session = await openPosTerminalSession({ api: api as unknown as PaymentsClient }, { serial_no: 'SN1' });
    expect(session.pinKey()).toBe(PIN_KEY);
    expect(session.terminalId).toBe('TID9');
    const shown = [
      JSON.stringify(session),
      inspect(session, { depth: 10, showHidden: true }),
      String(Object.keys(session)),
      JSON.stringify(Object.entries(session)),
    ];
    for (const s of shown) {
      expect(s).not.toContain(PIN_KEY);
      expect(s).not.toContain('A'.repeat(32)); // master/working keys are dropped altogether
    }
    expect(JSON.parse(JSON.stringify(session))).toEqual({
      serialNo: 'SN1',
      terminalId: 'TID9',
      status: 'active',
      merchant: 'Shop',
      hasPinKey: true,
    });
    await session.refreshKeys();
    expect(session.pinKey()).toBe('FEDCBA9876543210FEDCBA9876543210');
    session.close();
    expect(session.pinKey()).toBe('');
  });
});

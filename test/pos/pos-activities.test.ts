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
import { createPosActivities, toActivityFailure } from '../../src/activities/pos';
import type { ActivityDeps } from '../../src/activities';
import { createLogger } from '../../src/logging/logger';
import { FailureTypes, PosTransactionInputSchema, type PosInitiateResponse } from '../../src/shared/pos';
import { openPosTerminalSession } from '../../src/starters/pos';
import { LogCapture, testConfig } from '../helpers/temporal';
import { cardInput } from './helpers';

const init = { operation: 'posTerminal.initiate', message: 'x', retrySafe: false, outcomeUnknown: false, requestSent: true };

describe('client errors → activity failures', () => {
  const cases: [string, Error, boolean, string, boolean][] = [
    // name, error, moneyMoving, expected type, expected nonRetryable
    ['validation', new RequestValidationError('posTerminal.initiate', [{ path: 'pin_block', message: 'must be 16 hex' }]), true, FailureTypes.InvalidRequest, true],
    ['400', new BadRequestError({ ...init, status: 400 }), true, FailureTypes.BadRequest, true],
    ['401', new AuthenticationError({ ...init, status: 401 }), false, FailureTypes.Unauthorized, true],
    ['404', new NotFoundError({ ...init, status: 404 }), false, FailureTypes.NotFound, true],
    ['timeout after sending (F3)', new TimeoutError({ ...init, outcomeUnknown: true }), true, FailureTypes.OutcomeUnknown, true],
    ['reset after sending (F3)', new ConnectionError({ ...init, outcomeUnknown: true }), true, FailureTypes.OutcomeUnknown, true],
    ['5xx (F3)', new ServerError({ ...init, status: 502, outcomeUnknown: true }), true, FailureTypes.OutcomeUnknown, true],
    ['unreadable 2xx (F3)', new ResponseValidationError({ ...init, outcomeUnknown: true, issues: [] }), true, FailureTypes.OutcomeUnknown, true],
    ['refused before sending (F3): still not retried by Temporal', new ConnectionError({ ...init, requestSent: false, retrySafe: true }), true, FailureTypes.Transient, true],
    ['a bug (F3)', new TypeError('boom'), true, FailureTypes.OutcomeUnknown, true],
    ['5xx (F4 read)', new ServerError({ ...init, status: 503, retrySafe: true }), false, FailureTypes.Transient, false],
    ['unreadable 2xx (F4 read)', new ResponseValidationError({ ...init, issues: [] }), false, FailureTypes.ServiceError, true],
  ];
  it.each(cases)('%s', (_name, err, moneyMoving, type, nonRetryable) => {
    const f = toActivityFailure(err, { moneyMoving, what: 'op' });
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect({ type: f.type, nonRetryable: f.nonRetryable }).toEqual({ type, nonRetryable });
  });
});

describe('POS terminal activities', () => {
  const capture = new LogCapture();
  const deps = (api: unknown): ActivityDeps => ({ api: api as PaymentsClient, logger: createLogger({ destination: capture }), config: testConfig() });

  it('initiate keeps the masked PAN and codes only, logs no card data, and never retries inside', async () => {
    let calls = 0;
    const api = {
      posTerminal: {
        initiate: async () => {
          calls += 1;
          return { data: { status: 'success', response_code: '00', amount: 150000, merchant_ref: 'M1', payment_info: { card_pan: '539983******0008', cardholder_name: 'ADA OBI' }, rrn: '1' } };
        },
      },
    };
    const acts = createPosActivities(deps(api));
    const input = cardInput('M1');
    const req = PosTransactionInputSchema.parse(input);
    delete req.options;
    const res = (await new MockActivityEnvironment().run(acts.posTerminalInitiateTransaction, req, { attempt: 1 })) as PosInitiateResponse;
    expect(res.transaction).toEqual(expect.objectContaining({ status: 'success', response_code: '00', card_pan_masked: '539983******0008' }));
    expect(JSON.stringify(res)).not.toContain('ADA OBI');
    expect(calls).toBe(1);
    for (const secret of [input.card_pan, input.track2, input.chipdata, input.pin_block!]) expect(capture.text).not.toContain(secret);
  });

  it('requery: 404 is the answer "not found", other errors are failures', async () => {
    const api = {
      posTerminal: {
        requery: async (req: { merchant_ref: string }) => {
          if (req.merchant_ref === 'gone') throw new NotFoundError({ ...init, operation: 'posTerminal.requery', status: 404, message: 'Transaction not found' });
          if (req.merchant_ref === 'down') throw new ServerError({ ...init, operation: 'posTerminal.requery', status: 503, retrySafe: true });
          return { data: { status: 'failed', response_code: '51', amount: 1, merchant_ref: req.merchant_ref } };
        },
      },
    };
    const acts = createPosActivities(deps(api));
    const env = new MockActivityEnvironment();
    await expect(env.run(acts.posTerminalRequeryTransaction, { merchant_ref: 'gone' })).resolves.toEqual({ found: false });
    await expect(env.run(acts.posTerminalRequeryTransaction, { merchant_ref: 'ok' })).resolves.toMatchObject({ found: true, transaction: { response_code: '51' } });
    await expect(env.run(acts.posTerminalRequeryTransaction, { merchant_ref: 'down' })).rejects.toMatchObject({ type: FailureTypes.Transient, nonRetryable: false });
  });

  it('a 404 about a missing route or terminal is not proof of "never received"', async () => {
    const api = {
      posTerminal: {
        requery: async () => {
          throw new NotFoundError({ ...init, operation: 'posTerminal.requery', status: 404, message: 'Route not found', serviceMessage: 'Route not found' });
        },
      },
    };
    const acts = createPosActivities(deps(api));
    await expect(new MockActivityEnvironment().run(acts.posTerminalRequeryTransaction, { merchant_ref: 'M1' })).rejects.toMatchObject({ type: FailureTypes.ServiceError, nonRetryable: true });
  });
});

describe('POS terminal session (F1 + F2 outside Temporal)', () => {
  const PIN_KEY = '0123456789ABCDEF0123456789ABCDEF';
  const api = {
    posTerminal: {
      getConfiguration: async () => ({ data: { terminal: { terminal_id: 'TID9', serial_no: 'SN1', status: 'active' }, merchant: { name: 'Shop' } } }),
      keyExchange: async (req: { refresh: boolean }) => ({ data: { terminal_id: 'TID9', pin_key: req.refresh ? 'FEDCBA9876543210FEDCBA9876543210' : PIN_KEY, master_key: 'A'.repeat(32), working_key: 'B'.repeat(32) } }),
    },
  };

  it('hands pin_key to the caller only through pinKey(); JSON and inspect never show it', async () => {
    const session = await openPosTerminalSession(api as unknown as PaymentsClient, { serial_no: 'SN1' });
    expect(session.pinKey()).toBe(PIN_KEY);
    expect(session.terminalId).toBe('TID9');
    const shown = [JSON.stringify(session), inspect(session, { depth: 10, showHidden: true }), String(Object.keys(session)), JSON.stringify(Object.entries(session))];
    for (const s of shown) {
      expect(s).not.toContain(PIN_KEY);
      expect(s).not.toContain('A'.repeat(32)); // master/working keys are dropped altogether
    }
    expect(JSON.parse(JSON.stringify(session))).toEqual({ serialNo: 'SN1', terminalId: 'TID9', status: 'active', merchant: 'Shop', hasPinKey: true });
    await session.refreshKeys();
    expect(session.pinKey()).toBe('FEDCBA9876543210FEDCBA9876543210');
    session.close();
    expect(session.pinKey()).toBe('');
  });
});

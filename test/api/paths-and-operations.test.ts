// Every 'not shown' path can be overridden through the `paths` option; the operation table
// covers every method of the client, and the money-moving set is the one the flows rely on.
import {
  DEFAULT_PATHS,
  MONEY_MOVING_OPERATIONS,
  OPERATIONS,
  OPERATION_NAMES,
  PaymentsClient,
  resolvePaths,
  type ApiPaths,
} from '../../src/api';
import { clientFor, ok, startFakeService, type FakeService } from './helpers/fake-service';

let svc: FakeService;
beforeAll(async () => {
  svc = await startFakeService();
});
afterAll(async () => {
  await svc.close();
});
beforeEach(() => svc.reset());

const overrides: ApiPaths = {
  simulateTransfer: '/alt/simulate-transfer',
  chargeToken: '/alt/charge-token',
  cancelToken: '/alt/cancel-token',
  queryTransactions: '/alt/transactions',
  verifyTransaction: '/alt/verify/{transaction_ref}/status',
  terminalConfig: '/alt/softpos/config',
  keyExchange: '/alt/softpos/keys',
  posTransaction: '/softpos/transaction',
  posRequery: '/softpos/transaction/by-ref/{merchant_ref}',
};

const posTxn = { amount: '100', status: 'success', response_code: '00', merchant_ref: 'M1' };
const posReq = {
  terminal_id: 'T1',
  amount: 100,
  card_pan: '5061000000000000001',
  card_expiry_month: '12',
  card_expiry_year: '27',
  card_sequence_number: '001',
  track2: '5061000000000000001D2712101',
  chipdata: '9F02',
  aid: '4F07A0000003710001',
  transaction_type: 'Purchase',
  account_type: 'DEFAULT',
  merchant_ref: 'M1',
};

type Case = [keyof ApiPaths, string, string, (c: PaymentsClient) => Promise<unknown>, unknown];
const cases: Case[] = [
  [
    'simulateTransfer',
    'POST',
    '/alt/simulate-transfer',
    (c) => c.checkout.simulateTransfer({ virtual_account_number: '4000012345', amount: 100 }),
    'Payment successful',
  ],
  [
    'chargeToken',
    'POST',
    '/alt/charge-token',
    (c) => c.tokens.charge({ amount: 100, token_id: 'T', transaction_ref: 'R1' }),
    {},
  ],
  ['cancelToken', 'PATCH', '/alt/cancel-token', (c) => c.tokens.cancel({ auth_code: 'T' }), { auth_code: ['T'] }],
  [
    'queryTransactions',
    'GET',
    '/alt/transactions',
    (c) => c.transactions.query({ start_date: '2025-01-01', end_date: '2025-01-31' }),
    [],
  ],
  [
    'verifyTransaction',
    'GET',
    '/alt/verify/R1/status',
    (c) => c.transactions.verify({ transaction_ref: 'R1' }),
    { transaction_ref: 'R1', transaction_status: 'Success' },
  ],
  [
    'terminalConfig',
    'POST',
    '/alt/softpos/config',
    (c) => c.posTerminal.getConfiguration({ serial_no: 'S' }),
    { terminal: { terminal_id: 'T1' } },
  ],
  [
    'keyExchange',
    'POST',
    '/alt/softpos/keys',
    (c) => c.posTerminal.keyExchange({ serial_no: 'S' }),
    { pin_key: '0123456789ABCDEF0123456789ABCDEF' },
  ],
  ['posTransaction', 'POST', '/softpos/transaction', (c) => c.posTerminal.initiate(posReq), posTxn],
  ['posRequery', 'GET', '/softpos/transaction/by-ref/M1', (c) => c.posTerminal.requery({ merchant_ref: 'M1' }), posTxn],
];

describe('paths option', () => {
  it('covers every path the spec does not show', () => {
    expect(cases.map((c) => c[0]).sort()).toEqual(Object.keys(DEFAULT_PATHS).sort());
    const configurable = OPERATION_NAMES.filter((n) => 'configurablePath' in OPERATIONS[n]).map(
      (n) => (OPERATIONS[n] as { configurablePath?: string }).configurablePath,
    );
    expect(new Set(configurable)).toEqual(new Set(Object.keys(DEFAULT_PATHS)));
  });

  it.each(cases)('%s can be overridden', async (key, method, path, run, data) => {
    const client = clientFor(svc, { paths: { [key]: overrides[key] } });
    svc.on(method, path, ok(data));
    await run(client);
    expect(svc.last()).toMatchObject({ method, path });
    await client.close();
  });

  it.each(cases)('%s uses the default from docs/choices.md', async (key, method, _path, run, data) => {
    const client = clientFor(svc);
    const defaultPath = DEFAULT_PATHS[key].replace('{transaction_ref}', 'R1').replace('{merchant_ref}', 'M1');
    svc.on(method, defaultPath, ok(data));
    await run(client);
    expect(svc.last()).toMatchObject({ method, path: defaultPath });
    await client.close();
  });

  it('the defaults are those of docs/choices.md', () => {
    expect(DEFAULT_PATHS).toEqual({
      simulateTransfer: '/virtual-account/simulate/payment',
      chargeToken: '/transaction/charge_card',
      cancelToken: '/transaction/cancel/recurring',
      queryTransactions: '/transaction',
      verifyTransaction: '/transaction/verify/{transaction_ref}',
      terminalConfig: '/softpos/terminal/configuration',
      keyExchange: '/softpos/terminal/key-exchange',
      posTransaction: '/transaction',
      posRequery: '/transaction/by-ref/{merchant_ref}',
    });
  });

  it('a key-exchange override that carries its own query keeps it next to refresh', async () => {
    const client = clientFor(svc, { paths: { keyExchange: '/k?version=2' } });
    svc.on('POST', '/k', ok({ pin_key: '0123456789ABCDEF0123456789ABCDEF' }));
    await client.posTerminal.keyExchange({ serial_no: 'S', refresh: true });
    expect(svc.last().query).toEqual({ version: '2', refresh: 'true' });
    await client.close();
  });

  it('refuses paths that cannot work', () => {
    expect(() => resolvePaths({ verifyTransaction: '/transaction/verify' })).toThrow(
      /must contain \{transaction_ref\}/,
    );
    expect(() => resolvePaths({ posRequery: '/x/{ref}' })).toThrow(/must contain \{merchant_ref\}/);
    expect(() => resolvePaths({ chargeToken: 'transaction/charge_card' })).toThrow(/must start with \//);
    expect(() => resolvePaths({ nope: '/x' } as never)).toThrow(/unknown path name/);
    expect(resolvePaths({ chargeToken: undefined })).toEqual(DEFAULT_PATHS);
  });

  it('the client exposes the resolved paths', async () => {
    const client = clientFor(svc, { paths: { posTransaction: '/softpos/transaction' } });
    expect(client.paths).toEqual({ ...DEFAULT_PATHS, posTransaction: '/softpos/transaction' });
    await client.close();
  });
});

describe('operation table', () => {
  it('the money-moving operations are exactly the ones that move money', () => {
    expect([...MONEY_MOVING_OPERATIONS].sort()).toEqual([
      'direct.authorizeCard',
      'direct.chargeBank',
      'direct.chargeCard',
      'direct.validateBank',
      'mandates.debit',
      'posRemote.create',
      'posTerminal.initiate',
      'tokens.charge',
      'vending.purchase',
    ]);
    for (const name of MONEY_MOVING_OPERATIONS) expect(OPERATIONS[name].idempotent).toBe(false);
  });

  it('every client method is an operation of the table and the reverse', async () => {
    const client = new PaymentsClient({ baseUrl: 'http://127.0.0.1:1', secretKey: 'k' });
    const groups = [
      'checkout',
      'tokens',
      'transactions',
      'direct',
      'virtualAccounts',
      'mandates',
      'posRemote',
      'posTerminal',
      'sms',
      'vending',
    ] as const;
    const methods = groups.flatMap((g) => Object.keys(client[g]).map((m) => `${g}.${m}`));
    expect(methods.sort()).toEqual([...OPERATION_NAMES].sort());
    expect(OPERATION_NAMES).toHaveLength(46); // A1-A6 without A3 (a flag of A1), verify, B1-B5, C1-C11, D1-D6, E1-E2, F1-F4, G1-G8, H1-H4;
    await client.close();
  });
});

// The client's methods are derived from the operations table (src/api/client.ts, ClientGroup): their
// public types stay those of the hand-written methods they replaced. The type assertions below are
// checked by the repository's tsc run (tsconfig.json takes in test/); a wrong type fails it.
import { MockAgent } from 'undici';
import { PaymentsClient, type ApiResult, type CallOptions } from '../../src/api/client';
import {
  OPERATION_NAMES,
  type OperationData,
  type OperationName,
  type OperationRequest,
} from '../../src/api/operations';
import type { EmptyRequest } from '../../src/api/schemas/common';

/** True only when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(proof: Equal<A, B>): Equal<A, B> => proof;

/** The method types as they were written by hand. */
type Method<N extends OperationName> = (
  req: OperationRequest<N>,
  opts?: CallOptions,
) => Promise<ApiResult<OperationData<N>>>;
type NoInputMethod<N extends OperationName> = (
  req?: EmptyRequest,
  opts?: CallOptions,
) => Promise<ApiResult<OperationData<N>>>;

/** The client's public surface as it was written by hand, group by group. */
interface HandWritten {
  checkout: { initiate: Method<'checkout.initiate'>; simulateTransfer: Method<'checkout.simulateTransfer'> };
  tokens: { charge: Method<'tokens.charge'>; cancel: Method<'tokens.cancel'> };
  transactions: { query: Method<'transactions.query'>; verify: Method<'transactions.verify'> };
  direct: {
    chargeCard: Method<'direct.chargeCard'>;
    authorizeCard: Method<'direct.authorizeCard'>;
    chargeBank: Method<'direct.chargeBank'>;
    validateBank: Method<'direct.validateBank'>;
    initiateUssd: Method<'direct.initiateUssd'>;
  };
  virtualAccounts: {
    createCustomer: Method<'virtualAccounts.createCustomer'>;
    createBusiness: Method<'virtualAccounts.createBusiness'>;
    customerTransactions: Method<'virtualAccounts.customerTransactions'>;
    merchantTransactions: NoInputMethod<'virtualAccounts.merchantTransactions'>;
    merchantTransactionsFiltered: Method<'virtualAccounts.merchantTransactionsFiltered'>;
    customerByAccountNumber: Method<'virtualAccounts.customerByAccountNumber'>;
    accountByCustomerIdentifier: Method<'virtualAccounts.accountByCustomerIdentifier'>;
    merchantAccounts: Method<'virtualAccounts.merchantAccounts'>;
    simulatePayment: Method<'virtualAccounts.simulatePayment'>;
    webhookErrorLog: Method<'virtualAccounts.webhookErrorLog'>;
    deleteWebhookErrorLog: Method<'virtualAccounts.deleteWebhookErrorLog'>;
  };
  mandates: {
    create: Method<'mandates.create'>;
    validateOtp: Method<'mandates.validateOtp'>;
    debit: Method<'mandates.debit'>;
    cancel: Method<'mandates.cancel'>;
    list: Method<'mandates.list'>;
    resendOtp: Method<'mandates.resendOtp'>;
  };
  posRemote: { create: Method<'posRemote.create'>; requery: Method<'posRemote.requery'> };
  posTerminal: {
    getConfiguration: Method<'posTerminal.getConfiguration'>;
    keyExchange: Method<'posTerminal.keyExchange'>;
    initiate: Method<'posTerminal.initiate'>;
    requery: Method<'posTerminal.requery'>;
  };
  sms: {
    send: Method<'sms.send'>;
    createCampaign: Method<'sms.createCampaign'>;
    listCampaigns: Method<'sms.listCampaigns'>;
    deleteCampaign: Method<'sms.deleteCampaign'>;
    createTemplate: Method<'sms.createTemplate'>;
    listTemplates: Method<'sms.listTemplates'>;
    updateTemplate: Method<'sms.updateTemplate'>;
    deleteTemplate: Method<'sms.deleteTemplate'>;
  };
  vending: {
    providers: NoInputMethod<'vending.providers'>;
    lookup: Method<'vending.lookup'>;
    purchase: Method<'vending.purchase'>;
    transactions: Method<'vending.transactions'>;
  };
}

type Groups = { [G in keyof HandWritten]: PaymentsClient[G] };

// Compile-time: each group, and so each method's parameters and result, is exactly what it was.
export const SURFACE_UNCHANGED = [
  same<Groups['checkout'], HandWritten['checkout']>(true),
  same<Groups['tokens'], HandWritten['tokens']>(true),
  same<Groups['transactions'], HandWritten['transactions']>(true),
  same<Groups['direct'], HandWritten['direct']>(true),
  same<Groups['virtualAccounts'], HandWritten['virtualAccounts']>(true),
  same<Groups['mandates'], HandWritten['mandates']>(true),
  same<Groups['posRemote'], HandWritten['posRemote']>(true),
  same<Groups['posTerminal'], HandWritten['posTerminal']>(true),
  same<Groups['sms'], HandWritten['sms']>(true),
  same<Groups['vending'], HandWritten['vending']>(true),
  // The check itself tells types apart: a required request is not an optional one.
  same<Method<'vending.providers'>, NoInputMethod<'vending.providers'>>(false),
  same<Groups['sms']['send'], Method<'sms.createCampaign'>>(false),
];

const HAND_WRITTEN_METHODS: Record<keyof HandWritten, string[]> = {
  checkout: ['initiate', 'simulateTransfer'],
  tokens: ['charge', 'cancel'],
  transactions: ['query', 'verify'],
  direct: ['chargeCard', 'authorizeCard', 'chargeBank', 'validateBank', 'initiateUssd'],
  virtualAccounts: [
    'createCustomer',
    'createBusiness',
    'customerTransactions',
    'merchantTransactions',
    'merchantTransactionsFiltered',
    'customerByAccountNumber',
    'accountByCustomerIdentifier',
    'merchantAccounts',
    'simulatePayment',
    'webhookErrorLog',
    'deleteWebhookErrorLog',
  ],
  mandates: ['create', 'validateOtp', 'debit', 'cancel', 'list', 'resendOtp'],
  posRemote: ['create', 'requery'],
  posTerminal: ['getConfiguration', 'keyExchange', 'initiate', 'requery'],
  sms: [
    'send',
    'createCampaign',
    'listCampaigns',
    'deleteCampaign',
    'createTemplate',
    'listTemplates',
    'updateTemplate',
    'deleteTemplate',
  ],
  vending: ['providers', 'lookup', 'purchase', 'transactions'],
};

describe('the client derived from the operations table', () => {
  const client = new PaymentsClient({
    baseUrl: 'http://127.0.0.1:9',
    secretKey: 'sk_test',
    dispatcher: new MockAgent(),
  });
  afterAll(() => client.close());

  it('keeps the public types of the hand-written methods (checked by tsc)', () => {
    expect(SURFACE_UNCHANGED).toEqual([...Array(10).fill(true), false, false]);
  });

  it('has exactly the methods it had, one for every operation of the table', () => {
    for (const [group, methods] of Object.entries(HAND_WRITTEN_METHODS))
      expect(Object.keys(client[group as keyof HandWritten]).sort()).toEqual([...methods].sort());
    const all = Object.entries(HAND_WRITTEN_METHODS).flatMap(([group, methods]) => methods.map((m) => `${group}.${m}`));
    expect(all.sort()).toEqual([...OPERATION_NAMES].sort());
  });

  it('sends each method as its own operation, and a method without input as an empty request', async () => {
    const call = jest.spyOn(client, 'call').mockResolvedValue({} as never);
    await client.sms.send({ sender_id: 'S' } as never, { timeoutMs: 5 } as CallOptions);
    await client.vending.providers();
    await client.virtualAccounts.merchantTransactions(undefined, { requestId: 'r-1' });
    expect(call.mock.calls).toEqual([
      ['sms.send', { sender_id: 'S' }, { timeoutMs: 5 }],
      ['vending.providers', {}, undefined],
      ['virtualAccounts.merchantTransactions', {}, { requestId: 'r-1' }],
    ]);
    call.mockRestore();
  });

  it('refuses a bad request before any I/O, as every method did (no retry, no call)', async () => {
    await expect(client.vending.lookup({} as never)).rejects.toMatchObject({ name: 'RequestValidationError' });
  });
});

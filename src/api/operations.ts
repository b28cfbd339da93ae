// Every operation of the service in one table: its HTTP shape, request and response schemas,
// and its traits (money-moving, idempotent) from which retrySafe/outcomeUnknown are computed.
import { z } from 'zod';
import type { ApiPaths } from './paths';
import { fillPath } from './paths';
import { anyData, EmptyRequestSchema } from './schemas/common';
import * as A from './schemas/checkout';
import * as B from './schemas/direct';
import * as C from './schemas/virtual-accounts';
import * as D from './schemas/mandates';
import * as P from './schemas/pos';
import * as G from './schemas/sms';
import * as H from './schemas/vending';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';
export type QueryValue = string | number | boolean | undefined;

export interface HttpCall {
  method: HttpMethod;
  path: string;
  query?: Record<string, QueryValue>;
  body?: Record<string, unknown>;
}

export interface OperationDef<Req extends z.ZodType = z.ZodType, Data extends z.ZodType = z.ZodType> {
  /** Moves money: charge, authorize, bank debit/validate, token charge, mandate debit, POS remote create, POS terminal initiate, vend purchase. */
  moneyMoving: boolean;
  /** Repeating it has no further effect (reads, lookups, cancels, deletes, updates with the same body). */
  idempotent: boolean;
  request: Req;
  data: Data;
  build(req: z.output<Req>, paths: ApiPaths): HttpCall;
  /** Paths option key, for the operations whose path the spec does not show. */
  configurablePath?: keyof ApiPaths;
}

function op<Req extends z.ZodType, Data extends z.ZodType>(def: OperationDef<Req, Data>): OperationDef<Req, Data> {
  return def;
}

const read = { moneyMoving: false, idempotent: true } as const;
const write = { moneyMoving: false, idempotent: false } as const;
const money = { moneyMoving: true, idempotent: false } as const;

/** Copies an object without its undefined values (query strings, bodies). */
function defined<T extends Record<string, unknown>>(o: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
const asQuery = (o: Record<string, unknown>) => defined(o) as Record<string, QueryValue>;

/** The direct API's one payment route: card, bank and USSD differ only by `payment_method`. */
const processPayment =
  (payment_method: 'card' | 'bank' | 'ussd') =>
  (r: Record<string, unknown>): HttpCall => ({
    method: 'POST',
    path: '/transaction/initiate/process-payment',
    body: { ...defined(r), payment_method },
  });

export const OPERATIONS = {
  // ---- A. Hosted checkout, tokens, transactions ----
  'checkout.initiate': op({
    ...write,
    request: A.CheckoutInitiateRequestSchema,
    data: A.CheckoutInitiationSchema,
    build: (r) => ({ method: 'POST', path: '/transaction/initiate', body: defined(r) }),
  }),
  'checkout.simulateTransfer': op({
    // Test environment only; credits a dynamic account (a fake transfer), not idempotent.
    ...write,
    request: A.SimulateTransferRequestSchema,
    data: A.SimulateTransferResultSchema,
    configurablePath: 'simulateTransfer',
    build: (r, p) => ({
      method: 'POST',
      path: p.simulateTransfer,
      body: { virtual_account_number: r.virtual_account_number, amount: r.amount, dva: true },
    }),
  }),
  'tokens.charge': op({
    ...money,
    request: A.TokenChargeRequestSchema,
    data: A.TokenChargeResultSchema,
    configurablePath: 'chargeToken',
    build: (r, p) => ({ method: 'POST', path: p.chargeToken, body: defined(r) }),
  }),
  'tokens.cancel': op({
    ...read,
    request: A.TokenCancelRequestSchema,
    data: A.TokenCancelResultSchema,
    configurablePath: 'cancelToken',
    build: (r, p) => ({ method: 'PATCH', path: p.cancelToken, body: { auth_code: r.auth_code } }),
  }),
  'transactions.query': op({
    ...read,
    request: A.TransactionQueryRequestSchema,
    data: A.TransactionRecordListSchema,
    configurablePath: 'queryTransactions',
    build: (r, p) => ({ method: 'GET', path: p.queryTransactions, query: asQuery(r) }),
  }),
  'transactions.verify': op({
    ...read,
    request: A.TransactionVerifyRequestSchema,
    data: A.VerifiedTransactionSchema,
    configurablePath: 'verifyTransaction',
    build: (r, p) => ({ method: 'GET', path: fillPath(p.verifyTransaction, { transaction_ref: r.transaction_ref }) }),
  }),

  // ---- B. Direct API ----
  'direct.chargeCard': op({
    ...money,
    request: B.DirectChargeCardRequestSchema,
    data: B.DirectPaymentResultSchema,
    build: processPayment('card'),
  }),
  'direct.authorizeCard': op({
    ...money,
    request: B.DirectAuthorizeCardRequestSchema,
    data: B.DirectPaymentResultSchema,
    build: (r) => ({
      method: 'POST',
      path: '/transaction/payment/authorize',
      body: { transaction_reference: r.transaction_reference, authorization: defined(r.authorization) },
    }),
  }),
  'direct.chargeBank': op({
    ...money,
    request: B.DirectChargeBankRequestSchema,
    data: B.DirectPaymentResultSchema,
    build: processPayment('bank'),
  }),
  'direct.validateBank': op({
    ...money,
    request: B.DirectValidateBankRequestSchema,
    data: B.DirectPaymentResultSchema,
    build: (r) => ({ method: 'POST', path: '/transaction/validate-payment', body: defined(r) }),
  }),
  'direct.initiateUssd': op({
    // Issues a USSD code; the payer moves the money by dialling it.
    ...write,
    request: B.DirectInitiateUssdRequestSchema,
    data: B.DirectPaymentResultSchema,
    build: processPayment('ussd'),
  }),

  // ---- C. Virtual accounts ----
  'virtualAccounts.createCustomer': op({
    ...write,
    request: C.CreateCustomerAccountRequestSchema,
    data: C.VirtualAccountSchema,
    build: (r) => ({ method: 'POST', path: '/virtual-account', body: defined(r) }),
  }),
  'virtualAccounts.createBusiness': op({
    ...write,
    request: C.CreateBusinessAccountRequestSchema,
    data: C.VirtualAccountSchema,
    build: (r) => ({ method: 'POST', path: '/virtual-account/business', body: defined(r) }),
  }),
  'virtualAccounts.customerTransactions': op({
    ...read,
    request: C.CustomerTransactionsRequestSchema,
    data: C.VirtualAccountTransactionListSchema,
    build: (r) => ({
      method: 'GET',
      path: fillPath('/virtual-account/customer/transactions/{id}', { id: r.customer_identifier }),
    }),
  }),
  'virtualAccounts.merchantTransactions': op({
    ...read,
    request: EmptyRequestSchema,
    data: C.VirtualAccountTransactionListSchema,
    build: () => ({ method: 'GET', path: '/virtual-account/merchant/transactions' }),
  }),
  'virtualAccounts.merchantTransactionsFiltered': op({
    ...read,
    request: C.MerchantTransactionsFilterRequestSchema,
    data: C.MerchantTransactionsPageSchema,
    build: (r) => ({ method: 'GET', path: '/virtual-account/merchant/transactions/all', query: asQuery(r) }),
  }),
  'virtualAccounts.customerByAccountNumber': op({
    ...read,
    request: C.CustomerByAccountNumberRequestSchema,
    data: C.VirtualAccountCustomerSchema,
    build: (r) => ({ method: 'GET', path: fillPath('/virtual-account/customer/{n}', { n: r.virtual_account_number }) }),
  }),
  'virtualAccounts.accountByCustomerIdentifier': op({
    ...read,
    request: C.AccountByCustomerIdentifierRequestSchema,
    data: C.VirtualAccountSchema,
    build: (r) => ({ method: 'GET', path: fillPath('/virtual-account/{id}', { id: r.customer_identifier }) }),
  }),
  'virtualAccounts.merchantAccounts': op({
    ...read,
    request: C.MerchantAccountsRequestSchema,
    data: C.MerchantAccountListSchema,
    build: (r) => ({ method: 'GET', path: '/virtual-account/merchant/accounts', query: asQuery(r) }),
  }),
  'virtualAccounts.simulatePayment': op({
    // Test environment only; credits the account (emits E-2), not idempotent.
    ...write,
    request: C.SimulatePaymentRequestSchema,
    data: C.SimulatePaymentResultSchema,
    build: (r) => ({ method: 'POST', path: '/virtual-account/simulate/payment', body: defined(r) }),
  }),
  'virtualAccounts.webhookErrorLog': op({
    ...read,
    request: C.WebhookErrorLogRequestSchema,
    data: C.WebhookErrorLogPageSchema,
    build: (r) => ({ method: 'GET', path: '/virtual-account/webhook/logs', query: asQuery(r) }),
  }),
  'virtualAccounts.deleteWebhookErrorLog': op({
    ...read,
    request: C.DeleteWebhookErrorLogRequestSchema,
    data: C.DeleteWebhookErrorLogResultSchema,
    build: (r) => ({
      method: 'DELETE',
      path: fillPath('/virtual-account/webhook/logs/{ref}', { ref: r.transaction_ref }),
    }),
  }),

  // ---- D. Direct debit ----
  'mandates.create': op({
    ...write,
    request: D.MandateCreateRequestSchema,
    data: D.MandateCreationSchema,
    build: (r) => ({ method: 'POST', path: '/transaction/mandate/create', body: defined(r) }),
  }),
  'mandates.validateOtp': op({
    ...write,
    request: D.MandateValidateOtpRequestSchema,
    data: D.MandateApprovalSchema,
    build: (r) => ({ method: 'POST', path: '/transaction/mandate/validate-otp', body: defined(r) }),
  }),
  'mandates.debit': op({
    ...money,
    request: D.MandateDebitRequestSchema,
    data: D.MandateDebitSchema,
    build: (r) => ({ method: 'POST', path: '/transaction/mandate/debit', body: defined(r) }),
  }),
  'mandates.cancel': op({
    ...read,
    request: D.MandateCancelRequestSchema,
    data: D.MandateCancellationSchema,
    build: (r) => ({ method: 'POST', path: '/transaction/mandate/cancel', body: { mandateIds: r.mandateIds } }),
  }),
  'mandates.list': op({
    ...read,
    request: D.MandateListRequestSchema,
    data: D.MandatePageSchema,
    build: (r) => ({ method: 'GET', path: '/transaction/mandate/get-mandates', query: asQuery(r) }),
  }),
  'mandates.resendOtp': op({
    ...write,
    request: D.MandateResendOtpRequestSchema,
    // The spec shows `data` as {}: anything is accepted, undefined becomes null.
    data: anyData,
    build: (r) => ({ method: 'POST', path: '/transaction/mandate/resend-otp', body: defined(r) }),
  }),

  // ---- E. POS remote request ----
  'posRemote.create': op({
    // No merchant reference exists in the request's body: a repeat creates a second request.
    ...money,
    request: P.PosRemoteCreateRequestSchema,
    data: P.PosRemoteCreationSchema,
    build: (r) => ({ method: 'POST', path: '/softpos/pos/remote-request', body: defined(r) }),
  }),
  'posRemote.requery': op({
    ...read,
    request: P.PosRemoteRequeryRequestSchema,
    data: P.PosRemoteRequestRecordSchema,
    build: (r) => ({ method: 'GET', path: fillPath('/softpos/pos/remote-request/{ref}', { ref: r.request_ref }) }),
  }),

  // ---- F. POS terminal API ----
  'posTerminal.getConfiguration': op({
    ...read,
    request: P.PosTerminalConfigRequestSchema,
    data: P.PosTerminalConfigurationSchema,
    configurablePath: 'terminalConfig',
    build: (r, p) => ({ method: 'POST', path: p.terminalConfig, body: { serial_no: r.serial_no } }),
  }),
  'posTerminal.keyExchange': op({
    ...read,
    request: P.PosKeyExchangeRequestSchema,
    data: P.PosTerminalKeysSchema,
    configurablePath: 'keyExchange',
    build: (r, p) => ({
      method: 'POST',
      path: p.keyExchange,
      query: { refresh: r.refresh },
      body: { serial_no: r.serial_no },
    }),
  }),
  'posTerminal.initiate': op({
    ...money,
    request: P.PosTerminalInitiateRequestSchema,
    data: P.PosTerminalTransactionSchema,
    configurablePath: 'posTransaction',
    build: (r, p) => ({ method: 'POST', path: p.posTransaction, body: defined(r) }),
  }),
  'posTerminal.requery': op({
    ...read,
    request: P.PosTerminalRequeryRequestSchema,
    data: P.PosTerminalTransactionSchema,
    configurablePath: 'posRequery',
    build: (r, p) => ({ method: 'GET', path: fillPath(p.posRequery, { merchant_ref: r.merchant_ref }) }),
  }),

  // ---- G. SMS ----
  'sms.send': op({
    ...write,
    request: G.SmsSendRequestSchema,
    data: G.SmsSendResultSchema,
    build: (r) => ({ method: 'POST', path: '/sms/send/instant', body: defined(r) }),
  }),
  'sms.createCampaign': op({
    ...write,
    request: G.SmsCampaignCreateRequestSchema,
    data: G.SmsCampaignSchema,
    build: (r) => ({ method: 'POST', path: '/sms/campaign', body: defined(r) }),
  }),
  'sms.listCampaigns': op({
    ...read,
    request: G.SmsCampaignListRequestSchema,
    data: G.SmsCampaignPageSchema,
    build: (r) => ({ method: 'GET', path: '/sms/campaign', query: asQuery(r) }),
  }),
  'sms.deleteCampaign': op({
    ...read,
    request: G.SmsIdRequestSchema,
    data: G.SmsDeleteResultSchema,
    build: (r) => ({ method: 'POST', path: fillPath('/sms/campaign/{id}', { id: r.id }) }),
  }),
  'sms.createTemplate': op({
    ...write,
    request: G.SmsTemplateCreateRequestSchema,
    data: G.SmsTemplateSchema,
    build: (r) => ({ method: 'POST', path: '/sms/template', body: defined(r) }),
  }),
  'sms.listTemplates': op({
    ...read,
    request: G.SmsTemplateListRequestSchema,
    data: G.SmsTemplatePageSchema,
    build: (r) => ({ method: 'GET', path: '/sms/template', query: asQuery(r) }),
  }),
  'sms.updateTemplate': op({
    ...read,
    request: G.SmsTemplateUpdateRequestSchema,
    data: G.SmsTemplateSchema,
    build: ({ id, ...rest }) => ({
      method: 'PATCH',
      path: fillPath('/sms/template/{id}', { id }),
      body: defined(rest),
    }),
  }),
  'sms.deleteTemplate': op({
    ...read,
    request: G.SmsIdRequestSchema,
    data: G.SmsDeleteResultSchema,
    build: (r) => ({ method: 'POST', path: fillPath('/sms/template/{id}', { id: r.id }) }),
  }),

  // ---- H. Electricity vending ----
  'vending.providers': op({
    ...read,
    request: EmptyRequestSchema,
    data: H.ElectricityProviderListSchema,
    build: () => ({ method: 'GET', path: '/vending/utilities/electricity/service-providers' }),
  }),
  'vending.lookup': op({
    ...read,
    request: H.MeterLookupRequestSchema,
    data: H.MeterLookupSchema,
    build: (r) => ({ method: 'POST', path: '/vending/utilities/electricity/lookup', body: defined(r) }),
  }),
  'vending.purchase': op({
    ...money,
    request: H.VendPurchaseRequestSchema,
    data: H.VendingTransactionSchema,
    build: (r) => ({ method: 'POST', path: '/vending/utilities/electricity', body: defined(r) }),
  }),
  'vending.transactions': op({
    ...read,
    request: H.VendingTransactionsRequestSchema,
    data: H.VendingTransactionsResultSchema,
    build: (r) => ({ method: 'GET', path: '/vending/transactions', query: asQuery(r) }),
  }),
} as const;

export type OperationName = keyof typeof OPERATIONS;
export type OperationRequest<N extends OperationName> = z.input<(typeof OPERATIONS)[N]['request']>;
export type OperationData<N extends OperationName> = z.output<(typeof OPERATIONS)[N]['data']>;

export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

/** Operations that move money (for activities deciding how to handle an unknown outcome). */
export const MONEY_MOVING_OPERATIONS: readonly OperationName[] = OPERATION_NAMES.filter(
  (n) => OPERATIONS[n].moneyMoving,
);

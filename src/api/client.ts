// The typed client for every operation of the payments service. No Temporal imports: activities
// wrap it, and a backend can use it on its own. No retries inside: callers pass references so
// that a repeated attempt is recognisable, and decide from retrySafe/outcomeUnknown.
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  NotFoundError,
  PaymentsApiError,
  RequestAbortedError,
  RequestValidationError,
  ResponseValidationError,
  TimeoutError,
  ConnectionError,
  errorClassForStatus,
  flagsForStatus,
  flagsForTransport,
  type OperationTraits,
  type ValidationIssue,
} from './errors';
import { OPERATIONS, type OperationData, type OperationName, type OperationRequest } from './operations';
import { resolvePaths, type ApiPaths } from './paths';
import { redactBody } from './redact';
import { HttpTransport, TransportFailure, type CallOptions, type RawResponse } from './transport';
import type { EmptyRequest } from './schemas/common';

export type { CallOptions } from './transport';

export interface PaymentsClientOptions {
  /** Host, e.g. https://sandbox-api-d.squadco.com or the embedded sandbox's URL. A path prefix is kept. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <secretKey>`. Never logged. */
  secretKey: string;
  /** Overall deadline per call, also used as undici's headers and body timeouts. Default 30000. */
  timeoutMs?: number;
  /** TCP/TLS connect timeout of the client's own pool. Default 10000 (ignored with `dispatcher`). */
  connectTimeoutMs?: number;
  /** Overrides for the paths the spec does not show (see DEFAULT_PATHS). */
  paths?: Partial<ApiPaths>;
  /** An undici dispatcher (Agent, Pool, MockAgent). The client does not close an injected one. */
  dispatcher?: Dispatcher;
  /** Sees each call (metrics, tracing): its operation, method and outcome; never a body or a header of ours. */
  observer?: CallObserver;
}

/** What a caller may watch of each call, e.g. src/observability/service-calls.ts (metrics and a span). */
export interface CallObserver {
  /** Called just before the request is sent (after validation). */
  start(call: { operation: OperationName; method: string; moneyMoving: boolean }): CallObservation | undefined;
}

export interface CallObservation {
  /** Headers to add (e.g. W3C traceparent); they never replace the client's own (authorization, x-request-id, content type). */
  headers?: Record<string, string>;
  /** Called once: with the HTTP status when a response came, or how the call failed without one. */
  end(outcome: { status?: number; failure?: 'timeout' | 'aborted' | 'connection' }): void;
}

/**
 * What every method resolves to: the parsed, schema-checked `data` and the envelope around it.
 */
export interface ApiResult<T> {
  data: T;
  /** The envelope's message ('' when absent). */
  message: string;
  /** HTTP status of the response. */
  status: number;
  /** The envelope's own status: a number (numeric strings converted), another string ('SUCCESS'), or undefined when absent. */
  bodyStatus: number | string | undefined;
  /** The envelope's success flag; true when absent (the HTTP status was 2xx). */
  success: boolean;
  /** The server's x-request-id when it sent one, otherwise the client's. */
  requestId: string;
  /** The x-request-id the client sent. */
  clientRequestId: string;
  operation: OperationName;
}

type Method<N extends OperationName> = (
  req: OperationRequest<N>,
  opts?: CallOptions,
) => Promise<ApiResult<OperationData<N>>>;
type NoInputMethod<N extends OperationName> = (
  req?: EmptyRequest,
  opts?: CallOptions,
) => Promise<ApiResult<OperationData<N>>>;

interface Envelope {
  bodyStatus: number | string | undefined;
  success: boolean | undefined;
  message: string;
  data: unknown;
}

function readEnvelope(body: unknown): Envelope | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const o = body as Record<string, unknown>;
  let bodyStatus: number | string | undefined;
  if (typeof o.status === 'number') bodyStatus = o.status;
  else if (typeof o.status === 'string')
    bodyStatus = /^\d{3}$/.test(o.status.trim()) ? Number(o.status.trim()) : o.status;
  let success: boolean | undefined;
  if (typeof o.success === 'boolean') success = o.success;
  else if (o.success === 'true' || o.success === 'false') success = o.success === 'true';
  const message = typeof o.message === 'string' ? o.message : '';
  return { bodyStatus, success, message, data: o.data === undefined ? null : o.data };
}

/** The observer's view of one call; an observer that throws is ignored (observing never breaks a call). */
function observe(
  observer: CallObserver | undefined,
  call: Parameters<CallObserver['start']>[0],
): CallObservation | undefined {
  if (!observer) return undefined;
  let observation: CallObservation | undefined;
  try {
    observation = observer.start(call);
  } catch {
    return undefined;
  }
  if (!observation) return undefined;
  let ended = false;
  return {
    headers: observation.headers,
    end: (outcome) => {
      if (ended) return;
      ended = true;
      try {
        observation.end(outcome);
      } catch {
        // ignored on purpose
      }
    },
  };
}

export function zodIssuesToValidationIssues(issues: readonly z.core.$ZodIssue[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        out.push({ path: base ? `${base}.${key}` : key, message: 'is not a field of this request' });
      continue;
    }
    const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined;
    out.push({ path: base, message: missing ? 'is required' : issue.message });
  }
  return out;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  424: 'Failed Dependency',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export class PaymentsClient {
  /** The paths in use (defaults merged with overrides). */
  readonly paths: Readonly<ApiPaths>;
  private readonly transport: HttpTransport;
  private readonly observer: CallObserver | undefined;

  constructor(opts: PaymentsClientOptions) {
    if (!opts || typeof opts.baseUrl !== 'string' || opts.baseUrl === '')
      throw new TypeError('PaymentsClient: baseUrl is required');
    if (typeof opts.secretKey !== 'string' || opts.secretKey.trim() === '')
      throw new TypeError('PaymentsClient: secretKey is required');
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
    for (const [name, v] of [
      ['timeoutMs', timeoutMs],
      ['connectTimeoutMs', connectTimeoutMs],
    ] as const) {
      if (!Number.isInteger(v) || v <= 0) throw new TypeError(`PaymentsClient: ${name} must be a positive integer`);
    }
    this.paths = Object.freeze(resolvePaths(opts.paths));
    this.observer = opts.observer;
    this.transport = new HttpTransport({
      baseUrl: opts.baseUrl,
      secretKey: opts.secretKey,
      timeoutMs,
      connectTimeoutMs,
      dispatcher: opts.dispatcher,
    });
  }

  /** A. Hosted checkout. */
  readonly checkout: { initiate: Method<'checkout.initiate'>; simulateTransfer: Method<'checkout.simulateTransfer'> } =
    {
      initiate: (req, opts) => this.call('checkout.initiate', req, opts),
      simulateTransfer: (req, opts) => this.call('checkout.simulateTransfer', req, opts),
    };

  /** A3-A5. Recurring card tokens. */
  readonly tokens: { charge: Method<'tokens.charge'>; cancel: Method<'tokens.cancel'> } = {
    charge: (req, opts) => this.call('tokens.charge', req, opts),
    cancel: (req, opts) => this.call('tokens.cancel', req, opts),
  };

  /** A6 and verify. */
  readonly transactions: { query: Method<'transactions.query'>; verify: Method<'transactions.verify'> } = {
    query: (req, opts) => this.call('transactions.query', req, opts),
    verify: (req, opts) => this.call('transactions.verify', req, opts),
  };

  /** B. Direct API. */
  readonly direct: {
    chargeCard: Method<'direct.chargeCard'>;
    authorizeCard: Method<'direct.authorizeCard'>;
    chargeBank: Method<'direct.chargeBank'>;
    validateBank: Method<'direct.validateBank'>;
    initiateUssd: Method<'direct.initiateUssd'>;
  } = {
    chargeCard: (req, opts) => this.call('direct.chargeCard', req, opts),
    authorizeCard: (req, opts) => this.call('direct.authorizeCard', req, opts),
    chargeBank: (req, opts) => this.call('direct.chargeBank', req, opts),
    validateBank: (req, opts) => this.call('direct.validateBank', req, opts),
    initiateUssd: (req, opts) => this.call('direct.initiateUssd', req, opts),
  };

  /** C. Virtual accounts. */
  readonly virtualAccounts: {
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
  } = {
    createCustomer: (req, opts) => this.call('virtualAccounts.createCustomer', req, opts),
    createBusiness: (req, opts) => this.call('virtualAccounts.createBusiness', req, opts),
    customerTransactions: (req, opts) => this.call('virtualAccounts.customerTransactions', req, opts),
    merchantTransactions: (req, opts) => this.call('virtualAccounts.merchantTransactions', req ?? {}, opts),
    merchantTransactionsFiltered: (req, opts) => this.call('virtualAccounts.merchantTransactionsFiltered', req, opts),
    customerByAccountNumber: (req, opts) => this.call('virtualAccounts.customerByAccountNumber', req, opts),
    accountByCustomerIdentifier: (req, opts) => this.call('virtualAccounts.accountByCustomerIdentifier', req, opts),
    merchantAccounts: (req, opts) => this.call('virtualAccounts.merchantAccounts', req, opts),
    simulatePayment: (req, opts) => this.call('virtualAccounts.simulatePayment', req, opts),
    webhookErrorLog: (req, opts) => this.call('virtualAccounts.webhookErrorLog', req, opts),
    deleteWebhookErrorLog: (req, opts) => this.call('virtualAccounts.deleteWebhookErrorLog', req, opts),
  };

  /** D. Direct debit mandates. */
  readonly mandates: {
    create: Method<'mandates.create'>;
    validateOtp: Method<'mandates.validateOtp'>;
    debit: Method<'mandates.debit'>;
    cancel: Method<'mandates.cancel'>;
    list: Method<'mandates.list'>;
    resendOtp: Method<'mandates.resendOtp'>;
  } = {
    create: (req, opts) => this.call('mandates.create', req, opts),
    validateOtp: (req, opts) => this.call('mandates.validateOtp', req, opts),
    debit: (req, opts) => this.call('mandates.debit', req, opts),
    cancel: (req, opts) => this.call('mandates.cancel', req, opts),
    list: (req, opts) => this.call('mandates.list', req, opts),
    resendOtp: (req, opts) => this.call('mandates.resendOtp', req, opts),
  };

  /** E. POS remote requests. */
  readonly posRemote: { create: Method<'posRemote.create'>; requery: Method<'posRemote.requery'> } = {
    create: (req, opts) => this.call('posRemote.create', req, opts),
    requery: (req, opts) => this.call('posRemote.requery', req, opts),
  };

  /** F. POS terminal API. */
  readonly posTerminal: {
    getConfiguration: Method<'posTerminal.getConfiguration'>;
    keyExchange: Method<'posTerminal.keyExchange'>;
    initiate: Method<'posTerminal.initiate'>;
    requery: Method<'posTerminal.requery'>;
  } = {
    getConfiguration: (req, opts) => this.call('posTerminal.getConfiguration', req, opts),
    keyExchange: (req, opts) => this.call('posTerminal.keyExchange', req, opts),
    initiate: (req, opts) => this.call('posTerminal.initiate', req, opts),
    requery: (req, opts) => this.call('posTerminal.requery', req, opts),
  };

  /** G. SMS. */
  readonly sms: {
    send: Method<'sms.send'>;
    createCampaign: Method<'sms.createCampaign'>;
    listCampaigns: Method<'sms.listCampaigns'>;
    deleteCampaign: Method<'sms.deleteCampaign'>;
    createTemplate: Method<'sms.createTemplate'>;
    listTemplates: Method<'sms.listTemplates'>;
    updateTemplate: Method<'sms.updateTemplate'>;
    deleteTemplate: Method<'sms.deleteTemplate'>;
  } = {
    send: (req, opts) => this.call('sms.send', req, opts),
    createCampaign: (req, opts) => this.call('sms.createCampaign', req, opts),
    listCampaigns: (req, opts) => this.call('sms.listCampaigns', req, opts),
    deleteCampaign: (req, opts) => this.call('sms.deleteCampaign', req, opts),
    createTemplate: (req, opts) => this.call('sms.createTemplate', req, opts),
    listTemplates: (req, opts) => this.call('sms.listTemplates', req, opts),
    updateTemplate: (req, opts) => this.call('sms.updateTemplate', req, opts),
    deleteTemplate: (req, opts) => this.call('sms.deleteTemplate', req, opts),
  };

  /** H. Electricity vending. */
  readonly vending: {
    providers: NoInputMethod<'vending.providers'>;
    lookup: Method<'vending.lookup'>;
    purchase: Method<'vending.purchase'>;
    transactions: Method<'vending.transactions'>;
  } = {
    providers: (req, opts) => this.call('vending.providers', req ?? {}, opts),
    lookup: (req, opts) => this.call('vending.lookup', req, opts),
    purchase: (req, opts) => this.call('vending.purchase', req, opts),
    transactions: (req, opts) => this.call('vending.transactions', req, opts),
  };

  /**
   * Any operation by name (what the grouped methods call). Validates the request before any I/O,
   * sends it once, and checks the response against the operation's schema.
   */
  async call<N extends OperationName>(
    operation: N,
    request: OperationRequest<N>,
    opts?: CallOptions,
  ): Promise<ApiResult<OperationData<N>>> {
    const def = OPERATIONS[operation] as unknown as {
      moneyMoving: boolean;
      idempotent: boolean;
      request: z.ZodType;
      data: z.ZodType;
      build(req: unknown, paths: ApiPaths): import('./operations').HttpCall;
    };
    if (!def) throw new TypeError(`PaymentsClient: unknown operation ${String(operation)}`);
    const traits: OperationTraits = { moneyMoving: def.moneyMoving, idempotent: def.idempotent };

    const parsed = def.request.safeParse(request ?? {}, { reportInput: true });
    if (!parsed.success) throw new RequestValidationError(operation, zodIssuesToValidationIssues(parsed.error.issues));
    const call = def.build(parsed.data, this.paths);

    let raw: RawResponse;
    const observed = observe(this.observer, { operation, method: call.method, moneyMoving: def.moneyMoving });
    try {
      raw = await this.transport.send(call, observed?.headers ? { ...opts, headers: observed.headers } : opts);
    } catch (err) {
      observed?.end({ failure: err instanceof TransportFailure ? err.kind : 'connection' });
      throw err instanceof TransportFailure ? transportError(operation, traits, err) : err;
    }
    observed?.end({ status: raw.status });

    const envelope = readEnvelope(raw.body);
    const ids = { requestId: raw.requestId, clientRequestId: raw.clientRequestId };
    if (raw.status < 200 || raw.status >= 300) {
      throw statusError(operation, traits, raw, envelope, raw.status);
    }
    if (!envelope) {
      throw new ResponseValidationError({
        message: `${operation}: the ${raw.status} response body is not a JSON object`,
        operation,
        status: raw.status,
        body: redactBody(raw.body),
        ...ids,
        requestSent: true,
        moneyMoving: traits.moneyMoving,
        retrySafe: false,
        outcomeUnknown: !traits.idempotent,
        issues: [{ path: '', message: raw.bodyIsJson ? 'must be a JSON object (the envelope)' : 'must be JSON' }],
      });
    }
    const errorStatus =
      typeof envelope.bodyStatus === 'number' && envelope.bodyStatus >= 400 ? envelope.bodyStatus : undefined;
    if (envelope.success === false || errorStatus !== undefined) {
      throw statusError(operation, traits, raw, envelope, errorStatus);
    }

    const data = def.data.safeParse(envelope.data, { reportInput: false });
    if (!data.success) {
      const issues = zodIssuesToValidationIssues(data.error.issues).map((i) => ({
        path: i.path ? `data.${i.path}` : 'data',
        message: i.message,
      }));
      throw new ResponseValidationError({
        message: `${operation}: the ${raw.status} response does not match the schema: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
        operation,
        status: raw.status,
        bodyStatus: envelope.bodyStatus,
        serviceMessage: envelope.message,
        body: redactBody(raw.body),
        ...ids,
        requestSent: true,
        moneyMoving: traits.moneyMoving,
        retrySafe: false,
        outcomeUnknown: !traits.idempotent,
        issues,
      });
    }
    return {
      data: data.data as OperationData<N>,
      message: envelope.message,
      status: raw.status,
      bodyStatus: envelope.bodyStatus,
      success: envelope.success ?? true,
      requestId: raw.requestId,
      clientRequestId: raw.clientRequestId,
      operation,
    };
  }

  /** Closes the client's own connection pool (an injected dispatcher is left open). */
  async close(): Promise<void> {
    await this.transport.close();
  }
}

function statusError(
  operation: OperationName,
  traits: OperationTraits,
  raw: RawResponse,
  envelope: Envelope | undefined,
  errorStatus: number | undefined,
): PaymentsApiError {
  const serviceMessage = envelope?.message ?? '';
  const classStatus = errorStatus ?? raw.status;
  let ErrorClass = errorClassForStatus(classStatus);
  // D5: an unknown reference answers body status 400 'No mandate found for reference …'
  // (shown with HTTP 404): a lookup that found nothing, whatever the HTTP status.
  if (operation === 'mandates.list' && /^No mandate found/i.test(serviceMessage)) ErrorClass = NotFoundError;
  const flags = classStatus >= 400 ? flagsForStatus(classStatus, traits) : { retrySafe: false, outcomeUnknown: false };
  const message =
    serviceMessage !== ''
      ? serviceMessage
      : `${operation}: HTTP ${raw.status}${STATUS_TEXT[classStatus] ? ` ${STATUS_TEXT[classStatus]}` : ''} with an empty message`;
  return new ErrorClass({
    message,
    operation,
    status: raw.status,
    bodyStatus: envelope?.bodyStatus,
    serviceMessage,
    body: redactBody(raw.body),
    requestId: raw.requestId,
    clientRequestId: raw.clientRequestId,
    requestSent: true,
    moneyMoving: traits.moneyMoving,
    ...flags,
  });
}

function transportError(operation: OperationName, traits: OperationTraits, f: TransportFailure): PaymentsApiError {
  const flags = flagsForTransport(f.requestSent, traits);
  const init = {
    message: `${operation}: ${f.message}`,
    operation,
    status: f.responseStatus,
    requestId: f.clientRequestId,
    clientRequestId: f.clientRequestId,
    requestSent: f.requestSent,
    moneyMoving: traits.moneyMoving,
    code: f.code,
    cause: f.original,
    ...flags,
  };
  if (f.kind === 'timeout') return new TimeoutError(init);
  if (f.kind === 'aborted') return new RequestAbortedError(init);
  return new ConnectionError(init);
}

// The package's public surface: every name each entry of package.json "exports" gives a backend,
// pinned. A change to a list below is a change to the public API: it goes to CHANGELOG.md (and
// removing or renaming a name released in 1.0.0 is a major version). An entry exports what the docs
// present (docs/api-client.md, docs/nexus.md, docs/events.md, README.md...), not the helpers its
// modules share among themselves: where a module holds such a helper, src/starters/client.ts or
// src/starters/index.ts lists the module's public names instead of `export *`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');

interface Surface {
  /** The names present at run time (functions, classes, constants), as `require` gives them. */
  values: string[];
  /** The names that are types only (interfaces, type aliases), as TypeScript gives them. */
  types: string[];
}

/** `@payflow/temporal/client`: the starters, their errors and the events' verification. */
const CLIENT: Surface = {
  values: [
    'ConfigError',
    'DuplicateReferenceError',
    'MERCHANT_EVENT_DATA_VERSION',
    'MERCHANT_EVENT_TYPES',
    'NOTIFY_SECRET_PATTERN',
    'PaymentStepError',
    'PosPreAuthRefusedError',
    'PosTerminalSession',
    'SmsIdInputSchema',
    'SmsTemplateCreateInputSchema',
    'SmsTemplateUpdateInputSchema',
    'StarterInputError',
    'TemporalUnavailableError',
    'VirtualAccountCreationError',
    'WebhookVerificationError',
    'bankPaymentInputSchema',
    'cancelMandate',
    'cancelPosRemoteRequest',
    'cancelRecurring',
    'cardPaymentInputSchema',
    'checkoutInputSchema',
    'closeStarters',
    'completePosPreAuth',
    'connectStarters',
    'createBusinessVirtualAccount',
    'createCustomerVirtualAccount',
    'createSmsTemplate',
    'debitMandate',
    'deleteSmsCampaign',
    'deleteSmsTemplate',
    'describeInputIssues',
    'firstPaymentCheckoutUrl',
    'followSmsCampaign',
    'followUntilDone',
    'getCardPaymentState',
    'getCheckoutState',
    'getCycleChargeState',
    'getDirectPaymentState',
    'getMandateState',
    'getRecurringState',
    'getVirtualAccountCreditState',
    'inputIssuesOf',
    'isTransientTemporalError',
    'listAllMandates',
    'listMandates',
    'listSmsCampaigns',
    'listSmsTemplates',
    'loadConfig',
    'mandateInputSchema',
    'merchantEventDataSchema',
    'merchantEventId',
    'merchantEventSchema',
    'merchantEventTargetSchema',
    'newNotifySecret',
    'notifySecretEntries',
    'notifySecretIssue',
    'openClaimCheck',
    'openPaymentsClient',
    'openPosTerminalSession',
    'openVirtualAccountCredits',
    'parseStarterInput',
    'posPreAuthHandle',
    'posRefundHandle',
    'posRefundLedger',
    'posRemoteRequestHandle',
    'posTransactionHandle',
    'recurringInputSchema',
    'releasePosPreAuth',
    'requestMandateCancel',
    'resendMandateOtp',
    'resolveMandateDebit',
    'resubmitCard',
    'retryTransient',
    'retryVirtualAccountCreditHandoff',
    'runPosPreAuth',
    'runPosRefund',
    'runPosRemoteRequest',
    'runPosTransaction',
    'runSmsCampaign',
    'runSmsSend',
    'runVend',
    'sealPosCardRead',
    'signEvent',
    'smsCampaignFollowHandle',
    'smsCampaignHandle',
    'smsSendHandle',
    'startBankPayment',
    'startCardPayment',
    'startCardPaymentForStep',
    'startCheckout',
    'startMandate',
    'startPosPreAuth',
    'startPosRefund',
    'startPosRemoteRequest',
    'startPosTransaction',
    'startRecurring',
    'startRetrying',
    'startSmsCampaign',
    'startSmsSend',
    'startUssdPayment',
    'startVend',
    'submitBankCode',
    'submitMandateOtp',
    'submitOtp',
    'submitPin',
    'updateSmsTemplate',
    'ussdPaymentInputSchema',
    'vendHandle',
    'verifyEvent',
    'virtualAccountCreditHandle',
    'waitForState',
  ],
  types: [
    'AppConfig',
    'CardPaymentRequest',
    'DebitOptions',
    'Env',
    'InputIssue',
    'MandateListFilters',
    'MandatePage',
    'MerchantEvent',
    'MerchantEventData',
    'MerchantEventTarget',
    'MerchantEventType',
    'PosPreAuthStartInput',
    'PosRefundStartInput',
    'PosTerminalSessionOptions',
    'SignedEvent',
    'SmsCampaignPage',
    'SmsTemplateCreateInput',
    'SmsTemplatePage',
    'SmsTemplateUpdateInput',
    'StarterContext',
    'TransientRetryOptions',
  ],
};

/** The main entry: everything of ./client (src/starters/index.ts re-exports it), and the operator tools and API client. */
const MAIN_ONLY: Surface = {
  values: [
    'ATTENTION_KINDS',
    'ATTENTION_QUERIES',
    'AuthenticationError',
    'BadRequestError',
    'CSV_COLUMNS',
    'ConflictError',
    'ConnectionError',
    'DependencyFailedError',
    'NotFoundError',
    'ParkedFlowClosedError',
    'PaymentsApiError',
    'PaymentsClient',
    'PermissionDeniedError',
    'RECONCILIATION_SCHEDULE_DEFAULTS',
    'RateLimitError',
    'RequestAbortedError',
    'RequestValidationError',
    'ResponseValidationError',
    'ServerError',
    'TimeoutError',
    'UNKNOWN_STATUSES',
    'UnprocessableEntityError',
    'WebhookSignatureVerificationError',
    'attentionSummary',
    'createMandateDebitSchedule',
    'createRecurringChargeSchedule',
    'describeSchedule',
    'ensureReconciliationSchedule',
    'isPaymentsApiError',
    'listAttention',
    'listMerchantEvents',
    'mandateDebitScheduleSchema',
    'merchantEventQuery',
    'moveRecurringPlanToSchedule',
    'reconcile',
    'reconciliationCsv',
    'reconciliationHandle',
    'recurringChargeScheduleSchema',
    'redeliverMerchantEvent',
    'releaseUnmatchedWebhook',
    'renderReconciliationProgress',
    'renderReconciliationReport',
    'replayMerchantEvents',
    'resolveParkedFlow',
    'resolveReconciliationFinding',
    'scheduleHandle',
    'startReconciliation',
    'sweepWebhookErrorLog',
    'validateReconcileInput',
    'viewSchedule',
  ],
  types: [
    'ApiResult',
    'AttentionItem',
    'AttentionKind',
    'CallOptions',
    'ListMerchantEventsInput',
    'MerchantEventRow',
    'PaymentsApiErrorInit',
    'PaymentsClientOptions',
    'ReconciliationScheduleOptions',
    'Redelivery',
    'ScheduleView',
    'ValidationIssue',
  ],
};

const PINNED: Record<string, Surface> = {
  '.': {
    values: [...CLIENT.values, ...MAIN_ONLY.values].sort(),
    types: [...CLIENT.types, ...MAIN_ONLY.types].sort(),
  },
  './client': CLIENT,
  './nexus': {
    values: [
      'FAILURE_CONVERTER_PATH',
      'PAYMENTS_NEXUS_SERVICE',
      'createDataConverter',
      'paymentsNexusService',
      'sealCardPaymentForNexus',
      'sealMandateForNexus',
      'sealMandateOtpForNexus',
      'sealPosCompletionForNexus',
    ],
    types: [
      'EncryptionKey',
      'EncryptionSettings',
      'MandateDebitOperationInput',
      'MandateOtpOperationInput',
      'MandateRefOperationInput',
      'PaymentsNexusService',
      'PosCompletionOperationInput',
      'PosReleaseOperationInput',
    ],
  },
  './nexus/service': {
    values: ['PAYMENTS_NEXUS_SERVICE', 'paymentsNexusService'],
    types: [
      'MandateDebitOperationInput',
      'MandateOtpOperationInput',
      'MandateRefOperationInput',
      'PaymentsNexusService',
      'PosCompletionOperationInput',
      'PosReleaseOperationInput',
    ],
  },
};

/** package.json "exports": each entry (but ./package.json) and the source file its build comes from. */
function entries(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { default: string }>;
  };
  const out: Record<string, string> = {};
  for (const [entry, target] of Object.entries(pkg.exports)) {
    if (entry === './package.json') continue;
    const built = typeof target === 'string' ? target : target.default;
    out[entry] = join(ROOT, built.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));
  }
  return out;
}

/** Every name each module exports, types included, as the TypeScript checker resolves them. */
function exportedNames(files: string[]): Map<string, string[]> {
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    esModuleInterop: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const file of files) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`TypeScript did not read ${file}`);
    names.set(
      file,
      checker.getExportsOfModule(module).map((s) => s.name),
    );
  }
  return names;
}

const ENTRIES = entries();

it('pins every entry package.json exports (a new entry gets its list here)', () => {
  expect(Object.keys(ENTRIES).sort()).toEqual(Object.keys(PINNED).sort());
});

describe.each(Object.keys(PINNED))('entry %s', (entry) => {
  it('exports at run time exactly the pinned values', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require(ENTRIES[entry]) as Record<string, unknown>;
    expect(Object.keys(loaded).sort()).toEqual(PINNED[entry].values);
  });
});

it('exports exactly the pinned types (the type-only names: interfaces, type aliases)', () => {
  const files = Object.keys(PINNED).map((entry) => ENTRIES[entry]);
  const names = exportedNames(files);
  for (const entry of Object.keys(PINNED)) {
    const all = names.get(ENTRIES[entry]) ?? [];
    const types = all.filter((n) => !PINNED[entry].values.includes(n)).sort();
    expect({ entry, types }).toEqual({ entry, types: PINNED[entry].types });
    // Each run-time name has its declaration (the types a backend's TypeScript sees).
    expect({ entry, undeclared: PINNED[entry].values.filter((n) => !all.includes(n)) }).toEqual({
      entry,
      undeclared: [],
    });
  }
});

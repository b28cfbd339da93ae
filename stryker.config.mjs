// Mutation testing (StrykerJS) of the modules that decide money or trust: `npm run mutation`
// (test/support/mutation.ts starts the Temporal dev server and PostgreSQL once, then runs each group).
// docs/testing.md says what each group covers, the scores, the surviving mutants and the run time.
//
// A group is chosen with MUTATION_GROUP. Each has its own test files, incremental file and reports,
// so one group can be rerun alone and a rerun retests only the mutants whose code or tests changed.
import { readFileSync } from 'node:fs';
import process from 'node:process';

/**
 * `file:first-last` for each named function or method: from its declaration to its closing brace
 * (the first line after it that closes at the declaration's indentation). Found by name, not by
 * number, so the ranges follow the code when other changes move it.
 */
function functionLines(file, ...names) {
  const lines = readFileSync(file, 'utf8').split('\n');
  return names.map((name) => {
    const declaration = new RegExp(
      `^(\\s*)(export )?(async )?(function )?((private|protected|public|static|async) )*${name}[<(]`,
    );
    const first = lines.findIndex((l) => declaration.test(l));
    const indent = first < 0 ? '' : declaration.exec(lines[first])[1];
    const last = lines.findIndex((l, i) => i > first && l === `${indent}}`);
    if (first < 0 || last < 0) throw new Error(`${file}: no function or method ${name}`);
    return `${file}:${first + 1}-${last + 1}`;
  });
}

/** `file:first-last` from the first line holding `from` to the next line holding `to`: a passage inside a function. */
function passageLines(file, from, to) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const first = lines.findIndex((l) => l.includes(from));
  const last = lines.findIndex((l, i) => i > first && l.includes(to));
  if (first < 0 || last < 0) throw new Error(`${file}: no passage from ${from} to ${to}`);
  return `${file}:${first + 1}-${last + 1}`;
}

// Modules that run in Node: per-test coverage sends each mutant only to the tests that reach it.
// Not jest's --findRelatedTests: jest's roots are test/ only, and it missed tests that reach the
// mutated file through another module (src/api/index.ts), so their mutants "survived" untested.
const inNode = { coverageAnalysis: 'perTest', relatedTestsOnly: false };

/** The rules: the not-found rule, the failure reading, the amount check, signatures, redaction of API errors. */
const rules = {
  ...inNode,
  mutate: [
    'src/api/not-found.ts',
    'src/shared/failures.ts',
    'src/activities/failures.ts',
    // amountMismatch only; the rest of the file is durations, types and a query.
    ...functionLines('src/shared/payment-common.ts', 'amountMismatch'),
    'src/webhooks/signatures.ts',
    'src/api/redact.ts',
  ],
  testFiles: [
    'test/api/not-found.test.ts',
    'test/api/errors.test.ts',
    'test/api/redact.test.ts',
    'test/api/pos.test.ts',
    'test/payments/amount-check.test.ts',
    'test/activities/failure-reading.test.ts',
    'test/webhooks/signature-exactness.test.ts',
    'test/webhooks/signatures.test.ts',
    'test/security/redaction-round.test.ts',
  ],
};

/** Log redaction. */
const logging = {
  ...inNode,
  mutate: ['src/logging/logger.ts'],
  testFiles: [
    'test/foundation/logging.test.ts',
    'test/foundation/logging-field-names.test.ts',
    'test/security/redaction-round.test.ts',
    'test/observability/log-trace-ids-logger.test.ts',
  ],
};

/**
 * The receiver's dedupe (its memory of processed notifications and what each handler does with a
 * copy), the credit store's durable claim, and the credit handler. The signature checks are in
 * `rules`; the rest of the receiver (parsing, return page, server) is not a money or trust rule.
 */
const webhooks = {
  ...inNode,
  mutate: [
    ...functionLines('src/webhooks/receiver.ts', 'has', 'add'),
    passageLines('src/webhooks/receiver.ts', 'const dedupeKey = `payment:', 'recent.add(dedupeKey)'),
    passageLines('src/webhooks/receiver.ts', 'const dedupeKey = `va:', "countWebhook('virtual-account'"),
    ...functionLines('src/virtual-accounts/credit-store.ts', 'claim'),
    'src/virtual-accounts/credit-handler.ts',
  ],
  testFiles: [
    'test/webhooks/receiver.test.ts',
    'test/webhooks/receiver-hardening.test.ts',
    'test/webhooks/va-credit-dedupe.test.ts',
    'test/virtual-accounts/va-credit-e2e.test.ts',
    'test/virtual-accounts/credit-callback-window.test.ts',
    'test/virtual-accounts/credit-events.test.ts',
  ],
};

/** The claim-check store (card data at rest). */
const claimCheck = {
  ...inNode,
  // postgres.ts: the store's pool and table set-up (shared with the credit store).
  mutate: ['src/claim-check/store.ts', 'src/claim-check/postgres.ts'],
  testFiles: ['test/claim-check/store.test.ts'],
};

/**
 * Workflow modules run inside the worker's workflow sandbox (a webpack bundle in its own V8
 * context), where neither the active mutant nor coverage counters reach Stryker; see
 * docs/testing.md. test/support/stack.ts hands the active mutant to the bundle, and coverage
 * analysis is off: each mutant runs the group's test files.
 */
const inWorkflow = {
  coverageAnalysis: 'off',
  // The tests name workflows by path, not by import: jest cannot see which tests they are.
  relatedTestsOnly: false,
  // Stops a mutant's run at its first failing test (mutation-environment.ts).
  testEnvironment: '<rootDir>/test/support/mutation-environment.ts',
};

/** The send-once rule. */
const sendOnce = {
  ...inWorkflow,
  mutate: functionLines(
    'src/workflows/steps/send-once.ts',
    'ended',
    'refusalOf',
    'sendOnce',
    'sendAndSettle',
    'settle',
  ),
  testFiles: ['test/send-once/send-once.test.ts'],
};

/** The payment confirmation (verify, webhook and amount decisions of the payment flows). */
const paymentConfirmation = {
  ...inWorkflow,
  mutate: functionLines(
    'src/workflows/steps/payment-confirmation.ts',
    'listenForWebhook',
    'awaitWebhookVerifying',
    'confirmPayment',
  ),
  testFiles: [
    'test/payments/payment-confirmation.test.ts',
    'test/payments/flows-time-skipping.test.ts',
    'test/payments/underpayment.test.ts',
  ],
};

/** The vend. */
const vending = {
  ...inWorkflow,
  // The vend's send, its requeries and what they decide; not its input, status and query plumbing.
  mutate: functionLines('src/workflows/vending.ts', 'purchase', 'watch', 'afterCancel', 'send', 'requery'),
  testFiles: ['test/vending/vending-workflow.test.ts'],
};

// POS in three groups, each mutant run against its own flow's tests only (coverage is off for
// workflow code, so one group of the four flows ran all five files for each of 590 mutants).

/** The POS remote request. */
const posRemote = {
  ...inWorkflow,
  // Its send, its search for a lost request, its following and what a 404 decides; not its input, status and query plumbing.
  mutate: [
    ...functionLines('src/workflows/pos-remote/send.ts', 'create', 'searchLost'),
    ...functionLines('src/workflows/pos-remote/follow.ts', 'follow', 'afterNotFound'),
  ],
  testFiles: ['test/pos/pos-remote-workflow.test.ts', 'test/pos/pos-remote-lifetime.test.ts'],
};

/** The POS terminal sale's send step. */
const posTerminal = {
  ...inWorkflow,
  mutate: functionLines(
    'src/workflows/steps/pos-terminal-send.ts',
    'decide',
    'send',
    'sendFailed',
    'requery',
    'fromTransaction',
  ),
  testFiles: ['test/pos/pos-terminal-workflow.test.ts'],
};

/** The POS refund (and its ledger) and pre-auth completion. */
const posRefund = {
  ...inWorkflow,
  mutate: [
    ...functionLines('src/workflows/pos-refund.ts', 'checkOriginal', 'sentEarlier', 'reserve', 'settle'),
    ...functionLines('src/workflows/pos-refund-ledger.ts', 'reserve', 'checkReserve', 'settle'),
    ...functionLines('src/workflows/pos-preauth.ts', 'checkComplete', 'complete'),
  ],
  testFiles: [
    'test/pos/pos-refund-ledger.test.ts',
    'test/pos/pos-refund-workflow.test.ts',
    'test/pos/pos-preauth-workflow.test.ts',
  ],
};

/** The mandate debit. */
const mandate = {
  ...inWorkflow,
  // The debit: its checks (the validator's and, under the lock, the balance), its send and settling.
  mutate: [
    ...functionLines(
      'src/workflows/mandate/debits.ts',
      'debitUnderLock',
      'checkDebitRequest',
      'sendDebit',
      'settleIfPending',
    ),
    ...functionLines('src/workflows/mandate/ledger.ts', 'heldBack', 'available', 'applyRecord'),
  ],
  testFiles: ['test/mandates/mandate-workflow.test.ts', 'test/mandates/mandate-concurrent-debits.test.ts'],
};

/** In the order `npm run mutation` runs them (test/support/mutation.ts): fastest first. */
export const GROUPS = {
  rules,
  logging,
  'claim-check': claimCheck,
  webhooks,
  'send-once': sendOnce,
  'payment-confirmation': paymentConfirmation,
  vending,
  'pos-refund': posRefund,
  'pos-terminal': posTerminal,
  mandate,
  'pos-remote': posRemote,
};

const name = process.env.MUTATION_GROUP ?? 'rules';
const group = GROUPS[name];
if (!group) throw new Error(`MUTATION_GROUP: one of ${Object.keys(GROUPS).join(', ')}; got ${name}`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'jest',
  jest: {
    configFile: 'jest.config.js',
    enableFindRelatedTests: group.relatedTestsOnly,
    // Stryker 10.0.0's jest runner hands `testFiles` to the initial run only: each mutant run
    // would load every test file under test/ (filtered by test name), which timed out. jest
    // itself is limited to the group's files here.
    config: {
      testMatch: group.testFiles.map((file) => `**/${file}`),
      // Per-test coverage: each mutant loads only the files of the tests that cover it.
      ...(group.testEnvironment && { testEnvironment: group.testEnvironment }),
      ...(group.coverageAnalysis === 'perTest' && {
        setupFilesAfterEnv: ['<rootDir>/test/support/mutation-test-names.ts'],
        testSequencer: '<rootDir>/test/support/mutation-sequencer.mjs',
      }),
    },
  },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: group.mutate,
  // Not Stryker's `testFiles` (jest's testMatch above limits the run instead): Stryker 10.0.0 hands a
  // static mutant the test *file* paths as its test filter, which the jest runner reads as test
  // names, so static mutants ran no test and were reported Survived.
  coverageAnalysis: group.coverageAnalysis,
  incremental: true,
  incrementalFile: `reports/mutation/${name}.incremental.json`,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  thresholds: { high: 95, low: 90, break: null },
  // Two cores shared with everything else: one test runner, and generous time for a mutant whose
  // tests start a Temporal worker.
  concurrency: 1,
  timeoutMS: 20_000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 20,
  // The sandbox needs the sources, tests and config; not the build, the tools or local data.
  ignorePatterns: [
    'dist',
    '.tools',
    '.data',
    'coverage',
    'reports',
    'bench/results',
    'deploy',
    'docs',
    '.git',
    '.stryker-tmp*',
  ],
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};

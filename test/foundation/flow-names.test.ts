// One name per flow (docs/flow-development.md, "Where a flow's code lives"): a flow's files in
// src/shared, src/activities, src/starters and src/starters/commands carry the basename of its
// workflow file in src/workflows, and no file there is named for an area ("payments", "pos"...).
// What serves several flows (or none) is named for what it is and listed below with the reason.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const src = (...p: string[]) => join(ROOT, 'src', ...p);

const FOLDERS = ['shared', 'activities', 'starters', 'starters/commands'] as const;
type Folder = (typeof FOLDERS)[number];

/** Modules that are not one flow's: shared by several flows, or no flow's at all. */
const NOT_A_FLOW: Record<Folder, string[]> = {
  shared: [
    'activity-timeouts',
    'claim-check',
    'duration',
    'failures',
    'flow-metrics',
    // every flow's Web UI summary and details, in one home
    'flow-summary',
    // the vocabulary of final statuses every flow's list picks from
    'final-statuses',
    'input-error',
    'lazy',
    // the events every flow emits to the merchant (the delivery flow's files are merchant-event-delivery)
    'merchant-event',
    'outcome',
    // the card, bank, USSD, checkout and recurring flows' common contract (verify, final statuses, the bank/USSD state)
    'payment-common',
    'payment-webhook',
    // the F3 field rules the POS terminal flows and the API client share
    'pos-card-fields',
    // whether a process runs in production mode, read by config and logging alike
    'production-mode',
    'search-attributes',
    // the main, money and reads task queues' names, shared by workers, flows and starters
    'task-queues',
    // the words of a query refused outside a workflow task, for the guard and the starters
    'task-boundary',
    'workflow-stack-traces',
  ],
  // reconciliation-mandates, reconciliation-window: parts of reconciliation.ts, split for size (the
  // mandate-debit comparison, one window's reading); bind, calls: how every flow's activities are bound
  // to their deps and make their calls; transaction-lookup: the verify read that several flows share
  activities: [
    'bind',
    'calls',
    'claim-check',
    'deps',
    'failures',
    'heartbeat',
    'index',
    'payment-common',
    'reconciliation-mandates',
    'reconciliation-window',
    'transaction-lookup',
  ],
  // ops: operator tools that act on any flow found by its search attributes
  starters: [
    // @payflow/temporal/client: the package's client-only entry
    'client',
    'cli',
    // V8's compile cache for the CLI's process, loaded first by cli.ts
    'compile-cache',
    'connect',
    'index',
    'input-error',
    'ops',
    'payment-common',
    'progress',
    'start-flow',
    // how the card, bank, USSD and checkout starters start a payment (workflow id, duplicate rule)
    'start-payment',
    'temporal-retry',
    // A5 on a saved token outside a running plan: a starter, no flow (docs/choices.md)
    'token',
  ],
  // output: what every command prints and how it exits; status: `pay status` and `pos status` read
  // several flows of their group
  // run-options: the connection and follow flags every command takes; test-environment: A2 and C9, the
  // spec's test-environment calls
  'starters/commands': [
    'context',
    'index',
    'json-file',
    'ops',
    'output',
    'payment-common',
    'run-options',
    'status',
    'test-environment',
  ],
};

/** Names of areas the flows were once grouped under: never a file name again. */
const AREA_NAMES = [
  'payments',
  'pos',
  'mandates',
  'virtual-accounts',
  'bank-ussd',
  'card',
  'schedules',
  'pos-after-sale',
  'virtual-account-webhook',
];

const tsNames = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => basename(e.name, '.ts'));

/** The flows: the workflow files of src/workflows (index.ts registers them; steps/ holds helpers). */
const FLOWS = tsNames(src('workflows')).filter((n) => n !== 'index');

/** Workflow function name -> the flow (workflow file) that defines it. */
function workflowTypes(): Map<string, string> {
  const types = new Map<string, string>();
  for (const flow of FLOWS)
    for (const m of readFileSync(src('workflows', `${flow}.ts`), 'utf8').matchAll(
      /^export (?:async )?function (\w+Workflow)\b/gm,
    ))
      types.set(m[1], flow);
  return types;
}

/** The flows a starter file starts or follows: workflow types it imports or names in a string. */
function flowsStartedBy(file: string, types: Map<string, string>): Set<string> {
  const text = readFileSync(file, 'utf8');
  const flows = new Set<string>();
  for (const m of text.matchAll(/from '\.\.\/workflows\/([\w-]+)'/g)) flows.add(m[1]);
  for (const m of text.matchAll(/'(\w+Workflow)'/g)) {
    const flow = types.get(m[1]);
    if (flow) flows.add(flow);
  }
  return flows;
}

describe('one name per flow across shared, activities, starters and commands', () => {
  const types = workflowTypes();
  const starterFiles = tsNames(src('starters'));

  it('finds the flows and the workflow types the starters expose', () => {
    expect(FLOWS).toEqual(expect.arrayContaining(['card-payment', 'pos-terminal', 'virtual-account-credit']));
    expect(types.get('cardPaymentWorkflow')).toBe('card-payment');
    expect(flowsStartedBy(src('starters', 'card-payment.ts'), types)).toEqual(new Set(['card-payment']));
  });

  it.each(FOLDERS)('src/%s: every file is named after a flow or is a listed module that is no flow', (folder) => {
    const misnamed = tsNames(src(folder)).filter((n) => !FLOWS.includes(n) && !NOT_A_FLOW[folder].includes(n));
    expect(misnamed.map((n) => `src/${folder}/${n}.ts`)).toEqual([]);
  });

  it.each(FOLDERS)('src/%s: no file is named for an area', (folder) => {
    const areas = tsNames(src(folder)).filter((n) => AREA_NAMES.includes(n));
    expect(areas.map((n) => `src/${folder}/${n}.ts`)).toEqual([]);
  });

  it('a flow a starter exposes is started from src/starters/<flow>.ts, and only from there (operator tools apart)', () => {
    const elsewhere: string[] = [];
    const exposed = new Set<string>();
    for (const name of starterFiles) {
      for (const flow of flowsStartedBy(src('starters', `${name}.ts`), types)) {
        exposed.add(flow);
        if (flow !== name && !NOT_A_FLOW.starters.includes(name))
          elsewhere.push(`src/starters/${name}.ts starts ${flow}`);
      }
    }
    expect(elsewhere).toEqual([]);
    const noStarterFile = [...exposed].filter((flow) => !starterFiles.includes(flow));
    expect(noStarterFile).toEqual([]);
  });

  it("a flow's CLI file uses the starter of the same name", () => {
    const wrong = tsNames(src('starters', 'commands'))
      .filter((n) => FLOWS.includes(n))
      .filter((n) => {
        const text = readFileSync(src('starters', 'commands', `${n}.ts`), 'utf8');
        return !existsSync(src('starters', `${n}.ts`)) || !text.includes(`from '../${n}'`);
      });
    expect(wrong.map((n) => `src/starters/commands/${n}.ts`)).toEqual([]);
  });

  it('the listed modules that are no flow exist (a stale entry would hide a misnamed file)', () => {
    const missing = FOLDERS.flatMap((folder) =>
      NOT_A_FLOW[folder].filter((n) => !existsSync(src(folder, `${n}.ts`))).map((n) => `src/${folder}/${n}.ts`),
    );
    expect(missing).toEqual([]);
  });
});

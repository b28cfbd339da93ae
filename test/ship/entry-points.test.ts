// The package's entries other than the main one, loaded by name in a fresh Node process as a backend
// loads them (package self-reference through "exports", after the build):
// - `/client`: the starters and the events' verification for a backend that only starts flows; it
//   must not load @temporalio/worker (the worker's native core and bundler stay out of a backend).
// - `/nexus`: what docs/nexus.md tells a Temporal-native caller to import in its processes: the
//   service definition, the card-sealing helper, the encrypting data converter.
// - `/nexus/service`: the service definition alone, for the caller's workflow code: nothing but
//   nexus-rpc, so the caller's workflow bundle stays deterministic.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { ensureBuilt } from './build';

jest.setTimeout(120_000);

const { name } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { name: string };

interface Loaded {
  /** Each export's name and typeof. */
  exports: Record<string, string>;
  /** The packages of every module the require loaded (`@scope/name` or `name`). */
  packages: string[];
}

/** `require(entry)` in a new Node process: what it exports and which packages it loaded. */
function load(entry: string): Loaded {
  const script = `
    const m = require(${JSON.stringify(entry)});
    const packages = new Set();
    for (const file of Object.keys(require.cache)) {
      const p = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file);
      if (p) packages.add(p[1]);
    }
    const exports = Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v]));
    console.log(JSON.stringify({ exports, packages: [...packages].sort() }));`;
  const run = spawnSync(process.execPath, ['-e', script], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`require(${entry}) exited ${run.status}:\n${run.stderr}`);
  return JSON.parse(run.stdout) as Loaded;
}

beforeAll(() => ensureBuilt(), 300_000);

describe(`${name}/client`, () => {
  it('exports the starters, the step errors and verifyEvent, and loads no @temporalio/worker', () => {
    const client = load(`${name}/client`);
    for (const fn of [
      'connectStarters',
      'closeStarters',
      'startCardPaymentForStep',
      'startCheckout',
      'submitPin',
      'submitOtp',
      'getCardPaymentState',
      'StarterInputError',
      'DuplicateReferenceError',
      'PaymentStepError',
      'verifyEvent',
      'loadConfig',
    ])
      expect([fn, client.exports[fn]]).toEqual([fn, 'function']);
    expect(client.packages).toContain('@temporalio/client');
    expect(client.packages).not.toContain('@temporalio/worker');
    // The operator tools are the main entry's.
    expect(client.exports.ATTENTION_KINDS).toBeUndefined();
    expect(load(name).exports.ATTENTION_KINDS).toBe('object');
  });
});

describe(`${name}/nexus`, () => {
  it('exports the payments service definition, sealCardPaymentForNexus and createDataConverter', () => {
    const nexus = load(`${name}/nexus`);
    expect(nexus.exports).toMatchObject({
      PAYMENTS_NEXUS_SERVICE: 'string',
      paymentsNexusService: 'object',
      sealCardPaymentForNexus: 'function',
      createDataConverter: 'function',
      FAILURE_CONVERTER_PATH: 'string',
    });
    expect(nexus.packages).not.toContain('@temporalio/worker');
  });

  it('/nexus/service loads nothing but nexus-rpc (the caller imports it in workflow code)', () => {
    const service = load(`${name}/nexus/service`);
    expect(service.exports).toEqual({ PAYMENTS_NEXUS_SERVICE: 'string', paymentsNexusService: 'object' });
    expect(service.packages).toEqual(['nexus-rpc']);
  });
});

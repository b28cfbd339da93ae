// `npm run cli -- va ...` as a user runs it against a running stack: account creation names the
// field the service refused (the BVN, the beneficiary account) without ever printing the BVN;
// lookups; the error log and an on-demand sweep that works it off.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServices } from '../../src/stack/services';
import { MISMATCHED_BVN } from '../../src/sandbox';
import { cliEnvironment, runCli } from '../support/cli';
import { startServices, testConfig } from '../support/stack';
import { sandboxAdminCall } from '../support/sandbox-admin';
import { eventually } from '../support/polling';

jest.setTimeout(120_000);

const config = testConfig();
let services: RunningServices;
beforeAll(async () => {
  services = await startServices(config, {
    sandbox: { webhookRetryScheduleMs: [50] },
  });
}, 60_000);
afterAll(() => services?.stop());

/** `va <args>`. */
const cli = (args: string[]) => runCli(['va', ...args], { env: cliEnvironment(config, services.sandboxUrl!) });
const bvnFile = (bvn: string) => {
  const file = join(mkdtempSync(join(tmpdir(), 'va-cli-')), 'bvn.txt');
  writeFileSync(file, `${bvn}\n`, { mode: 0o600 });
  return file;
};
const person = (id: string, bvn: string) => [
  'create',
  '--customer-id',
  id,
  '--first-name',
  'Ada',
  '--last-name',
  'Obi',
  '--phone',
  '08012345678',
  '--dob',
  '01/15/1990',
  '--gender',
  '2',
  '--address',
  '1 Marina',
  '--bvn-file',
  bvnFile(bvn),
];

describe('`npm run cli -- va ...` as a user runs it against a running stack', () => {
  it('va create: a BVN that does not match the person is refused with the field named (bvn), and the BVN is never printed', async () => {
    const r = await cli(person(`CUST${randomUUID().slice(0, 8)}`, MISMATCHED_BVN));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /the virtual account was not created: bvn: Validation Failure, BVN details do not match the customer details/,
    );
    expect(r.stdout + r.stderr).not.toContain(MISMATCHED_BVN);
  });

  it('va create: bad input is refused before anything is sent, every field named with its rule', async () => {
    const args = person(`CUST${randomUUID().slice(0, 8)}`, '123');
    args[args.indexOf('--phone') + 1] = '0801234567890';
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/invalid customer virtual account input: .*mobile_num .*11 digits/);
    expect(r.stderr).toMatch(/bvn must be 11 digits/);
  });

  it('va create-business: a beneficiary account the partner bank does not know is refused as beneficiary_account (424)', async () => {
    const r = await cli([
      'create-business',
      '--customer-id',
      `BIZ${randomUUID().replace(/-/g, '').slice(0, 8)}`,
      '--business-name',
      'Acme',
      '--phone',
      '08012345678',
      '--bvn-file',
      bvnFile('12345678901'),
      '--beneficiary',
      '9999999999',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/beneficiary_account: Validation Failure No record found for Account number-9999999999/);
  });

  it('va create, account, customer, transactions; a transfer whose notification failed shows in error-log and a sweep works it off', async () => {
    const id = `CUST${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    const created = await cli(person(id, '12345678901'));
    expect(created.code).toBe(0);
    const account = JSON.parse(created.stdout) as { virtual_account_number: string; customer_identifier: string };
    expect(account.customer_identifier).toBe(id);

    expect(JSON.parse((await cli(['account', id])).stdout)).toMatchObject({
      virtual_account_number: account.virtual_account_number,
    });
    expect(JSON.parse((await cli(['customer', account.virtual_account_number])).stdout)).toMatchObject({
      customer_identifier: id,
      first_name: 'Ada',
    });

    await sandboxAdminCall(services.sandboxUrl!, 'POST', '/webhook-faults', {
      kind: 'fail',
      count: 2,
      target: 'virtual-account',
    });
    await services.api.virtualAccounts.simulatePayment({
      virtual_account_number: account.virtual_account_number,
      amount: '1200.00',
    });
    const tx = await cli(['transactions', '--customer-id', id]);
    const ref = /^(\S+)\s+\d{10}\s+1200\.00 NGN/m.exec(tx.stdout)?.[1];
    expect(ref).toBeDefined();

    const log = await cli(['error-log']);
    expect(log.stdout).toContain(ref!);
    const swept = await cli(['sweep']);
    expect(swept.code).toBe(0);
    expect(swept.stdout).toMatch(/started 1, already known 0, deleted 1, left 0, invalid 0/);
    expect((await cli(['error-log'])).stdout).not.toContain(ref!);
    // The sweep starts the credit's flow; its hand-over to the merchant's handler may still be under way.
    const credit = await eventually(
      async () => JSON.parse((await cli(['credit', ref!])).stdout) as { status: string },
      (c) => !['recording', 'confirming', 'handing_over'].includes(c.status),
      { timeoutMs: 30_000, intervalMs: 200, description: 'the credit handed over', returnLastOnTimeout: true },
    );
    expect(credit).toMatchObject({
      status: 'credited',
      transactionReference: ref,
    });
    const retry = await cli(['retry-handoff', ref!, '--operator', 'ops', '--reason', 'test']);
    expect(retry.code).toBe(2); // names no running flow: bad input (docs/cli.md, exit codes)
    expect(retry.stderr).toMatch(/already completed/); // only a handoff_failed credit (still running) takes it
  });
});

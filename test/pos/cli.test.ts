// The CLI commands (`npm run cli -- pos …` / `vend …`) as a user runs them, against a running
// stack (dev server, worker, sandbox): they print one progress line per state and the result,
// and `pos session` never prints the pin_key.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServices } from '../../src/stack/services';
import { cliEnvironment, runCliOk } from '../support/cli';
import { startServices, testConfig } from '../support/stack';
import { sandboxCard, shortRef } from './sandbox';
import { SandboxAdmin } from '../support/sandbox-admin';
import { runPosTransaction } from '../../src/starters/pos-terminal';
import { refundMerchantRef } from '../../src/shared/pos-refund';
import { completionMerchantRef } from '../../src/shared/pos-preauth';

const config = testConfig();
let services: RunningServices;
let admin: SandboxAdmin;

beforeAll(async () => {
  services = await startServices(config, {
    sandbox: { posRemoteCompleteAfterMs: 1_000 },
  });
  admin = new SandboxAdmin(services.sandboxUrl!);
}, 60_000);
afterAll(() => services?.stop());

/** A command that must succeed: a non-zero exit rejects (with its code and output). */
const cli = (args: string[]) => runCliOk(args, { env: cliEnvironment(config, services.sandboxUrl!) });

describe('the POS and vending commands, as a user runs them', () => {
  it('pos session prints the terminal and never the pin_key', async () => {
    const { stdout } = await cli(['pos', 'session', '--serial', 'SN-0002']);
    const keys = await services.api.posTerminal.keyExchange({ serial_no: 'SN-0002' }); // same keys until a refresh
    expect(stdout).toContain('"terminalId": "2SBX0002"');
    expect(stdout).toContain('pin_key received');
    expect(stdout.toUpperCase()).not.toContain(keys.data.pin_key.toUpperCase());
  });

  it('pos transaction reads the card from a file and shows each state until approved', async () => {
    const keys = await services.api.posTerminal.keyExchange({ serial_no: 'SN-0001' });
    const ref = shortRef('cli');
    const dir = mkdtempSync(join(tmpdir(), 'pos-cli-'));
    const file = join(dir, 'card.json');
    const { terminal_id: _t, ...card } = sandboxCard('0096', ref, '', keys.data.pin_key);
    writeFileSync(file, JSON.stringify(card));
    const { stdout } = await cli(['pos', 'transaction', '--file', file, '--serial', 'SN-0001']);
    if (process.env.SHOW_CLI) console.log(stdout);
    expect(stdout).toContain(`started pos-txn-${ref}`);
    expect(stdout).toMatch(new RegExp(`\\[pos-txn ${ref}\\] .*attempt=`));
    expect(stdout).toContain('"status": "approved"');
    expect(stdout).not.toContain(card.card_pan);
    expect(stdout).not.toContain(card.pin_block!);
    expect(await admin.ledger({ reference: ref, kind: 'pos_sale' })).toHaveLength(1);
  });

  it('pos refund refunds part of a sale; pos preauth holds, pos complete captures once (a second one is refused)', async () => {
    const keys = await services.api.posTerminal.keyExchange({ serial_no: 'SN-0001' });
    const saleRef = shortRef('cls');
    expect(
      await runPosTransaction(services.starters, sandboxCard('0000', saleRef, '2SBX0001', keys.data.pin_key)),
    ).toMatchObject({ status: 'approved' });
    const dir = mkdtempSync(join(tmpdir(), 'pos-cli-'));
    const file = (name: string, body: unknown) => {
      writeFileSync(join(dir, name), JSON.stringify(body));
      return join(dir, name);
    };
    const read = () => {
      const {
        terminal_id: _t,
        merchant_ref: _m,
        transaction_type: _x,
        options: _o,
        ...card
      } = sandboxCard('0000', 'x', '', keys.data.pin_key);
      void [_t, _m, _x, _o];
      return card;
    };
    const refundId = `rq-${saleRef}`;
    const refund = await cli([
      'pos',
      'refund',
      '--file',
      file('refund.json', read()),
      '--refund-id',
      refundId,
      '--original',
      saleRef,
      '--amount',
      '70000',
      '--serial',
      'SN-0001',
    ]);
    if (process.env.SHOW_CLI) console.log(refund.stdout);
    expect(refund.stdout).toContain(`started pos-refund-${refundMerchantRef(refundId)}`);
    expect(refund.stdout).toMatch(
      new RegExp(`\\[pos-refund ${refundMerchantRef(refundId)} of ${saleRef}\\] approved .*left=180000/250000`),
    );
    expect(await admin.ledger({ reference: refundMerchantRef(refundId), kind: 'pos_refund' })).toHaveLength(1);

    const pre = shortRef('clp');
    const held = await cli([
      'pos',
      'preauth',
      '--file',
      file('pre.json', { ...read(), amount: 90000, merchant_ref: pre }),
      '--serial',
      'SN-0001',
      '--hold-window',
      '2 days',
    ]);
    if (process.env.SHOW_CLI) console.log(held.stdout);
    expect(held.stdout).toContain(`started pos-preauth-${pre}`);
    expect(held.stdout).toMatch(new RegExp(`\\[pos-preauth ${pre}\\] held held=90000 .*until=`));
    const done = await cli([
      'pos',
      'complete',
      '--merchant-ref',
      pre,
      '--file',
      file('complete.json', read()),
      '--amount',
      '85000',
    ]);
    if (process.env.SHOW_CLI) console.log(done.stdout);
    expect(done.stdout).toContain(`completion ${completionMerchantRef(pre)} of 85000 accepted`);
    expect(done.stdout).toContain('"status": "completed"');
    expect(await admin.ledger({ reference: completionMerchantRef(pre), kind: 'pos_sale' })).toEqual([
      expect.objectContaining({ amount: 85_000 }),
    ]);
    const again = await cli([
      'pos',
      'complete',
      '--merchant-ref',
      pre,
      '--file',
      file('again.json', read()),
      '--amount',
      '1000',
    ]).catch((e: { stderr: string; code: number }) => e);
    expect((again as { code: number }).code).toBe(1);
    expect((again as { stderr: string }).stderr).toMatch(/no pre-authorisation is held under this merchant_ref/);
    for (const out of [refund.stdout, held.stdout, done.stdout]) expect(out).not.toContain(read().card_pan);
  });

  it('pos remote follows the request until the terminal completes it', async () => {
    const reference = shortRef('clr');
    const { stdout } = await cli([
      'pos',
      'remote',
      '--reference',
      reference,
      '--terminal',
      '2SBX0001',
      '--amount',
      '120000',
      '--poll-interval-ms',
      '200',
    ]);
    expect(stdout).toContain(`started pos-remote-${reference}`);
    expect(stdout).toMatch(new RegExp(`\\[pos-remote ${reference}\\] pending request_ref=RR`));
    expect(stdout).toContain('"status": "success"');
  });

  it('vend buy shows the steps and prints the token; bad input names the field', async () => {
    const order = shortRef('clv');
    const { stdout } = await cli([
      'vend',
      'buy',
      '--order',
      order,
      '--provider',
      'EKEDC',
      '--meter',
      '45067198783',
      '--amount',
      '3000',
      '--phone',
      '08012345678',
      '--email',
      'ada@example.com',
    ]);
    if (process.env.SHOW_CLI) console.log(stdout);
    expect(stdout).toContain(`started vend-${order}`);
    expect(stdout).toMatch(/"status": "vended"/);
    expect(stdout).toMatch(/"token": "\d{4}(-\d{4}){4}"/);
    const bad = await cli([
      'vend',
      'buy',
      '--order',
      shortRef('clb'),
      '--provider',
      'EKEDC',
      '--meter',
      '45067198783',
      '--amount',
      '30.5',
      '--phone',
      '0801',
      '--email',
      'ada@example.com',
    ]).catch((e: { stderr: string; code: number }) => e);
    expect((bad as { code: number }).code).toBe(2);
    expect((bad as { stderr: string }).stderr).toMatch(
      /amount must be a whole amount.*phone_number must be a phone number/,
    );
  });
});

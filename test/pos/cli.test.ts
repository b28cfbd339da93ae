// The CLI commands (`npm run cli -- pos …` / `vend …`) as a user runs them, against a running
// stack (dev server, worker, sandbox): they print one progress line per state and the result,
// and `pos session` never prints the pin_key.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '../../src/logging/logger';
import { runServices, type RunningServices } from '../../src/stack/services';
import { LogCapture, testConfig, workflowBundle } from '../helpers/temporal';
import { SandboxAdmin, sandboxCard, shortRef } from './sandbox';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', 'src', 'starters', 'cli.ts');
const config = testConfig();
let services: RunningServices;
let admin: SandboxAdmin;

beforeAll(async () => {
  services = await runServices({ config, logger: createLogger({ destination: new LogCapture() }), workflowBundle: await workflowBundle(), sandbox: { posRemoteCompleteAfterMs: 1_000 } });
  admin = new SandboxAdmin(services.sandboxUrl!);
}, 60_000);
afterAll(() => services?.stop());

async function cli(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['--import', 'tsx', CLI, ...args], {
    env: { ...process.env, TEMPORAL_ADDRESS: config.temporal.address, TEMPORAL_TASK_QUEUE: config.temporal.taskQueue, CLAIM_CHECK_DATABASE_URL: config.claimCheck.databaseUrl, PAYMENTS_BASE_URL: services.sandboxUrl!, SANDBOX_ENABLED: 'false', LOG_LEVEL: 'warn' },
    timeout: 60_000,
  });
}

describe('CLI', () => {
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

  it('pos remote follows the request until the terminal completes it', async () => {
    const reference = shortRef('clr');
    const { stdout } = await cli(['pos', 'remote', '--reference', reference, '--terminal', '2SBX0001', '--amount', '120000', '--poll-interval-ms', '200']);
    expect(stdout).toContain(`started pos-remote-${reference}`);
    expect(stdout).toMatch(new RegExp(`\\[pos-remote ${reference}\\] pending request_ref=RR`));
    expect(stdout).toContain('"status": "success"');
  });

  it('vend buy shows the steps and prints the token; bad input names the field', async () => {
    const order = shortRef('clv');
    const { stdout } = await cli(['vend', 'buy', '--order', order, '--provider', 'EKEDC', '--meter', '45067198783', '--amount', '3000', '--phone', '08012345678', '--email', 'ada@example.com']);
    if (process.env.SHOW_CLI) console.log(stdout);
    expect(stdout).toContain(`started vend-${order}`);
    expect(stdout).toMatch(/"status": "vended"/);
    expect(stdout).toMatch(/"token": "\d{4}(-\d{4}){4}"/);
    const bad = await cli(['vend', 'buy', '--order', shortRef('clb'), '--provider', 'EKEDC', '--meter', '45067198783', '--amount', '30.5', '--phone', '0801', '--email', 'ada@example.com']).catch((e: { stderr: string; code: number }) => e);
    expect((bad as { code: number }).code).toBe(1);
    expect((bad as { stderr: string }).stderr).toMatch(/amount must be a whole amount.*phone_number must be a phone number/);
  });
});

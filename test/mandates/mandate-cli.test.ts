// The mandate CLI (`npm run cli -- mandate …`) as a user runs it against a running stack (dev
// server, worker, sandbox): start from a file, a wrong OTP prints the reason and exits 1, a debit
// below N200 or over the balance is refused by the flow with exit 2, a debit, status with the
// debits, D5 listing with a cursor, cancel twice.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { debitKeyReference, type MandateRequest } from '../../src/shared/mandate';
import { MANDATE_OTP } from '../../src/sandbox';
import { getMandateState } from '../../src/starters/mandate';
import { cliAgainst } from '../support/cli';
import { eventually } from '../support/polling';
import { testConfig, useServices } from '../support/stack';

const config = testConfig();
const stack = useServices(config);
const { cli } = cliAgainst(config, stack);

describe('the mandate CLI as a user runs it', () => {
  it('mandate start / otp / debit / status / list / cancel from the command line', async () => {
    const lastName = `C${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    const ref = `CLI${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    const input: MandateRequest = {
      mandateRef: ref,
      debitType: 'variable',
      amount: 500_000,
      accountNumber: '0123456789',
      bankCode: '058',
      description: 'CLI test',
      startDate: '2026-01-01',
      endDate: '2099-12-31',
      customerEmail: `${ref.toLowerCase()}@example.com`,
      customer: { bvn: '22212345678', firstName: 'Ada', lastName, address: '1 Way', phone: '08012345678' },
    };
    const dir = mkdtempSync(join(tmpdir(), 'mandate-cli-'));
    const file = join(dir, 'mandate.json');
    writeFileSync(file, JSON.stringify(input));
    // A second mandate for the same customer name, to page through with a cursor below: started
    // beside the first (nothing it does touches the first).
    const second = { ...input, mandateRef: `${ref}B`, customerEmail: `b-${input.customerEmail}` };
    const secondFile = join(dir, 'second.json');
    writeFileSync(secondFile, JSON.stringify(second));

    const [started] = await Promise.all([
      cli(['mandate', 'start', '--file', file]),
      cli(['mandate', 'start', '--file', secondFile]),
    ]);
    expect(started.stdout).toContain(`started mandate-${ref}`);
    expect(started.stdout).not.toContain(input.customer.bvn);

    // Waited for in-process (a CLI process per read cost a second of CPU each); then `status` shows it.
    await eventually(async () => (await getMandateState(stack.services.starters, ref)).status === 'awaiting_otp', {
      timeoutMs: 30_000,
      ignoreErrors: true,
      description: `mandate ${ref} awaiting_otp`,
    });
    const status = (await cli(['mandate', 'status', '--ref', ref])).stdout;
    expect(status).toContain(`[mandate ${ref}] awaiting_otp balance=500000`);

    const wrong = await cli(['mandate', 'otp', '--ref', ref], '000000\n');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('Invalid OTP');
    expect((await cli(['mandate', 'otp', '--ref', ref], `${MANDATE_OTP}\n`)).stdout).toContain(
      `[mandate ${ref}] approved`,
    );

    // Both refused by the flow's Update validator (nothing changes): side by side.
    const [below, over] = await Promise.all([
      cli(['mandate', 'debit', '--ref', ref, '--amount', '19999']),
      cli(['mandate', 'debit', '--ref', ref, '--amount', '500001']),
    ]);
    // Refused by the flow's Update validator: nothing ran, so bad input (exit 2), with the reason.
    expect(below.code).toBe(2);
    expect(below.stderr).toContain('amount must be at least 20000 kobo (N200)');
    expect(over.code).toBe(2);
    expect(over.stderr).toContain('exceeds the remaining balance 500000');
    // Run twice with the same key (a retried script): one debit.
    const debitRef = debitKeyReference(ref, 'cli-order-1');
    expect(
      (await cli(['mandate', 'debit', '--ref', ref, '--amount', '150000', '--key', 'cli-order-1'])).stdout,
    ).toContain(`${debitRef} success 150000 key=cli-order-1`);
    expect(
      (await cli(['mandate', 'debit', '--ref', ref, '--amount', '150000', '--key', 'cli-order-1'])).stdout,
    ).toContain(`${debitRef} success 150000 key=cli-order-1`);

    const [shown, listed] = (
      await Promise.all([
        cli(['mandate', 'status', '--ref', ref, '--debits']),
        cli(['mandate', 'list', '--merchant-ref', ref]),
      ])
    ).map((r) => r.stdout);
    expect(shown).toContain('approved balance=350000 debited=150000 debits=1');
    expect(shown).toContain(`  ${debitRef} requested 150000 success`);

    expect(listed).toMatch(
      new RegExp(`MD\\d+ approved variable amount=500000 balance=350000 debited=150000 ref=${ref}`),
    );
    expect(listed).toContain('end of list');

    // The two mandates, paged through with a cursor.
    const [page1, all, badFlag] = await Promise.all([
      cli(['mandate', 'list', '--customer-name', `Ada ${lastName}`, '--page-size', '1']).then((r) => r.stdout),
      cli(['mandate', 'list', '--customer-name', `Ada ${lastName}`, '--page-size', '1', '--all']),
      cli(['mandate', 'list', '--approved', 'maybe']),
    ]);
    const cursor = /more: next_cursor=(\S+)/.exec(page1)?.[1];
    expect(cursor).toBeDefined();
    const page2 = (
      await cli(['mandate', 'list', '--customer-name', `Ada ${lastName}`, '--page-size', '1', '--cursor', cursor!])
    ).stdout;
    expect(page2).toContain('end of list');
    expect([page1, page2].join('\n')).toContain(`ref=${ref}B`);
    expect(all.stdout).toContain('2 mandate(s)');
    expect(badFlag.stderr).toContain('--approved must be true or false');

    // Cancel twice (the second answers the same), and the other mandate by signal, beside them.
    const [, cancelledB] = await Promise.all([
      (async () => {
        expect((await cli(['mandate', 'cancel', '--ref', ref])).stdout).toContain(
          `[mandate ${ref}] cancelled balance=350000`,
        );
        expect((await cli(['mandate', 'cancel', '--ref', ref])).stdout).toContain(
          `[mandate ${ref}] cancelled balance=350000`,
        );
      })(),
      cli(['mandate', 'cancel', '--ref', `${ref}B`, '--signal']),
    ]);
    expect(cancelledB.stdout).toContain(`cancel requested for mandate-${ref}B`);
  }, 180_000);
});

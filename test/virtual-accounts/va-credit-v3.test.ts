// E-2 version 3 end to end (issue #26 §4): the sandbox signs v3 notifications for real, a capture
// server keeps each one's raw bytes and signature, and the test forwards them (sometimes with
// unsigned fields altered, as anyone on the way could) to the real receiver over HTTP; the real
// worker runs the credit workflow against the real dev server.
//
// A v3 reference is not the one C5 knows ("requeries must still use the previous format"), so the
// credit's unsigned fee and date can only come from C5 looked up by `session_id`, and only from a
// row whose signed values match. When C5 cannot be reached the credit stands on the six signed
// values alone (docs/flows-virtual-accounts.md, "Only signed values"): nothing from the body's
// unsigned fields is ever taken.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningServices } from '../../src/stack/services';
import { createLogger } from '../../src/logging/logger';
import { VA_SIGNATURE_HEADER } from '../../src/sandbox';
import type { VirtualAccountTransaction } from '../../src/api';
import {
  virtualAccountCreditWorkflowId,
  type VirtualAccountCreditOutcome,
} from '../../src/shared/virtual-account-credit';
import { LogCapture, startServices, testConfig } from '../support/stack';
import { eventually } from '../support/polling';
import { sandboxAdminCall } from '../support/sandbox-admin';
import { READ_RETRY } from '../../src/workflows/steps/activity-options';

jest.setTimeout(180_000);

const logger = createLogger({ destination: new LogCapture(), level: 'warn' });
const C5_PATH = '^/virtual-account/merchant/transactions/all$';
const FORGED_FEE = '999.99';
const FORGED_DATE = '2001-01-01T00:00:00.000Z';
/** The payments client's deadline in this stack: a C5 answer slower than this is a timeout. */
const TIMEOUT_MS = 2000;

interface Captured {
  raw: string;
  signature: string;
  body: Record<string, unknown>;
}

/** Stands where the merchant's webhook URL is: keeps each notification as sent, acknowledges it as the spec asks. */
class CaptureServer {
  readonly notifications: Captured[] = [];
  url = '';
  private server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(raw) as Record<string, unknown>;
      this.notifications.push({ raw, signature: String(req.headers[VA_SIGNATURE_HEADER] ?? ''), body });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          response_code: 200,
          transaction_reference: body.transaction_reference,
          response_description: 'Success',
        }),
      );
    });
  });
  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks`;
  }
  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

describe('E-2 version 3: the session_id lookup through C5, and the signed values when C5 cannot answer', () => {
  const capture = new CaptureServer();
  let services: RunningServices;

  beforeAll(async () => {
    await capture.start();
    services = await startServices(testConfig({ PAYMENTS_TIMEOUT_MS: String(TIMEOUT_MS) }), {
      logger,
      sandbox: { webhookVersion: 3, webhookUrl: capture.url },
      creditHandler: async () => ({ detail: 'booked' }),
    });
  });
  afterAll(async () => {
    await services?.stop();
    await capture.close();
  });

  const admin = <T>(method: string, path: string, body?: unknown) =>
    sandboxAdminCall<T>(services.sandboxUrl!, method, path, body);

  /** A transfer into a fresh account: the notification the sandbox sent, and the service's own (C5) row for it. */
  async function transfer(amount: string): Promise<{ sent: Captured; row: VirtualAccountTransaction }> {
    const account = (
      await services.api.virtualAccounts.createCustomer({
        customer_identifier: `CUST${randomUUID().replace(/-/g, '').slice(0, 12)}`,
        first_name: 'Ada',
        last_name: 'Obi',
        mobile_num: '08012345678',
        bvn: '12345678901',
        dob: '01/15/1990',
        gender: '1',
        address: '1 Test Street',
      })
    ).data.virtual_account_number;
    await services.api.virtualAccounts.simulatePayment({ virtual_account_number: account, amount });
    const sent = await eventually(
      async () => capture.notifications.find((n) => n.body.virtual_account_number === account),
      (n) => n !== undefined,
      { attempts: 100, intervalMs: 50, description: 'the v3 notification' },
    );
    const rows = (
      await services.api.virtualAccounts.merchantTransactionsFiltered({ virtualAccount: account, perPage: 5 })
    ).data.rows;
    expect(rows).toHaveLength(1);
    return { sent: sent!, row: rows[0]! };
  }

  /** Posts a notification to the receiver with the signature the sandbox made; answers the HTTP status. */
  async function deliver(body: Record<string, unknown>, signature: string): Promise<number> {
    const res = await fetch(`${services.webhookUrl}/webhooks`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', [VA_SIGNATURE_HEADER]: signature },
      body: JSON.stringify(body),
    });
    await res.text();
    return res.status;
  }

  const outcomeOf = (ref: string) =>
    eventually(
      () =>
        services.client.workflow
          .getHandle(virtualAccountCreditWorkflowId(ref))
          .result() as Promise<VirtualAccountCreditOutcome>,
      () => true,
      { attempts: 600, intervalMs: 100, description: `the credit ${ref}`, ignoreErrors: true },
    );

  /** The six signed values as the credit must carry them. */
  const signedOf = (b: Record<string, unknown>) => ({
    transactionReference: b.transaction_reference,
    virtualAccountNumber: b.virtual_account_number,
    principalAmount: b.principal_amount,
    settledAmount: b.settled_amount,
    currency: b.currency,
    customerIdentifier: b.customer_identifier,
  });

  it('the sandbox sends v3: a new-format reference C5 does not know, and a session_id', async () => {
    const { sent, row } = await transfer('1200.00');
    expect(sent.body).toMatchObject({ version: 'v3', session_id: expect.stringMatching(/^\d{30}$/) });
    expect(sent.body.transaction_reference).toMatch(/^V3[0-9A-F]{32}$/);
    expect(row.transaction_reference).not.toBe(sent.body.transaction_reference);
    const byRef = await services.api.virtualAccounts.merchantTransactionsFiltered({
      transactionReference: String(sent.body.transaction_reference),
    });
    expect(byRef.data.rows).toHaveLength(0);
  });

  it("a v3 credit's fee and date are the ones C5 answers for its session_id, not the notification's (altered on the way)", async () => {
    const { sent, row } = await transfer('2300.00');
    const altered = { ...sent.body, fee_charged: FORGED_FEE, transaction_date: FORGED_DATE };
    expect(await deliver(altered, sent.signature)).toBe(200);
    const outcome = await outcomeOf(String(sent.body.transaction_reference));
    expect(outcome).toMatchObject({
      status: 'credited',
      credit: {
        ...signedOf(sent.body),
        version: 3,
        fieldsSource: 'service-query',
        feeCharged: row.fee_charged,
        transactionDate: row.transaction_date,
      },
      handoff: { status: 'delivered' },
    });
    expect(row.fee_charged).not.toBe(FORGED_FEE);
  });

  it("a session_id that names another credit: that row's signed values do not match, so nothing unsigned is taken", async () => {
    const other = await transfer('3100.00');
    const { sent } = await transfer('3200.00');
    const altered = { ...sent.body, session_id: other.sent.body.session_id, fee_charged: FORGED_FEE };
    expect(await deliver(altered, sent.signature)).toBe(200);
    const outcome = await outcomeOf(String(sent.body.transaction_reference));
    expect(outcome.credit).toMatchObject({ ...signedOf(sent.body), fieldsSource: 'unconfirmed' });
    expect(outcome.credit).not.toHaveProperty('feeCharged');
    expect(outcome.credit).not.toHaveProperty('transactionDate');
  });

  it("the unsigned version changed to v2: the lookup is by the v3 reference, which C5 does not know; the body's fee is still not taken", async () => {
    const { sent } = await transfer('3300.00');
    const altered = { ...sent.body, version: 'v2', fee_charged: FORGED_FEE, transaction_date: FORGED_DATE };
    expect(await deliver(altered, sent.signature)).toBe(200);
    const outcome = await outcomeOf(String(sent.body.transaction_reference));
    expect(outcome.credit).toMatchObject({ ...signedOf(sent.body), version: 2, fieldsSource: 'unconfirmed' });
    expect(outcome.credit).not.toHaveProperty('feeCharged');
    expect(outcome.handoff).toMatchObject({ status: 'delivered' });
  });

  // Exactly the confirmation's attempts fail (the read policy's bound); the freeze check after it gets an answer.
  // Each case waits out the policy's real backoff (about 15 s), so the three run side by side: each
  // fault is scoped to its own credit's session_id (the C5 lookup's query), so none takes another's.
  describe('C5 cannot answer', () => {
    const attempts = READ_RETRY.maximumAttempts!;
    const faults: [string, Record<string, unknown>][] = [
      ['answers 503', { kind: 'error5xx', status: 503 }],
      ['closes the connection without an answer', { kind: 'reset' }],
      ['answers later than the client waits (timeout)', { kind: 'latency', latencyMs: TIMEOUT_MS + 1000 }],
    ];
    interface Run {
      sent: Captured;
      status: number;
      outcome: VirtualAccountCreditOutcome;
      /** The C5 lookups logged while the cases ran (all three cases'). */
      asked: number;
      /** This credit's fault rule if it is still there (it goes once its `attempts` matches are used). */
      ruleLeft: unknown;
    }
    const runs = new Map<string, Promise<Run>>();

    async function run(fault: Record<string, unknown>, before: number): Promise<Run> {
      const { sent } = await transfer('4400.00');
      const query = `session_id=${String(sent.body.session_id)}`;
      await admin('POST', '/faults', { method: 'GET', path: C5_PATH, query, count: attempts, ...fault });
      const altered = { ...sent.body, fee_charged: FORGED_FEE, transaction_date: FORGED_DATE };
      const status = await deliver(altered, sent.signature);
      const outcome = await outcomeOf(String(sent.body.transaction_reference));
      const asked = (await admin<{ path: string }[]>('GET', '/requests'))
        .slice(before)
        .filter((r) => r.path === '/virtual-account/merchant/transactions/all').length;
      const ruleLeft = (await admin<{ query?: string }[]>('GET', '/faults')).find((r) => r.query === query);
      return { sent, status, outcome, asked, ruleLeft };
    }

    beforeAll(async () => {
      const before = (await admin<unknown[]>('GET', '/requests')).length;
      for (const [what, fault] of faults) {
        const p = run(fault, before);
        p.catch(() => undefined); // awaited (and reported) by its own test
        runs.set(what, p);
      }
      await Promise.allSettled(runs.values());
    });
    afterAll(() => admin('DELETE', '/faults'));

    it.each(faults)('C5 %s: the credit is recorded and handed over on the signed values alone', async (what) => {
      const { sent, status, outcome, asked, ruleLeft } = await runs.get(what)!;
      expect(status).toBe(200);
      expect(outcome).toMatchObject({
        status: 'credited',
        credit: { ...signedOf(sent.body), version: 3, fieldsSource: 'unconfirmed' },
        handoff: { status: 'delivered' },
      });
      expect(outcome.credit).not.toHaveProperty('feeCharged');
      expect(outcome.credit).not.toHaveProperty('transactionDate');
      // Every attempt of the confirmation asked C5 and failed (this credit's fault is used up); only
      // then did the credit go on without it.
      expect(ruleLeft).toBeUndefined();
      expect(asked).toBeGreaterThanOrEqual(attempts);
    });
  });
});

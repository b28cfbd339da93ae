// POS remote request (E): the create pushes a payment to a terminal (E1); a simulated terminal completes it
// after posRemoteCompleteAfterMs on the sandbox clock (the amount decides the outcome, or an
// admin call decides it); the requery reads it (E2); the record is deleted 5 minutes after creation.
// Every request is also a transaction of the merchant: the transaction list shows it (transaction_ref = request_ref,
// meta source 'pos_remote', device_id = terminal_id; pending, then success/failed, or abandoned
// when its lifetime ends) and keeps it after the requery forgets it (docs/choices.md).
import { randomUUID } from 'node:crypto';
import type { SandboxClock } from './clock';
import { z } from 'zod';
import { addRoutes, fail, MERCHANT_ID, ok, randomDigits, type Reply, type RequestContext, type Router } from './http';
import type { Ledger } from './ledger';
import { TEST_TERMINALS } from './pos-terminal';
import { oneOf, pathParams, positiveNumber, text, type RouteFields } from './validation';

export const POS_REMOTE_LIFETIME_MS = 5 * 60 * 1000;
export const DEFAULT_POS_REMOTE_COMPLETE_AFTER_MS = 4_000;
/** Documented test amounts (kobo) for the simulated terminal. Any other amount > 0 is approved. */
export const POS_REMOTE_DECLINED_AMOUNT = 5100; // declined: response_code 51 (insufficient funds)
export const POS_REMOTE_WRONG_PIN_AMOUNT = 5500; // declined: response_code 55 (incorrect PIN)
export const POS_REMOTE_NEVER_COMPLETES_AMOUNT = 9900; // stays pending until deleted
const ACCOUNT_TYPES = ['default', 'savings', 'current', 'credit'];
const REQUEST_PAYMENT_FIELDS: RouteFields = {
  body: z.object({
    terminal_id: text(),
    amount: positiveNumber('must be a number greater than 0'),
    account_type: oneOf(ACCOUNT_TYPES, 'must be one of default, savings, current, credit').optional(),
  }),
};
const PC_CODES: Record<string, string> = { default: '0000', savings: '0010', current: '0020', credit: '0030' };
const MESSAGES: Record<string, string> = { '00': 'Approved', '51': 'Insufficient funds', '55': 'Incorrect PIN' };

interface RemoteRequest {
  ref: string;
  id: number;
  terminalId: string;
  amount: number;
  accountType: string;
  createdAt: number;
  record?: Record<string, unknown>;
  cancelTimers: (() => void)[];
}

export interface PosRemoteApi {
  /** Admin: the terminal completes the request now with this response code ('00' approves). */
  decide(ref: string, responseCode: string): Reply;
  /** Every request made since the last reset, as the transaction list shows them (see registerTransactions). */
  transactionRecords(): PosRemoteTransaction[];
}

/** A POS remote request as a transaction of the merchant (a transaction list row). */
export interface PosRemoteTransaction {
  ref: string;
  /** Numbered after the other transactions' ids (offset), so ids never collide. */
  id: number;
  createdAt: number;
  currency: string;
  terminalId: string;
  amount: number;
  status: 'pending' | 'success' | 'failed' | 'abandoned';
  accountType: string;
}

/** Transaction-list ids of POS remote requests start here (the payment store numbers from 1). */
export const POS_REMOTE_TRANSACTION_ID_OFFSET = 5_000_000;

/** The requests the terminals are showing, and the merchant's record of them. */
class RemoteRequests implements PosRemoteApi {
  readonly requests = new Map<string, RemoteRequest>();
  // Kept after the requery forgets a request: the merchant's transaction list still has it.
  private readonly transactions: PosRemoteTransaction[] = [];
  private seq = 0;

  constructor(
    readonly clock: SandboxClock,
    private readonly ledger: Ledger,
    private readonly completeAfterMs: number,
  ) {}

  /** A new request on the terminal: it completes on the sandbox clock (by test amount) and expires after its lifetime. */
  create(terminalId: string, amount: number, accountType: string): string {
    const clock = this.clock;
    const ref = `RR${randomUUID().replace(/-/g, '').slice(0, 18).toUpperCase()}`;
    const createdAt = clock.now();
    const r: RemoteRequest = { ref, id: ++this.seq, terminalId, amount, accountType, createdAt, cancelTimers: [] };
    this.requests.set(ref, r);
    const id = POS_REMOTE_TRANSACTION_ID_OFFSET + r.id;
    const txn: PosRemoteTransaction = {
      ref,
      id,
      createdAt,
      currency: 'NGN',
      terminalId,
      amount,
      status: 'pending',
      accountType,
    };
    this.transactions.push(txn);
    if (amount !== POS_REMOTE_NEVER_COMPLETES_AMOUNT) {
      const code = amount === POS_REMOTE_DECLINED_AMOUNT ? '51' : amount === POS_REMOTE_WRONG_PIN_AMOUNT ? '55' : '00';
      const at = createdAt + this.completeAfterMs;
      r.cancelTimers.push(clock.at(at, () => this.complete(r, code, at)));
    }
    r.cancelTimers.push(
      clock.at(createdAt + POS_REMOTE_LIFETIME_MS, () => {
        this.requests.delete(ref);
        if (txn.status === 'pending') txn.status = 'abandoned';
      }),
    );
    return ref;
  }

  private complete(r: RemoteRequest, code: string, at: number): void {
    if (r.record || !this.requests.has(r.ref)) return;
    const approved = code === '00';
    r.record = {
      status: approved ? 'success' : 'failed',
      id: r.id,
      merchant_request_ref: r.ref,
      merchant_id: MERCHANT_ID,
      terminal_id: r.terminalId,
      amount: r.amount,
      currency: 'NGN',
      payment_method: 'card',
      transaction_type: 'Purchase',
      payment_info: {
        card_pan: '539983******0000',
        card_exp: '2912',
        card_type: 'MasterCard',
        cardholder_name: 'SANDBOX/PAYER',
      },
      transaction_reference: `POS${randomDigits(12)}`,
      virtual_account_number: null,
      rrn: randomDigits(12),
      stan: randomDigits(6),
      aid: 'A0000000041010',
      response_code: code,
      response_message: MESSAGES[code] ?? 'Declined',
      processor: null,
      meta: JSON.stringify({ account_type: r.accountType }),
      pc_code: PC_CODES[r.accountType] ?? '0000',
      created_at: this.clock.iso(at),
    };
    const txn = this.transactions.find((t) => t.ref === r.ref);
    if (txn) txn.status = approved ? 'success' : 'failed';
    if (approved) this.ledger.record('pos_remote', r.ref, r.amount, 'NGN');
  }

  decide(ref: string, responseCode: string): Reply {
    const r = this.requests.get(ref);
    if (!r) return fail(404, 'Request not found or expired');
    if (r.record) return fail(400, `Request already ${String(r.record.status)}`);
    if (!/^\d{2}$/.test(responseCode)) return fail(400, 'response_code must be two digits');
    this.complete(r, responseCode, this.clock.now());
    return ok(r.record);
  }

  transactionRecords(): PosRemoteTransaction[] {
    return this.transactions.map((t) => ({ ...t }));
  }
}

/** A payment request sent to an active terminal (E1). */
function requestPayment(requests: RemoteRequests, { body }: RequestContext): Reply {
  const terminalId = String(body.terminal_id);
  if (!Object.values(TEST_TERMINALS).some((t) => t.terminal_id === terminalId && t.status === 'active'))
    return fail(400, 'terminal_id does not name an active terminal of the merchant', { stringStatus: true });
  const accountType = body.account_type === undefined ? 'default' : String(body.account_type);
  const ref = requests.create(terminalId, body.amount as number, accountType);
  return ok({ request_ref: ref }, 'Payment request sent to terminal');
}

/** The request's outcome, or pending (E2). */
async function requeryRequest({ clock, requests }: RemoteRequests, { params }: RequestContext): Promise<Reply> {
  await clock.runDue();
  const r = requests.get(params.ref);
  if (!r) return fail(404, 'Request not found or expired', { stringStatus: true });
  return ok(r.record ?? { status: 'pending' }, r.record ? 'Transaction completed' : 'Transaction pending');
}

export function registerPosRemote(
  router: Router,
  deps: { clock: SandboxClock; ledger: Ledger },
  opts: { completeAfterMs: number },
): PosRemoteApi {
  const requests = new RemoteRequests(deps.clock, deps.ledger, opts.completeAfterMs);
  addRoutes(router, 'pos-remote', requests, [
    ['POST', '/softpos/pos/remote-request', REQUEST_PAYMENT_FIELDS, requestPayment],
    ['GET', '/softpos/pos/remote-request/{ref}', { params: pathParams('ref') }, requeryRequest],
  ]);
  return requests;
}

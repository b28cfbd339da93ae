// POS remote requests (E1/E2) and the POS terminal API (F1-F4), as the spec describes them.
import { randomUUID } from 'node:crypto';
import { fail, ok, randomDigits, randomHex, requireFields, type SandboxCore } from './core';

export const POS_REMOTE_LIFETIME_MS = 5 * 60 * 1000;
/** Documented test amounts (kobo) for the simulated terminal of a remote request. */
export const POS_REMOTE_DECLINED_AMOUNT = 5100;
export const POS_REMOTE_NEVER_COMPLETES_AMOUNT = 9900;

/** Documented test terminals. */
export const TEST_TERMINALS: Record<string, { terminal_id: string; status: string }> = {
  'SN-0001': { terminal_id: '2SBX0001', status: 'active' },
  'SN-0002': { terminal_id: '2SBX0002', status: 'active' },
};

/** Test PANs: the last four digits choose the processor's answer. */
export const TEST_PAN_OUTCOMES: Record<string, string> = {
  '0000': '00', // approved
  '0051': '51', // insufficient funds
  '0055': '55', // incorrect PIN
  '0091': '91', // switch unavailable on the reply, but the issuer approved: F4 shows 00
  '0096': '96', // system malfunction: nothing recorded, F4 404, a retry succeeds
};

const RESPONSE_MESSAGES: Record<string, string> = {
  '00': 'Approved',
  '51': 'Insufficient funds',
  '55': 'Incorrect PIN',
  '91': 'Issuer or switch inoperative',
  '96': 'System malfunction',
};

interface RemoteRequest {
  ref: string;
  terminalId: string;
  amount: number;
  accountType: string;
  createdAt: number;
  record?: Record<string, unknown>;
}

interface TerminalTxn {
  record: Record<string, unknown>;
  chipdata?: string;
}

export function registerPos(core: SandboxCore, opts: { posRemoteCompleteAfterMs: number }) {
  const remote = new Map<string, RemoteRequest>();
  const keys = new Map<string, Record<string, unknown>>();
  const txns = new Map<string, TerminalTxn>();
  const usedChipdata = new Set<string>();
  const malfunctioned = new Set<string>();

  /** Moves remote requests along the sandbox clock: completion, then deletion after 5 minutes. */
  function settle(): void {
    const now = core.clock.now();
    for (const r of remote.values()) {
      if (!r.record && r.amount !== POS_REMOTE_NEVER_COMPLETES_AMOUNT && now - r.createdAt >= opts.posRemoteCompleteAfterMs) {
        const approved = r.amount !== POS_REMOTE_DECLINED_AMOUNT;
        r.record = {
          status: approved ? 'success' : 'failed',
          id: Math.floor(Math.random() * 1e6),
          merchant_request_ref: r.ref,
          merchant_id: 'SBXMERCHANT',
          terminal_id: r.terminalId,
          amount: r.amount,
          currency: 'NGN',
          payment_method: 'card',
          transaction_type: 'Purchase',
          payment_info: { card_pan: '539983******0000', card_exp: '2912', card_type: 'MasterCard', cardholder_name: 'SANDBOX/PAYER' },
          transaction_reference: `POS${randomDigits(12)}`,
          virtual_account_number: null,
          rrn: randomDigits(12),
          stan: randomDigits(6),
          aid: 'A0000000041010',
          response_code: approved ? '00' : '51',
          response_message: approved ? 'Approved' : 'Insufficient funds',
          processor: null,
          meta: '{}',
          pc_code: '0000',
          created_at: core.clock.iso(r.createdAt + opts.posRemoteCompleteAfterMs),
        };
        if (approved) core.record('pos_remote', r.ref, r.amount, 'NGN');
      }
      if (now - r.createdAt >= POS_REMOTE_LIFETIME_MS) remote.delete(r.ref);
    }
  }

  core.route('POST', '/softpos/pos/remote-request', 'pos-remote', ({ body }) => {
    const missing = requireFields(body, ['terminal_id', 'amount'], { stringStatus: true });
    if (missing) return missing;
    const amount = body.amount;
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) return fail(400, 'amount must be a number greater than 0', { stringStatus: true });
    const accountType = body.account_type ?? 'default';
    if (typeof accountType !== 'string' || !['default', 'savings', 'current', 'credit'].includes(accountType)) {
      return fail(400, 'account_type must be one of default, savings, current, credit', { stringStatus: true });
    }
    const ref = `RR${randomUUID().replace(/-/g, '').slice(0, 18).toUpperCase()}`;
    remote.set(ref, { ref, terminalId: String(body.terminal_id), amount, accountType, createdAt: core.clock.now() });
    return ok({ request_ref: ref }, 'Payment request sent to terminal');
  });

  core.route('GET', '/softpos/pos/remote-request/{ref}', 'pos-remote', ({ params }) => {
    settle();
    const r = remote.get(params.ref);
    if (!r) return fail(404, 'Request not found or expired', { stringStatus: true });
    return ok(r.record ?? { status: 'pending' });
  });

  const terminalFor = (serial: unknown) => {
    if (typeof serial !== 'string' || !/^[A-Za-z0-9-]{4,32}$/.test(serial)) return { reply: fail(400, 'Incorrect device information') };
    const t = TEST_TERMINALS[serial];
    if (!t) return { reply: fail(404, 'Terminal not found') };
    return { terminal: t };
  };

  core.route('POST', '/softpos/terminal/configuration', 'default', ({ body }) => {
    const { reply, terminal } = terminalFor(body.serial_no);
    if (reply) return reply;
    return ok({
      terminal: {
        terminal_id: terminal!.terminal_id, serial_no: body.serial_no, terminal_type: 'android-pos', status: terminal!.status, currency: 'NGN', mcc_code: '5411',
        address: { street: '1 Sandbox Way', city: null, region: 'Lagos', country_code: 'NG' }, latitude: '6.4541', longitude: '3.3947',
      },
      merchant: { merchant_id: 'SBXMERCHANT', name: 'Sandbox Merchant' },
      logo: { key: 'logo', url: 'http://127.0.0.1/logo.png', file_name: 'logo.png', ext: 'png', verified_at: core.clock.iso() },
    });
  });

  core.route('POST', '/softpos/terminal/key-exchange', 'default', ({ body, query }) => {
    const { reply, terminal } = terminalFor(body.serial_no);
    if (reply) return reply;
    const id = terminal!.terminal_id;
    if (!keys.has(id) || query.get('refresh') === 'true') {
      keys.set(id, { terminal_id: id, pin_key: randomHex(16), master_key: randomHex(16), session_key: null, working_key: randomHex(16), response_code: '00', response_message: 'Approved' });
    }
    return ok(keys.get(id));
  });

  core.route('POST', '/transaction', 'default', ({ body }) => {
    const missing = requireFields(body, ['amount', 'currency', 'card_pan', 'card_expiry_month', 'card_expiry_year', 'card_sequence_number', 'transaction_type', 'account_type', 'merchant_ref', 'terminal_id']);
    if (missing) return missing;
    if (!/^\d{3}$/.test(String(body.card_sequence_number))) return { status: 0, hang: true }; // the processor never answers
    const merchantRef = String(body.merchant_ref);
    if (merchantRef.length > 25) return fail(400, 'merchant_ref must be at most 25 characters');
    if (!/^[1-9]\d*$/.test(String(body.amount))) return fail(400, 'amount must be a positive amount in the lowest unit');
    if (body.pin_block !== undefined && !/^[0-9A-Fa-f]{16}$/.test(String(body.pin_block))) return fail(400, 'pin_block must be 16 hex characters');
    if (!['DEFAULT', 'SAVINGS', 'CURRENT', 'CREDIT'].includes(String(body.account_type).toUpperCase())) return fail(400, 'account_type must be DEFAULT, SAVINGS, CURRENT or CREDIT');
    if (!['Purchase', 'Refund', 'Pre-Authorization', 'Completion'].includes(String(body.transaction_type))) return fail(400, 'transaction_type is invalid');
    const terminalId = String(body.terminal_id);
    if (!Object.values(TEST_TERMINALS).some((t) => t.terminal_id === terminalId)) return fail(404, 'Terminal not found');
    if (txns.has(merchantRef)) return fail(400, 'Duplicate merchant_ref');
    const chipdata = body.chipdata === undefined ? undefined : String(body.chipdata);
    if (chipdata && usedChipdata.has(chipdata)) return fail(400, 'chipdata has already been used');

    const pan = String(body.card_pan);
    let code = keys.has(terminalId) ? (TEST_PAN_OUTCOMES[pan.slice(-4)] ?? '00') : '55'; // no key exchange: the PIN block cannot be read
    if (code === '96') {
      if (!malfunctioned.has(merchantRef)) {
        malfunctioned.add(merchantRef);
        return ok(txnRecord(body, '96', 'failed'), 'Transaction failed'); // never recorded
      }
      code = '00'; // the retry after the 404 requery goes through
    }
    const recordedCode = code === '91' ? '00' : code; // 91: the reply was lost upstream, the issuer approved
    const record = txnRecord(body, recordedCode, recordedCode === '00' ? 'success' : 'failed');
    txns.set(merchantRef, { record, chipdata });
    if (chipdata) usedChipdata.add(chipdata);
    if (recordedCode === '00') core.record('pos_sale', merchantRef, Number(body.amount), String(body.currency));
    return ok(code === '91' ? { ...record, response_code: '91', response_message: RESPONSE_MESSAGES['91'], status: 'failed' } : record);
  });

  core.route('GET', '/transaction/by-ref/{merchant_ref}', 'default', ({ params }) => {
    const t = txns.get(params.merchant_ref);
    return t ? ok(t.record) : fail(404, 'Transaction not found');
  });

  function txnRecord(body: Record<string, unknown>, code: string, status: 'success' | 'failed'): Record<string, unknown> {
    const pan = String(body.card_pan);
    const now = core.clock.iso();
    return {
      amount: String(body.amount), meta: { merchant_name: 'Sandbox Merchant', processor_amount: String(body.amount) }, merchant_id: 'SBXMERCHANT',
      payment_info: { card_exp: `${body.card_expiry_year}${body.card_expiry_month}`, card_pan: `${pan.slice(0, 6)}******${pan.slice(-4)}`, card_type: body.card_type ?? null, cardholder_name: body.cardholder_name ?? null },
      status, payment_method: 'card', transaction_type: body.transaction_type, response_code: code, transaction_reference: `TRM${randomDigits(12)}`,
      terminal_id: body.terminal_id, response_message: RESPONSE_MESSAGES[code] ?? 'Declined', rrn: randomDigits(12), stan: randomDigits(6), currency: body.currency,
      aid: body.aid ?? null, merchant_request_ref: null, updated_at: now, created_at: now, virtual_account_number: null, receipt_no: randomDigits(8), merchant_ref: body.merchant_ref,
    };
  }

  return { settle };
}

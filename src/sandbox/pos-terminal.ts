// POS terminal API (F): configuration by serial_no (F1), key exchange (F2; pin_key, master_key,
// working_key; random per exchange, kept until refresh=true), card transaction (F3) as plain JSON
// (the test PAN's last four digits choose the processor's answer), requery by merchant_ref (F4).
// Key material is never logged.
//
// Refund and Completion name their original by `original_merchant_ref` (the spec does not show
// the field: our choice, docs/choices.md). A Refund needs an approved Purchase or Completion paid
// with the same card, and at most what is left of it after earlier approved refunds; a Completion
// needs an approved, unexpired, not yet completed Pre-Authorization of the same card, and at most
// the held amount. Anything else is refused with 400 before the processor is asked (nothing is
// recorded). A Pre-Authorization holds (no ledger entry); its hold lasts `preAuthHoldMs` on the
// sandbox clock.
import { createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { SandboxClock } from './clock';
import { z } from 'zod';
import {
  addRoutes,
  fail,
  MERCHANT_ID,
  MERCHANT_NAME,
  ok,
  randomDigits,
  type Reply,
  type RequestContext,
  type RouteHandler,
  type Router,
} from './http';
import type { Ledger } from './ledger';
import {
  matching,
  oneOf,
  pathParams,
  rule,
  text,
  type RequestInput,
  type RouteFields,
  type RuleBreak,
} from './validation';

/** Documented test terminals by serial number. */
/** How many extra active terminals the sandbox has for load tests. */
export const LOAD_TERMINALS = 600;
export const TEST_TERMINALS: Record<string, { terminal_id: string; status: 'active' | 'inactive' }> = {
  'SN-0001': { terminal_id: '2SBX0001', status: 'active' },
  'SN-0002': { terminal_id: '2SBX0002', status: 'active' },
  'SN-0003': { terminal_id: '2SBX0003', status: 'inactive' },
  // More active terminals (2SBX0011 to 2SBX0610), so load tests (npm run chaos, npm run bench's
  // 500 concurrent remote requests) can spread remote requests: each terminal shows one request at
  // a time (docs/flows-pos-vending.md, the terminal lock).
  ...Object.fromEntries(
    Array.from({ length: LOAD_TERMINALS }, (_, i) => {
      const n = String(i + 11).padStart(4, '0');
      return [`SN-${n}`, { terminal_id: `2SBX${n}`, status: 'active' as const }];
    }),
  ),
};
/** A serial number must look like this, else 400 'Incorrect device information'. */
export const SERIAL_FORMAT = /^[A-Za-z0-9-]{4,32}$/;
/** The PIN the sandbox issuer expects when it can read the PIN block. */
export const POS_TEST_PIN = '1234';

/** Test PANs: the last four digits choose the processor's answer (any other ending approves). */
export const TEST_PAN_OUTCOMES: Record<string, string> = {
  '0000': '00', // approved
  '0051': '51', // insufficient funds
  '0055': '55', // incorrect PIN
  '0091': '91', // the reply says 91, but the issuer approved: the requery shows 00, one sale
  '0096': '96', // system malfunction: nothing recorded, the requery answers 404, a retry with the same merchant_ref succeeds
};

export const RESPONSE_MESSAGES: Record<string, string> = {
  '00': 'Approved',
  '51': 'Insufficient funds',
  '55': 'Incorrect PIN',
  '91': 'Issuer or switch inoperative',
  '96': 'System malfunction',
};

const ACCOUNT_TYPES = ['DEFAULT', 'SAVINGS', 'CURRENT', 'CREDIT'];
const TRANSACTION_TYPES = ['Purchase', 'Refund', 'Pre-Authorization', 'Completion'];

/** Configuration and key exchange: any malformed serial is the spec's 'Incorrect device information'. */
const serialMessage = (field: string, rule: string) =>
  field === 'serial_no' ? 'Incorrect device information' : `${field} ${rule}`;
const SERIAL = matching(SERIAL_FORMAT, 'is not a serial number');
const TERMINAL_CONFIGURATION_FIELDS: RouteFields = { body: z.object({ serial_no: SERIAL }), message: serialMessage };
const KEY_EXCHANGE_FIELDS: RouteFields = {
  query: z.object({ refresh: oneOf(['true', 'false'], 'must be a boolean') }),
  body: z.object({ serial_no: SERIAL }),
  message: serialMessage,
};
const twoDigits = (re: RegExp) => matching(re, 'must be two digits');
const CARD_TRANSACTION_FIELDS: RouteFields = {
  rules: originalRefRuleBreak,
  body: z.object({
    terminal_id: text(),
    amount: matching(/^[1-9]\d*$/, 'must be a positive amount in the lowest currency unit'),
    currency: oneOf(['NGN', 'USD'], 'must be NGN or USD').optional(),
    card_pan: matching(/^\d{12,19}$/, 'must be 12 to 19 digits'),
    card_expiry_month: twoDigits(/^(0[1-9]|1[0-2])$/),
    card_expiry_year: twoDigits(/^\d{2}$/),
    // Only present: a malformed one is not a 400 but a processor that never answers (spec, Errors).
    card_sequence_number: rule((v) => v !== undefined && v !== null && v !== '', 'is required'),
    transaction_type: oneOf(TRANSACTION_TYPES, 'must be Purchase, Refund, Pre-Authorization or Completion', true),
    account_type: oneOf(ACCOUNT_TYPES, 'must be DEFAULT, SAVINGS, CURRENT or CREDIT', true),
    merchant_ref: rule((v) => typeof v === 'string' && v.length <= 25, 'must be at most 25 characters'),
    pin_block: matching(/^[0-9A-Fa-f]{16}$/, 'must be 16 hex characters').optional(),
  }),
  message: (field, rule) =>
    field === 'account_type' && !/^is /.test(rule)
      ? `Invalid account_type: ${rule}`
      : /^card_expiry_/.test(field) && !/^is /.test(rule)
        ? 'card expiry must be two-digit month and year'
        : `${field} ${rule}`,
};

/** Refund and Completion name their original; nothing else may. Needs no lookup: checked before the terminal. */
function originalRefRuleBreak({ body }: RequestInput): RuleBreak | undefined {
  const linked = /^(refund|completion)$/i.test(String(body.transaction_type));
  const original = body.original_merchant_ref;
  const given = original !== undefined && original !== null;
  if (!linked && given) return { message: 'original_merchant_ref is only for Refund and Completion' };
  if (linked && (!given || original === ''))
    return { message: 'original_merchant_ref is required for Refund and Completion' };
  return undefined;
}
const TRANSACTION_REQUERY_FIELDS: RouteFields = {
  params: pathParams({
    merchant_ref: rule((v) => typeof v === 'string' && v.length <= 25, 'must be at most 25 characters'),
  }),
};

interface Keys {
  terminal_id: string;
  pin_key: string;
  master_key: string;
  session_key: null;
  working_key: string;
  response_code: string;
  response_message: string;
}

interface Recorded {
  record: Record<string, unknown>;
  chipdata?: string;
  /** The transaction as the service's own books know it (never returned). */
  type: string;
  amount: number;
  currency: string;
  approved: boolean;
  /** SHA-256 of the PAN: a refund or completion must use the card of its original. */
  panHash: string;
  createdAtMs: number;
  /** Purchase/Completion: approved refunds so far (kobo). */
  refunded: number;
  /** Pre-Authorization: the approved Completion's merchant_ref. */
  completedBy?: string;
}

/** How long an approved Pre-Authorization holds the funds (sandbox clock), unless configured. */
export const DEFAULT_POS_PREAUTH_HOLD_MS = 7 * 24 * 3600 * 1000;

const hexKey = () => randomBytes(16).toString('hex').toUpperCase();

/**
 * Reads an ISO 9564 format-0 PIN block encrypted with the 2-key 3DES pin_key. Returns the PIN, or
 * undefined when the block does not decode to a well-formed format-0 block (a fixed test block, or
 * one made with another key): the sandbox then cannot tell and does not check the PIN.
 */
export function readPinBlock(pinBlockHex: string, pan: string, pinKeyHex: string): string | undefined {
  try {
    const k = Buffer.from(pinKeyHex, 'hex');
    const decipher = createDecipheriv('des-ede3-ecb', Buffer.concat([k, k.subarray(0, 8)]), null);
    decipher.setAutoPadding(false);
    const clear = Buffer.concat([decipher.update(Buffer.from(pinBlockHex, 'hex')), decipher.final()]);
    const panField = Buffer.from(`0000${pan.slice(-13, -1)}`, 'hex');
    const pinField = Buffer.from(clear.map((b, i) => b ^ panField[i]))
      .toString('hex')
      .toUpperCase();
    const m = /^0([4-9A-C])(\d+)(F*)$/.exec(pinField);
    if (!m) return undefined;
    const length = parseInt(m[1], 16);
    if (m[2].length !== length || m[3].length !== 14 - length) return undefined;
    return m[2];
  } catch {
    return undefined;
  }
}

const panHash = (pan: string) => createHash('sha256').update(pan).digest('hex');

type Terminal = (typeof TEST_TERMINALS)[string];

/** The terminals' keys and the transactions the service's books know. */
interface PosTerminalState {
  clock: SandboxClock;
  ledger: Ledger;
  preAuthHoldMs: number;
  keys: Map<string, Keys>; // by terminal_id
  transactions: Map<string, Recorded>; // by merchant_ref
  usedChipdata: Set<string>;
  malfunctioned: Set<string>; // merchant_refs whose first attempt got 96
}

function terminalFor(
  serial: unknown,
): { reply: Reply; terminal?: undefined } | { reply?: undefined; terminal: Terminal } {
  if (typeof serial !== 'string' || !SERIAL_FORMAT.test(serial))
    return { reply: fail(400, 'Incorrect device information') };
  const t = TEST_TERMINALS[serial];
  if (!t) return { reply: fail(404, 'Terminal not found') };
  return { terminal: t };
}

/** The terminal's configuration (F1). */
function configuration(_st: PosTerminalState, { body }: RequestContext): Reply {
  const { reply, terminal } = terminalFor(body.serial_no);
  if (reply) return reply;
  return ok({
    terminal: {
      terminal_id: terminal.terminal_id,
      serial_no: body.serial_no,
      terminal_type: 'android-pos',
      status: terminal.status,
      currency: 'NGN',
      mcc_code: '5411',
      address: { street: '1 Sandbox Way', city: null, region: 'Lagos', country_code: 'NG' },
      latitude: '6.4541',
      longitude: '3.3947',
    },
    merchant: { merchant_id: MERCHANT_ID, name: MERCHANT_NAME },
    logo: {
      key: 'merchant-logo',
      url: 'https://sandbox.invalid/logo.png',
      file_name: 'logo.png',
      ext: 'png',
      verified_at: '2026-01-01T00:00:00.000Z',
    },
  });
}

/** The terminal's keys (F2), new on the first exchange or with refresh=true. */
function keyExchange({ keys }: PosTerminalState, { body, query }: RequestContext): Reply {
  const { reply, terminal } = terminalFor(body.serial_no);
  if (reply) return reply;
  if (terminal.status !== 'active') return fail(400, 'Terminal is not active');
  const id = terminal.terminal_id;
  if (!keys.has(id) || query.get('refresh') === 'true') {
    const [pin_key, master_key, working_key] = [hexKey(), hexKey(), hexKey()];
    const approved = { response_code: '00', response_message: 'Approved' };
    keys.set(id, { terminal_id: id, pin_key, master_key, session_key: null, working_key, ...approved });
  }
  return ok({ ...keys.get(id)! });
}

/** Why a Refund or Completion cannot go to the processor, checked against its original; undefined when it can. */
function linkedRefusal(st: PosTerminalState, original: Recorded, type: string, amount: number): Reply | undefined {
  if (type === 'Refund') {
    if (original.type !== 'Purchase' && original.type !== 'Completion')
      return fail(400, 'Original transaction is not a Purchase or Completion');
    if (!original.approved) return fail(400, 'Original transaction was not approved');
    if (amount > original.amount - original.refunded)
      return fail(400, `Refund amount exceeds the refundable balance of ${original.amount - original.refunded}`);
    return undefined;
  }
  if (original.type !== 'Pre-Authorization') return fail(400, 'Original transaction is not a Pre-Authorization');
  if (!original.approved) return fail(400, 'Pre-Authorization was not approved');
  if (original.completedBy !== undefined) return fail(400, 'Pre-Authorization already completed');
  if (st.clock.now() >= original.createdAtMs + st.preAuthHoldMs) return fail(400, 'Pre-Authorization has expired');
  if (amount > original.amount)
    return fail(400, `Completion amount exceeds the pre-authorised amount of ${original.amount}`);
  return undefined;
}

/** The processor's answer: the PIN block first, then the test PAN's ending. */
function processorCode(st: PosTerminalState, input: Record<string, unknown>, pan: string): string {
  const terminalKeys = st.keys.get(String(input.terminal_id));
  if (!terminalKeys) return '55'; // no key exchange: the PIN block cannot be translated
  const pin =
    input.pin_block !== undefined ? readPinBlock(String(input.pin_block), pan, terminalKeys.pin_key) : undefined;
  if (pin !== undefined && pin !== POS_TEST_PIN) return '55'; // a readable block with another PIN
  return TEST_PAN_OUTCOMES[pan.slice(-4)] ?? '00';
}

/** A card transaction (F3), checked against the books, then answered by the processor. */
function cardTransaction(st: PosTerminalState, { body }: RequestContext): Reply {
  const input: Record<string, unknown> = { currency: 'NGN', ...body };
  const terminal = Object.values(TEST_TERMINALS).find((t) => t.terminal_id === String(input.terminal_id));
  if (!terminal) return fail(404, 'Terminal not found');
  if (terminal.status !== 'active') return fail(400, 'Terminal is not active');
  const merchantRef = String(input.merchant_ref);
  const pan = String(input.card_pan);
  const type = TRANSACTION_TYPES.find((t) => t.toLowerCase() === String(input.transaction_type).toLowerCase())!;
  if (st.transactions.has(merchantRef)) return fail(400, 'Duplicate merchant_ref');
  const chipdata = input.chipdata === undefined || input.chipdata === null ? undefined : String(input.chipdata);
  if (chipdata && st.usedChipdata.has(chipdata)) return fail(400, 'chipdata has already been used');
  const amount = Number(input.amount);
  const currency = String(input.currency);
  // Refund and Completion: the original, checked against the service's own books before the processor is asked.
  let original: Recorded | undefined;
  if (type === 'Refund' || type === 'Completion') {
    original = st.transactions.get(String(input.original_merchant_ref));
    if (!original) return fail(400, 'Original transaction not found');
    if (original.currency !== currency) return fail(400, 'currency does not match the original transaction');
    if (original.panHash !== panHash(pan)) return fail(400, 'Card does not match the original transaction');
    const refused = linkedRefusal(st, original, type, amount);
    if (refused) return refused;
  }
  // The processor message is assembled now: a card_sequence_number of any other width corrupts it
  // and the processor never answers (the socket is closed after posProcessorTimeoutMs, nothing recorded).
  if (!/^\d{3}$/.test(String(input.card_sequence_number))) return { status: 0, hang: true };
  let code = processorCode(st, input, pan);
  if (code === '96') {
    if (!st.malfunctioned.has(merchantRef)) {
      st.malfunctioned.add(merchantRef);
      return ok(txnRecord(st.clock, input, type, '96', 'failed'), 'Transaction failed'); // never recorded
    }
    code = '00'; // the retry after the 404 requery goes through
  }
  const recordedCode = code === '91' ? '00' : code; // 91: the reply was lost upstream, the issuer approved
  const approved = recordedCode === '00';
  const record = txnRecord(st.clock, input, type, recordedCode, approved ? 'success' : 'failed');
  const createdAtMs = st.clock.now();
  st.transactions.set(merchantRef, {
    record,
    chipdata,
    type,
    amount,
    currency,
    approved,
    panHash: panHash(pan),
    createdAtMs,
    refunded: 0,
  });
  if (chipdata) st.usedChipdata.add(chipdata);
  if (approved && original && type === 'Refund') original.refunded += amount;
  if (approved && original && type === 'Completion') original.completedBy = merchantRef;
  // A Pre-Authorization only holds the funds: no money moves until its Completion.
  if (approved && type !== 'Pre-Authorization')
    st.ledger.record(type === 'Refund' ? 'pos_refund' : 'pos_sale', merchantRef, amount, currency);
  if (code === '91') {
    const lost = { status: 'failed', response_code: '91', response_message: RESPONSE_MESSAGES['91'] };
    return ok({ ...record, ...lost }, 'Transaction failed');
  }
  return ok(record, approved ? 'Transaction approved' : 'Transaction declined');
}

/** A transaction by merchant_ref (F4). */
const requery: RouteHandler<PosTerminalState> = ({ transactions }, { params }) => {
  const t = transactions.get(params.merchant_ref);
  return t ? ok({ ...t.record }) : fail(404, 'Transaction not found');
};

function txnRecord(
  clock: SandboxClock,
  body: Record<string, unknown>,
  transactionType: string,
  code: string,
  status: 'success' | 'failed',
): Record<string, unknown> {
  const pan = String(body.card_pan);
  const now = clock.iso();
  return {
    amount: String(body.amount),
    meta: { merchant_name: MERCHANT_NAME, processor_amount: String(body.amount) },
    merchant_id: MERCHANT_ID,
    payment_info: {
      card_exp: `${String(body.card_expiry_year)}${String(body.card_expiry_month)}`,
      card_pan: `${pan.slice(0, 6)}******${pan.slice(-4)}`,
      card_type: body.card_type ?? null,
      cardholder_name: body.cardholder_name ?? null,
    },
    status,
    payment_method: 'card',
    transaction_type: transactionType,
    response_code: code,
    transaction_reference: `TRM${randomDigits(12)}`,
    terminal_id: String(body.terminal_id),
    response_message: RESPONSE_MESSAGES[code] ?? 'Declined',
    rrn: randomDigits(12),
    stan: randomDigits(6),
    currency: String(body.currency),
    aid: body.aid ?? null,
    merchant_request_ref: null,
    updated_at: now,
    created_at: now,
    virtual_account_number: null,
    receipt_no: randomDigits(8),
    merchant_ref: String(body.merchant_ref),
  };
}

export function registerPosTerminal(
  router: Router,
  deps: { clock: SandboxClock; ledger: Ledger },
  opts: { preAuthHoldMs?: number } = {},
): void {
  const state: PosTerminalState = {
    ...deps,
    preAuthHoldMs: opts.preAuthHoldMs ?? DEFAULT_POS_PREAUTH_HOLD_MS,
    keys: new Map(),
    transactions: new Map(),
    usedChipdata: new Set(),
    malfunctioned: new Set(),
  };
  addRoutes(router, 'pos-terminal', state, [
    ['POST', '/softpos/terminal/configuration', TERMINAL_CONFIGURATION_FIELDS, configuration],
    ['POST', '/softpos/terminal/key-exchange', KEY_EXCHANGE_FIELDS, keyExchange],
    ['POST', '/transaction', CARD_TRANSACTION_FIELDS, cardTransaction],
    ['GET', '/transaction/by-ref/{merchant_ref}', TRANSACTION_REQUERY_FIELDS, requery],
  ]);
}

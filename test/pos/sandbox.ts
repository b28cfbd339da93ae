// Sandbox fixtures for the end-to-end POS and vending tests (suite-specific; the admin API client
// is test/support/sandbox-admin.ts): the F3/F4 calls in the request log, sandbox cards, and an
// ISO-0 PIN block built from the session's pin_key the way a device would.
import { createCipheriv, randomBytes } from 'node:crypto';
import type { PosTransactionInput } from '../../src/shared/pos-terminal';
import type { RequestLogEntry } from '../../src/sandbox';
import type { CallRecord } from './helpers';

/** F3/F4 calls for one merchant_ref, in the order the sandbox saw them. */
export function posCallsFromLog(log: RequestLogEntry[], merchantRef?: string): CallRecord[] {
  const out: CallRecord[] = [];
  for (const e of log) {
    if (
      e.method === 'POST' &&
      e.path === '/transaction' &&
      e.reference &&
      (!merchantRef || e.reference === merchantRef)
    ) {
      out.push({ op: 'initiate', merchantRef: e.reference });
    }
    const m = /^\/transaction\/by-ref\/(.+)$/.exec(e.path);
    if (e.method === 'GET' && m && (!merchantRef || decodeURIComponent(m[1]) === merchantRef)) {
      out.push({
        op: 'requery',
        merchantRef: decodeURIComponent(m[1]),
        answer: e.status === 200 ? 'found' : e.status === 404 ? 'not_found' : 'error',
      });
    }
  }
  return out;
}

/** ISO 9564 format 0 PIN block, encrypted with the 2-key 3DES pin_key (as the device does). */
export function iso0PinBlock(pin: string, pan: string, pinKeyHex: string): string {
  const pinField = Buffer.from(`0${pin.length}${pin}`.padEnd(16, 'F'), 'hex');
  const panField = Buffer.from(`0000${pan.slice(-13, -1)}`, 'hex');
  const clear = Buffer.from(pinField.map((b, i) => b ^ panField[i]));
  const k = Buffer.from(pinKeyHex, 'hex');
  const cipher = createCipheriv('des-ede3-ecb', Buffer.concat([k, k.subarray(0, 8)]), null);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(clear), cipher.final()])
    .toString('hex')
    .toUpperCase();
}

/** A sandbox card read: the PAN's last four digits choose the processor's answer (docs/sandbox.md). */
export function sandboxCard(
  last4: string,
  merchantRef: string,
  terminalId: string,
  pinKey: string,
  over: Partial<PosTransactionInput> = {},
): PosTransactionInput {
  const pan = `539983000000${last4}`;
  return {
    terminal_id: terminalId,
    amount: 250000,
    currency: 'NGN',
    card_pan: pan,
    card_expiry_month: '12',
    card_expiry_year: '29',
    card_type: 'MasterCard',
    cardholder_name: 'ADA OBI',
    card_sequence_number: '001',
    track2: `${pan}D2912201000000000F`,
    chipdata: randomBytes(48).toString('hex').toUpperCase(), // single use: fresh per card read
    aid: '4F07A0000000041010',
    pin_block: iso0PinBlock('1234', pan, pinKey),
    transaction_type: 'Purchase',
    account_type: 'DEFAULT',
    merchant_ref: merchantRef,
    options: { requerySettleDelay: '200ms', retryBackoff: '300ms' },
    ...over,
  };
}

export const shortRef = (prefix: string): string =>
  `${prefix}${Date.now().toString(36)}${randomBytes(3).toString('hex')}`.slice(0, 25);

// Request bodies more than one of the client's test files sends.
import type { PosTerminalInitiateRequest } from '../../../src/api';

/** A chip-and-PIN Verve sale of 150 000 on terminal 2KUD0001 (F3), `over` on top. */
export function posTerminalSale(over: Partial<PosTerminalInitiateRequest> = {}): PosTerminalInitiateRequest {
  return {
    terminal_id: '2KUD0001',
    amount: 150000,
    card_pan: '5061000000000000001',
    card_expiry_month: '12',
    card_expiry_year: '27',
    card_type: 'Verve',
    cardholder_name: 'ADA OBI',
    card_sequence_number: '001',
    track2: '5061000000000000001D27121010000000000F',
    chipdata: '9F2608AABBCCDDEEFF0011',
    aid: '4F07A0000003710001',
    pin_block: '0123456789ABCDEF',
    transaction_type: 'Purchase',
    account_type: 'default',
    merchant_ref: 'POS-0001',
    ...over,
  };
}

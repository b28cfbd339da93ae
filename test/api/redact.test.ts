// Error bodies the client keeps (PaymentsApiError.body) lose every secret value, wherever it sits,
// and keep everything else as received: an error that reaches a log or a workflow failure carries
// no key material, PIN, OTP, BVN or card data.
import { redactBody, REDACTED } from '../../src/api/redact';

/** Every field the service may send back that is secret, as the spec spells it. */
const SECRET_NAMES = [
  'pin_key',
  'master_key',
  'working_key',
  'session_key',
  'session_token',
  'pin',
  'pin_block',
  'otp',
  'otp_token',
  'cvv',
  'bvn',
  'track2',
  'chipdata',
  'card_number',
  'number',
  'authorization',
  'secret_key',
  'pan',
  'expiry',
  'expiry_month',
  'expiry_year',
];

describe('redactBody', () => {
  it.each(SECRET_NAMES)('redacts %s, at the top and nested in objects and arrays', (name) => {
    const body = { [name]: 'v1', data: { [name]: 'v2', list: [{ [name]: 'v3' }] } };
    expect(redactBody(body)).toEqual({
      [name]: REDACTED,
      data: { [name]: REDACTED, list: [{ [name]: REDACTED }] },
    });
  });

  it('matches names in any letter case and with any separator', () => {
    expect(redactBody({ PIN_KEY: 'k', pinBlock: 'b', 'Session-Token': 't', cardNumber: '1' })).toEqual({
      PIN_KEY: REDACTED,
      pinBlock: REDACTED,
      'Session-Token': REDACTED,
      cardNumber: REDACTED,
    });
  });

  it('keeps what is not secret, and secret names whose value is empty or missing', () => {
    const body = {
      status: 400,
      message: 'Invalid amount',
      data: { transaction_ref: 'REF-1', amount: 10_000, ok: true, pin: null, otp: '', bvn: undefined },
    };
    expect(redactBody(body)).toEqual(body);
  });

  it('scrubs card numbers out of free text', () => {
    expect(redactBody({ message: 'card 4242424242424242 declined' })).toEqual({ message: `card ${REDACTED} declined` });
    expect(redactBody('card 4242424242424242')).toBe(`card ${REDACTED}`);
  });

  it('cuts a body nested deeper than ten levels', () => {
    let body: unknown = { pin: '1234' };
    for (let i = 0; i < 12; i++) body = { next: body };
    let out = redactBody(body) as Record<string, unknown>;
    for (let i = 0; i < 11; i++) out = out.next as Record<string, unknown>;
    expect(out).toBe('[Truncated]');
    // Ten levels down is still redacted, not cut.
    let ten: unknown = { pin: '1234' };
    for (let i = 0; i < 10; i++) ten = { next: ten };
    let inner = redactBody(ten) as Record<string, unknown>;
    for (let i = 0; i < 10; i++) inner = inner.next as Record<string, unknown>;
    expect(inner).toEqual({ pin: REDACTED });
  });

  it('counts arrays as levels too: a body of arrays nested deeper than ten levels is cut', () => {
    let body: unknown = ['x'];
    for (let i = 0; i < 12; i++) body = [body];
    let out = redactBody(body) as unknown[];
    for (let i = 0; i < 11; i++) out = out[0] as unknown[];
    expect(out).toBe('[Truncated]');
  });

  it('passes numbers, booleans and null through', () => {
    expect(redactBody(5)).toBe(5);
    expect(redactBody(false)).toBe(false);
    expect(redactBody(null)).toBeNull();
    expect(redactBody([1, 'a'])).toEqual([1, 'a']);
  });
});

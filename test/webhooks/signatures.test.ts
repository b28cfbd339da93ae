// The signature checks themselves (src/webhooks/signatures.ts), without the receiver: what the
// comparison accepts besides the exact digest, how the credit notification's six values are joined when some are
// missing, and which parsed bodies the six-value scheme refuses to read at all. The signatures are
// computed here with node:crypto, not with the module's own helper.
import { createHmac } from 'node:crypto';
import {
  hexDigestsEqual,
  verifyPaymentWebhook,
  verifyVirtualAccountWebhook,
  virtualAccountSignedString,
} from '../../src/webhooks/signatures';

const secret = 'sk_test_signatures';
const sign = (data: string): string => createHmac('sha512', secret).update(data).digest('hex');

describe('hexDigestsEqual', () => {
  const digest = sign('body');

  it('accepts the digest in capitals and with surrounding spaces (hex is case-insensitive)', () => {
    expect(hexDigestsEqual(digest, digest.toUpperCase())).toBe(true);
    expect(hexDigestsEqual(digest, ` ${digest}\n`)).toBe(true);
    expect(verifyPaymentWebhook(Buffer.from('body'), ` ${digest.toUpperCase()} `, secret)).toBe(true);
  });

  it('refuses another digest, a cut or lengthened one, and non-hex text of the right length', () => {
    expect(hexDigestsEqual(digest, sign('other'))).toBe(false);
    expect(hexDigestsEqual(digest, digest.slice(0, -2))).toBe(false);
    expect(hexDigestsEqual(digest, `${digest}00`)).toBe(false);
    expect(hexDigestsEqual(digest, `z${digest.slice(1)}`)).toBe(false);
    expect(hexDigestsEqual(digest, `${digest.slice(0, -1)}z`)).toBe(false);
    expect(hexDigestsEqual(digest, '')).toBe(false);
  });
});

describe("the credit notification's six values", () => {
  const values = {
    transaction_reference: 'REF1',
    virtual_account_number: '7000000001',
    currency: 'NGN',
    principal_amount: '5000.00',
    settled_amount: '4950.00',
    customer_identifier: 'CUST1',
  };

  it('are joined by | in the spec order, whatever order the body has', () => {
    const reordered = Object.fromEntries(Object.entries(values).reverse());
    expect(virtualAccountSignedString(reordered)).toBe('REF1|7000000001|NGN|5000.00|4950.00|CUST1');
  });

  it('a missing or null value is signed as empty text, not as "undefined" or "null"', () => {
    expect(virtualAccountSignedString({ ...values, customer_identifier: undefined })).toBe(
      'REF1|7000000001|NGN|5000.00|4950.00|',
    );
    expect(virtualAccountSignedString({ ...values, currency: null })).toBe('REF1|7000000001||5000.00|4950.00|CUST1');
    expect(virtualAccountSignedString({ ...values, principal_amount: 5000 })).toBe(
      'REF1|7000000001|NGN|5000|4950.00|CUST1',
    );
  });

  it('a body signed over its six values verifies as six-values; signed over the whole body as whole-body', () => {
    const raw = JSON.stringify(values);
    const six = verifyVirtualAccountWebhook(Buffer.from(raw), sign(virtualAccountSignedString(values)), secret);
    expect(six).toEqual({ verified: true, body: values, scheme: 'six-values' });
    const whole = verifyVirtualAccountWebhook(Buffer.from(raw), sign(raw), secret);
    expect(whole).toEqual({ verified: true, body: values, scheme: 'whole-body' });
    expect(verifyVirtualAccountWebhook(Buffer.from(raw), sign('something else'), secret)).toEqual({ verified: false });
  });

  // A JSON value that is not an object has no six values: signing the empty join '|||||' must
  // not make it verified (and null must not throw).
  it.each(['null', '5', '"text"', '[]', 'true'])('the JSON value %s is never verified as six values', (raw) => {
    expect(verifyVirtualAccountWebhook(Buffer.from(raw), sign('|||||'), secret)).toEqual({ verified: false });
  });

  it('a body that is not JSON verifies only by its whole-body signature', () => {
    expect(verifyVirtualAccountWebhook(Buffer.from('not json'), sign('|||||'), secret)).toEqual({ verified: false });
    expect(verifyVirtualAccountWebhook(Buffer.from('not json'), sign('not json'), secret)).toEqual({
      verified: true,
      body: undefined,
      scheme: 'whole-body',
    });
  });
});

// Which field names log redaction treats as secret (src/logging/logger.ts): every spelling of a
// listed name, and none of the ordinary fields a payment line carries. A redaction that hid
// everything would pass a test that only looks for leaked secrets; these lines must stay readable.
import { createLogger, isSecretFieldName, normaliseFieldName, REDACTED } from '../../src/logging/logger';
import { LogCapture } from '../support/stack';

function logged(fields: Record<string, unknown>): Record<string, unknown> {
  const capture = new LogCapture();
  createLogger({ destination: capture }).info(fields, 'a payment line');
  return capture.records[0];
}

describe('secret field names', () => {
  it('ordinary fields of a payment line are logged as they are', () => {
    const fields = {
      transactionRef: 'REF-1',
      merchant_ref: 'M-1',
      amount: 5000,
      status: 'success',
      card: { bin: '555555', last4: '4444', brand: 'mastercard' },
      cardHandle: 'h-1',
    };
    expect(logged(fields)).toMatchObject(fields);
    for (const name of ['transactionRef', 'merchant_ref', 'amount', 'status', 'handle', 'cardHandle', 'last4'])
      expect(isSecretFieldName(name)).toBe(false);
  });

  it.each(['pinKey', 'pin_key', 'pin-key', 'PIN_KEY', 'PinKey', 'pin key', 'pin.key'])(
    'the listed name "pin key" spelled %s is redacted',
    (name) => {
      expect(isSecretFieldName(name)).toBe(true);
      expect(logged({ [name]: 'A1B2C3D4E5F60718' })[name]).toBe(REDACTED);
    },
  );

  it('digits are part of a name: cvv2 and track2 are secret, and normalise with their digits', () => {
    expect(normaliseFieldName('CVV2')).toBe('cvv2');
    expect(normaliseFieldName('Track-2 Data')).toBe('track2data');
    expect(logged({ cvv2: '123', track2: '5555=2512' })).toMatchObject({ cvv2: REDACTED, track2: REDACTED });
  });
});

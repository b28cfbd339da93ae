// The one input error of the starters, the CLI and the webhook receiver: field and rule named, one message format.
import { z } from 'zod';
import * as starters from '../../src/starters';
import { StarterInputError, parseStarterInput } from '../../src/starters';
import { inputIssuesOf } from '../../src/shared/input-error';
import { validateReconcileInput } from '../../src/starters/reconciliation';
import { VirtualAccountCreationError, createBusinessVirtualAccount } from '../../src/starters/virtual-account-credit';
import { PaymentsClient } from '../../src/api';

const schema = z.object({
  amount: z.number().int('must be an integer in the lowest unit'),
  card: z.object({ number: z.string().regex(/^\d{12,19}$/, 'must be 12 to 19 digits') }),
});

describe('StarterInputError', () => {
  it('names each field (dotted path) and its rule, in the message too, never the value', () => {
    const err = (() => {
      try {
        parseStarterInput(schema, { amount: 10.5, card: { number: '4242' } }, 'payment');
      } catch (e) {
        return e;
      }
    })() as StarterInputError;
    expect(err).toBeInstanceOf(StarterInputError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('StarterInputError');
    expect(err.what).toBe('payment');
    expect(err.issues).toEqual([
      { field: 'amount', rule: 'must be an integer in the lowest unit' },
      { field: 'card.number', rule: 'must be 12 to 19 digits' },
    ]);
    expect(err.message).toBe(
      'invalid payment input: amount must be an integer in the lowest unit; card.number must be 12 to 19 digits',
    );
    expect(err.message).not.toContain('4242');
  });

  it('an issue about the whole input is the field (input); a valid input comes back parsed', () => {
    const strict = z.strictObject({ a: z.number() });
    expect(() => parseStarterInput(strict, { a: 1, b: 2 }, 'x')).toThrow(/^invalid x input: \(input\) /);
    expect(parseStarterInput(strict, { a: 1 }, 'x')).toEqual({ a: 1 });
  });

  it('the webhook receiver names its body (body) with the same {field, rule} shape', () => {
    const parsed = z.object({ Body: z.object({ amount: z.number().int('must be an integer') }) }).safeParse({
      Body: { amount: 1.5 },
    });
    expect(parsed.success).toBe(false);
    expect(inputIssuesOf(parsed.error!, '(body)')).toEqual([{ field: 'Body.amount', rule: 'must be an integer' }]);
    expect(inputIssuesOf(z.string().safeParse(1).error!, '(body)')[0].field).toBe('(body)');
  });

  it('is the one input error the package exports: the 0.x names are gone (CHANGELOG 1.0.0)', () => {
    for (const old of [
      'PaymentInputError',
      'CardInputError',
      'StarterValidationError',
      'MandateOtpFormatError',
      'InvalidStarterInputError',
      'ScheduleInputError',
      'ReconcileInputError',
    ])
      expect(starters).not.toHaveProperty(old);
    expect(() => validateReconcileInput({ from: '2024-02-10', to: '2024-02-01' })).toThrow(
      new StarterInputError('reconciliation', [{ field: 'from', rule: 'must not be after to' }]),
    );
  });

  it('a virtual-account request that breaks a field rule is an input error (nothing sent), not a service refusal', async () => {
    // Nothing listens on this port: the client's own validation refuses before any request.
    const api = new PaymentsClient({ baseUrl: 'http://127.0.0.1:9', secretKey: 'sandbox_sk_unit_test_key' });
    const err = await createBusinessVirtualAccount(
      { api },
      { bvn: '123', business_name: 'Acme', customer_identifier: 'BIZ1', mobile_num: '08012345678' },
    ).catch((e: unknown) => e);
    await api.close();
    expect(err).toBeInstanceOf(StarterInputError);
    expect(err).not.toBeInstanceOf(VirtualAccountCreationError);
    expect((err as StarterInputError).issues).toEqual([{ field: 'bvn', rule: 'must be 11 digits' }]);
    expect((err as Error).message).toBe('invalid business virtual account input: bvn must be 11 digits');
    expect((err as Error).message).not.toContain('123');
  });
});

// The one redaction list (src/logging/redaction.ts, issue #42 §5) under generated input: field names
// built from words in every spelling (camelCase, PascalCase, snake, kebab, UPPER, dotted) are secret
// when a secret word names the value, and kept when they are harmless words that merely contain the
// letters; free text loses PANs written with any separator, whsec_ secrets, Basic and Bearer
// credentials and cvv=/pin=/otp= values. The logger and the API error bodies agree on every name.
import fc from 'fast-check';
import { redactBody } from '../../src/api/redact';
import { createLogger, isSecretFieldName, REDACTED, scrubText } from '../../src/logging/logger';
import { LogCapture } from '../support/stack';

const RUNS = { numRuns: 300 };

const SECRET = ['secret', 'key', 'token', 'password', 'pin', 'cvv', 'otp'];
/** Words that say which secret or carry it: apiKey, x_api_key, pinBlock, otpCode, refreshToken. */
const QUALIFIERS = ['api', 'x', 'refresh', 'access', 'client', 'signing', 'webhook', 'merchant', 'encrypted'];
const CARRIERS = ['block', 'code', 'value', 'hex', 'data', 'plain'];
/** Harmless words, some containing the letters of a secret word. */
const HARMLESS = [
  'amount',
  'reference',
  'status',
  'merchant',
  'keyword',
  'keyboard',
  'monkey',
  'turkey',
  'spinner',
  'pinned',
  'pinnacle',
  'tokenizer',
  'secretary',
  'hotpot',
  'order',
  'batch',
  'flow',
  'currency',
];

const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
const STYLES: ((w: string[]) => string)[] = [
  (w) => w[0] + w.slice(1).map(cap).join(''),
  (w) => w.map(cap).join(''),
  (w) => w.join('_'),
  (w) => w.join('-'),
  (w) => w.join('_').toUpperCase(),
  (w) => w.join('-').toUpperCase(),
  (w) => w.join('.'),
  (w) => w.join(' '),
];
const spelled = (words: fc.Arbitrary<string[]>) =>
  fc.tuple(words, fc.constantFrom(...STYLES)).map(([w, style]) => style(w));

/** [qualifiers…] secret — apiKey, x_api_key, REFRESH_TOKEN, client.secret. */
const secretLast = spelled(
  fc
    .tuple(fc.array(fc.constantFrom(...QUALIFIERS), { maxLength: 2 }), fc.constantFrom(...SECRET))
    .map(([q, s]) => [...q, s]),
);
/** secret carrier — pinBlock, otp_code, CVV-VALUE. */
const secretFirst = spelled(
  fc.tuple(fc.constantFrom('pin', 'otp', 'cvv', 'password', 'secret'), fc.constantFrom(...CARRIERS)).map((w) => w),
);
const harmless = spelled(fc.array(fc.constantFrom(...HARMLESS), { minLength: 1, maxLength: 3 }));

function logged(fields: Record<string, unknown>): Record<string, unknown> {
  const capture = new LogCapture();
  createLogger({ destination: capture }).info(fields, 'line');
  return capture.records[0] as Record<string, unknown>;
}

describe('field names by words, in every spelling', () => {
  it.each(['apiKey', 'x_api_key', 'X-API-KEY', 'pinBlock', 'otpCode', 'refreshToken', 'clientSecret', 'PINBlock'])(
    '%s is secret',
    (name) => expect(isSecretFieldName(name)).toBe(true),
  );

  it.each(['keyword', 'monkey', 'spinner', 'keyId', 'tokenType', 'pinTimeoutMs', 'hasPinKey', 'otpLength'])(
    '%s is not',
    (name) => expect(isSecretFieldName(name)).toBe(false),
  );

  it('a name ending in a secret word is redacted in log lines and in error bodies', () => {
    fc.assert(
      fc.property(secretLast, fc.string({ minLength: 1 }), (name, value) => {
        expect(isSecretFieldName(name)).toBe(true);
        expect(logged({ [name]: value })[name]).toBe(REDACTED);
        expect((redactBody({ [name]: value }) as Record<string, unknown>)[name]).toBe(REDACTED);
      }),
      RUNS,
    );
  });

  it('a name starting with pin, otp, cvv, password or secret and naming its value is redacted', () => {
    fc.assert(
      fc.property(secretFirst, (name) => {
        expect(isSecretFieldName(name)).toBe(true);
        expect(logged({ [name]: 'v4lue' })[name]).toBe(REDACTED);
      }),
      RUNS,
    );
  });

  it('harmless names, even with the letters of a secret word inside a word, are kept', () => {
    fc.assert(
      fc.property(harmless, (name) => {
        expect(isSecretFieldName(name)).toBe(false);
        expect(logged({ [name]: 'kept' })[name]).toBe('kept');
        expect((redactBody({ [name]: 'kept' }) as Record<string, unknown>)[name]).toBe('kept');
      }),
      RUNS,
    );
  });
});

/** Group lengths of a PAN as people write it: 4 first, then 2 to 4 groups of 2 to 7, 13 to 19 digits in all. */
const panGroups = fc
  .tuple(fc.constant(4), fc.array(fc.integer({ min: 2, max: 7 }), { minLength: 2, maxLength: 4 }))
  .map(([first, rest]) => [first, ...rest])
  .filter((g) => {
    const n = g.reduce((a, b) => a + b, 0);
    return n >= 13 && n <= 19;
  });

const words = fc.array(fc.constantFrom('card', 'declined', 'for', 'order', 'ref', 'paid', 'by'), {
  minLength: 1,
  maxLength: 3,
});

describe('free text', () => {
  it('a PAN written with spaces, dashes or dots is scrubbed, wherever it stands in a sentence', () => {
    fc.assert(
      fc.property(
        panGroups,
        fc.constantFrom(' ', '-', '.'),
        fc.integer({ min: 1, max: 9 }),
        words,
        words,
        (groups, sep, lead, before, after) => {
          let digits = String(lead);
          while (digits.length < groups.reduce((a, b) => a + b, 0)) digits += String(digits.length % 10);
          let at = 0;
          const written = groups.map((g) => digits.slice(at, (at += g))).join(sep);
          const out = scrubText(`${before.join(' ')} ${written} ${after.join(' ')}`);
          expect(out).toBe(`${before.join(' ')} ${REDACTED} ${after.join(' ')}`);
        },
      ),
      RUNS,
    );
  });

  it('whsec_ secrets, Basic and Bearer credentials, and cvv=, pin=, otp= values are scrubbed', () => {
    const base64 = fc.stringMatching(/^[A-Za-z0-9+/]{8,40}$/);
    fc.assert(
      fc.property(base64, fc.stringMatching(/^[0-9]{3,8}$/), words, (b64, code, around) => {
        const text = around.join(' ');
        const basic = Buffer.from(`user:${b64}`).toString('base64');
        for (const secret of [`whsec_${b64}`, `Bearer ${b64}`, `Basic ${basic}`]) {
          const out = scrubText(`${text} ${secret} ${text}`);
          expect(out).toBe(`${text} ${REDACTED} ${text}`);
        }
        for (const name of ['cvv', 'pin', 'otp', 'CVV', 'password'])
          expect(scrubText(`${text} ?${name}=${code}&x=1`)).toBe(`${text} ?${name}=${REDACTED}&x=1`);
        expect(scrubText(`{"pin":"${code}","otp":${code}}`)).toBe(`{"pin":"${REDACTED}","otp":"${REDACTED}"}`);
      }),
      RUNS,
    );
  });

  it('leaves "Basic checks", dates, times and amounts alone', () => {
    const benign = 'Basic checks passed on 2026-11-29 07.40.52, amount 1.500.000, version 1.2.3, pinned keyword';
    expect(scrubText(benign)).toBe(benign);
  });
});

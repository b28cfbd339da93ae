// The terminal transaction's card-read and transaction fields, defined once: the API client's request schema
// (src/api/schemas/pos.ts) and the workflows' input schemas (src/shared/pos-terminal.ts) both build on
// these. Plain zod with no Temporal or Node imports, so it runs in the workflow sandbox too.
import { lazy, type Zod } from './lazy';
import { required } from './input-error';

export { requiredText } from './input-error';

export const POS_TRANSACTION_TYPES = ['Purchase', 'Refund', 'Pre-Authorization', 'Completion'] as const;
export const POS_ACCOUNT_TYPES = ['DEFAULT', 'SAVINGS', 'CURRENT', 'CREDIT'] as const;
export const MERCHANT_REF_MAX = 25;

const hexPairs = (z: Zod, what: string) => z.string(required(what)).regex(/^(?:[0-9A-Fa-f]{2})+$/, `must be ${what}`);

/** The transaction's account type: the four names, any case; the processor codes 0000/0010/0020/0030 are refused. */
export const posAccountType = lazy('pos-card-fields.posAccountType', (z) =>
  z.string(required('DEFAULT, SAVINGS, CURRENT or CREDIT')).transform((v, ctx) => {
    const t = v.trim();
    if (/^00[0-3]0$/.test(t)) {
      ctx.addIssue({
        code: 'custom',
        message: `must be DEFAULT, SAVINGS, CURRENT or CREDIT; the processor code ${t} is refused (the service maps the name to the code)`,
      });
      return z.NEVER;
    }
    const hit = POS_ACCOUNT_TYPES.find((a) => a === t.toUpperCase());
    if (!hit) {
      ctx.addIssue({ code: 'custom', message: 'must be DEFAULT, SAVINGS, CURRENT or CREDIT (case-insensitive)' });
      return z.NEVER;
    }
    return hit;
  }),
);

/** Purchase, Refund, Pre-Authorization or Completion, any case (sent as the spec writes it). */
export const posTransactionType = lazy('pos-card-fields.posTransactionType', (z) =>
  z.string(required('Purchase, Refund, Pre-Authorization or Completion')).transform((v, ctx) => {
    const hit = POS_TRANSACTION_TYPES.find((t) => t.toLowerCase() === v.trim().toLowerCase());
    if (!hit) {
      ctx.addIssue({ code: 'custom', message: 'must be Purchase, Refund, Pre-Authorization or Completion' });
      return z.NEVER;
    }
    return hit;
  }),
);

/** Merchant-unique, at most 25 printable characters. Required: the requery depends on it. */
export const merchantRef = lazy('pos-card-fields.merchantRef', (z) =>
  z
    .string(required('a string of at most 25 characters'))
    .min(1, 'must not be empty')
    .max(MERCHANT_REF_MAX, `must be at most ${MERCHANT_REF_MAX} characters`)
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
);

/** The card read as the transaction carries it (the spec's table, F3, and Limits). */
export const POS_CARD_FIELDS = lazy(
  'pos-card-fields.POS_CARD_FIELDS',
  (z) =>
    ({
      /** Digits only (EMV tag 5A). */
      card_pan: z
        .string(required('a string of digits'))
        .regex(/^\d{12,19}$/, 'must be 12 to 19 digits (EMV tag 5A, digits only)'),
      card_expiry_month: z.string(required('two digits 01-12')).regex(/^(0[1-9]|1[0-2])$/, 'must be two digits 01-12'),
      card_expiry_year: z.string(required('two digits')).regex(/^\d{2}$/, 'must be two digits'),
      /** Scheme name derived from the AID (Verve, MasterCard, VISA). */
      card_type: z.string().min(1, 'must not be empty').optional(),
      /** EMV tag 5F20 decoded to ASCII. */
      cardholder_name: z.string().optional(),
      /**
       * Exactly three digits (tag 5F34 value, zero-padded). Any other width corrupts the processor
       * message and the request times out without explanation, so it is checked here.
       */
      card_sequence_number: z
        .string(required('a string of exactly 3 digits, e.g. "001"'))
        .regex(
          /^\d{3}$/,
          'must be exactly 3 digits (tag 5F34 value zero-padded, e.g. "001"); any other width makes the processor time out',
        ),
      /** Tag 57 without tag and length; trailing F pad nibble allowed. */
      track2: z
        .string(required('track 2 equivalent data'))
        .regex(
          /^\d{12,19}[Dd=]\d{4,}[Ff]?$/,
          'must be track 2 equivalent data: PAN, separator D, expiry and service code, optional trailing F',
        ),
      /** Hex DE55; single use, bound to the amount, counter and unpredictable number. */
      chipdata: hexPairs(z, 'hex DE55 data (an even number of hex characters)'),
      /** EMV tag 4F full TLV, hex. */
      aid: hexPairs(z, 'the EMV tag 4F TLV in hex'),
      /** 16 hex characters (ISO-0 PIN block); omit only for a card that did not ask for a PIN. Never logged. */
      pin_block: z
        .string({ error: 'must be 16 hex characters (ISO-0 PIN block)' })
        .regex(/^[0-9A-Fa-f]{16}$/, 'must be 16 hex characters (ISO-0 PIN block)')
        .optional(),
    }) as const,
);

// The one list of what is secret (issue #42 §5): the field names and the free-text shapes that
// never reach a log line (src/logging/logger.ts) nor an error body the API client keeps
// (src/api/redact.ts). A field is secret by its listed name in any spelling, or by a secret word
// among the words of its name; free text loses keys, tokens, credentials and PANs however written.

/**
 * Field names whose values never reach a log line, at any depth, written as words. A key matches
 * when its normalised form (lower case, everything but letters and digits removed) equals one of
 * these with the spaces removed, so `pinKey`, `pin_key`, `pin-key`, `PIN_KEY` and `PinKey` all match.
 * Not secret, so not listed: claim-check handles (`handle`, `cardHandle`), BIN, last four, brand,
 * masked PANs, amounts and references.
 */
export const SECRET_FIELD_NAMES = [
  // Card data.
  'number',
  'card number',
  'card pan',
  'pan',
  'primary account number',
  'cvv',
  'cvv2',
  'cvc',
  'cvc2',
  'csc',
  'security code',
  'expiry',
  'expiry date',
  'expiry month',
  'expiry year',
  'exp month',
  'exp year',
  'card expiry',
  'card expiry month',
  'card expiry year',
  'track1',
  'track2',
  'track2 data',
  'track data',
  'chip data',
  'icc data',
  'emv data',
  // PINs and OTPs.
  'pin',
  'pin block',
  'pin block hex',
  'encrypted pin',
  'otp',
  'otp token',
  'otp code',
  // BVN.
  'bvn',
  // Terminal and payments keys, tokens, passwords, credentials.
  'pin key',
  'pin key hex',
  'working key',
  'master key',
  'session key',
  'secret key',
  'secret keys',
  'api key',
  'private key',
  'token',
  'session token',
  'access token',
  'refresh token',
  'auth token',
  'id token',
  'admin token',
  'codec token',
  'authorization',
  'proxy authorization',
  'cookie',
  'set cookie',
  'password',
  'passwd',
  'passphrase',
  'secret',
  'client secret',
  'x service encrypted body',
  'x service signature',
  'x squad encrypted body',
  'x squad signature',
  'encryption key',
  'encryption keys',
  'claim check keys',
  // TLS private key locations and URLs that carry database credentials.
  'key path',
  'tls key path',
  'database url',
  'connection string',
  // The configuration variables of the secrets above (an env dump is redacted too).
  'payments secret key',
  'codec server token',
  'payload encryption keys',
  'claim check database url',
  'sandbox admin token',
  'temporal api key',
  'temporal tls key path',
  'postgres password',
  'sandbox secret keys',
] as const;

/** Lower case, no `_`, `-`, spaces or other separators: the form secret names are matched in. */
export function normaliseFieldName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

const SECRET_FIELDS: ReadonlySet<string> = new Set(SECRET_FIELD_NAMES.map(normaliseFieldName));

/**
 * Words that make a field secret wherever they stand in its name (`apiKey`, `x_api_key`,
 * `pinBlock`, `otpCode`, `refreshToken`, `clientSecret`): names are split into words at case
 * changes and separators, so `keyword`, `monkey` or `spinner` (one word each) are not secret.
 */
export const SECRET_WORDS: ReadonlySet<string> = new Set([
  'secret',
  'secrets',
  'key',
  'keys',
  'apikey',
  'token',
  'tokens',
  'password',
  'passwords',
  'passwd',
  'passphrase',
  'credential',
  'credentials',
  'pin',
  'pins',
  'pinblock',
  'cvv',
  'cvv2',
  'cvc',
  'cvc2',
  'otp',
  'otps',
  'bvn',
]);

/**
 * A name that ends in one of these words is about a secret, not the secret itself (`keyId`,
 * `tokenType`, `pinTimeoutMs`, `otpLength`, `secretName`, `authTokenExpiresAt`): kept.
 */
const ABOUT_A_SECRET_LAST_WORDS: ReadonlySet<string> = new Set([
  'id',
  'ids',
  'type',
  'types',
  'kind',
  'name',
  'names',
  'label',
  'hint',
  'count',
  'length',
  'len',
  'size',
  'ms',
  's',
  'seconds',
  'at',
  'time',
  'timeout',
  'ttl',
  'age',
  'expires',
  'version',
  'status',
  'state',
  'format',
  'algorithm',
  'prefix',
  'required',
  'enabled',
  'present',
  'attempts',
  'tries',
  'retries',
  'remaining',
  'header',
  'field',
  'fields',
]);

/** A name that starts with one of these is a yes/no about a secret (`hasPinKey`, `isOtpRequired`): kept. */
const PREDICATE_FIRST_WORDS: ReadonlySet<string> = new Set(['has', 'is', 'can', 'should', 'needs', 'uses']);

/** The words of a field name: split at case changes (`pinBlock`, `APIKey`) and at every non-alphanumeric. */
export function fieldNameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/**
 * True when a field of this name is redacted wherever it appears: a listed name in any spelling
 * (SECRET_FIELD_NAMES), or a name with a secret word in it (SECRET_WORDS) that is not about the
 * secret (its last word says what of it: an id, a type, a time) nor a yes/no (`has…`, `is…`).
 */
export function isSecretFieldName(name: string): boolean {
  if (SECRET_FIELDS.has(normaliseFieldName(name))) return true;
  const words = fieldNameWords(name);
  if (words.length === 0 || !words.some((w) => SECRET_WORDS.has(w))) return false;
  if (PREDICATE_FIRST_WORDS.has(words[0]!) && words.length > 1) return false;
  return words.length === 1 || !ABOUT_A_SECRET_LAST_WORDS.has(words[words.length - 1]!);
}

export const REDACTED = '[REDACTED]';

/** The digits of a PAN written in groups, when they are as many as a PAN's (13 to 19): else kept. */
const groupedPan = (m: string) => (/^\d{13,19}$/.test(m.replace(/[ .-]/g, '')) ? REDACTED : m);

/** `Basic <base64 of user:password>`: redacted when the base64 holds a colon (not "Basic checks"). */
const basicCredentials = (m: string, encoded: string) =>
  Buffer.from(encoded, 'base64').toString('latin1').includes(':') ? REDACTED : m;

/** Patterns scrubbed from free text (messages, error strings). None has nested quantifiers. */
const SECRET_TEXT_PATTERNS: [RegExp, string | ((match: string, ...groups: string[]) => string)][] = [
  [/Bearer\s+[A-Za-z0-9._~+/=-]+/gi, REDACTED], // Authorization header values
  [/\bBasic\s+([A-Za-z0-9+/]{6,}={0,2})/g, basicCredentials],
  [/\bwhsec_[A-Za-z0-9+/=]*/g, REDACTED], // Standard Webhooks signing secrets (NOTIFY_SECRET)
  // name=value of a secret in a query string, a form or a message (cvv=123, pin=1234, otp=123456).
  [/\b(cvv2?|cvc2?|pin|otp|password|passwd|secret|token|api[_-]?key)=[^\s&,;]+/gi, `$1=${REDACTED}`],
  // The same in JSON text: "pin":"1234", "otp": 123456.
  [/"(cvv2?|cvc2?|pin|otp|password|passwd|secret|token|api_?key)"\s*:\s*(?:"[^"\\]*"|\d+)/gi, `"$1":"${REDACTED}"`],
  [/\b(?:sandbox_)?sk_[A-Za-z0-9_]{4,}/g, REDACTED], // secret keys
  // Track 2 equivalent data: PAN, the 'D' (or '=') separator, expiry and service code, discretionary data.
  [/;?\b\d{12,19}[D=]\d{4}\d*(?:F|\?)?/gi, REDACTED],
  // Anything shaped like a PAN, also when letters touch it ('…D12', 'pan…abc'): digits bound it, not \b.
  [/(?<!\d)\d{13,19}(?!\d)/g, REDACTED],
  // A PAN written in groups: 13-19 digits separated by single spaces, dashes or dots (4-4-4-4, 4-6-5, ...).
  [/\b\d{4}(?:[ .-]\d{2,7}){2,4}\b/g, groupedPan],
  [/\b([a-z][a-z0-9+.-]*:\/\/[^:/?#\s@]+:)[^@/\s]+@/gi, `$1${REDACTED}@`], // user:password@ in URLs
];

export function scrubText(text: string): string {
  let out = text;
  for (const [re, replacement] of SECRET_TEXT_PATTERNS)
    out = typeof replacement === 'string' ? out.replace(re, replacement) : out.replace(re, replacement as never);
  return out;
}

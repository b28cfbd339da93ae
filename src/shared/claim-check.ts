// The claim check, as workflows, starters and activities see it: secrets (card data, PINs,
// OTPs, PIN blocks, track2, BVNs) never travel through Temporal. The backend's process seals
// them into the claim-check store (src/claim-check) and the workflow carries only an opaque
// handle, plus display data that is not sensitive (BIN, last four, brand). The activity that
// makes the service call redeems the handle. Pure definitions: safe to import from workflows.

/**
 * `cc_` and 64 base64url characters (48 random bytes: a record name and the secret its key is
 * derived from, src/claim-check/handle.ts), or 22 (the version-1 handles of records sealed before
 * per-record keys, until they expire). Opaque: it holds no card data, and it is the only thing that
 * opens its record.
 */
export const CLAIM_HANDLE_PATTERN = /^cc_(?:[A-Za-z0-9_-]{22}|[A-Za-z0-9_-]{64})$/;

export const isClaimHandle = (v: unknown): v is string => typeof v === 'string' && CLAIM_HANDLE_PATTERN.test(v);

/** What a sealed record holds; a handle opens only for the purpose it was sealed for. */
export type SecretPurpose = 'card' | 'pin' | 'otp' | 'bank-code' | 'bvn' | 'mandate-otp' | 'pos-card';

/**
 * The failure type of an activity whose handle no longer opens (redeemed, expired or unknown).
 * Non-retryable; it proves the service call was NOT made, so the flow asks for the data again.
 */
export const SECRET_UNAVAILABLE = 'SecretUnavailable';

/** A card as a workflow knows it: a handle to the sealed PAN, CVV and expiry, and what may be shown. */
export interface SealedCard {
  handle: string;
  /** First six digits of the PAN (PCI DSS allows BIN and last four to be displayed). */
  bin: string;
  last4: string;
  brand: 'visa' | 'mastercard' | 'verve' | 'amex' | 'unknown';
}

export function cardBrand(pan: string): SealedCard['brand'] {
  if (/^4/.test(pan)) return 'visa';
  if (/^(5[1-5]|2[2-7])/.test(pan)) return 'mastercard';
  if (/^(506[01]|507[89]|6500)/.test(pan)) return 'verve';
  if (/^3[47]/.test(pan)) return 'amex';
  return 'unknown';
}

/** The display data of a PAN: never more than BIN and last four. */
export const cardDisplay = (pan: string): Omit<SealedCard, 'handle'> => ({
  bin: pan.slice(0, 6),
  last4: pan.slice(-4),
  brand: cardBrand(pan),
});

// Processor response codes of the POS terminal API: `response_code` of a transaction and of its requery (F3/F4).

export type PosOutcome = 'approved' | 'declined' | 'unknown';

export interface PosResponseClassification {
  outcome: PosOutcome;
  /** What to do next, for the operator or the flow. */
  action: string;
  /** True when the result must be confirmed by the requery by merchant_ref (F4) before anything else. */
  requeryFirst: boolean;
}

const KNOWN_CODES = new Map<string, PosResponseClassification>([
  ['00', { outcome: 'approved', action: 'Approved: complete the sale', requeryFirst: false }],
  ['51', { outcome: 'declined', action: 'Insufficient funds: ask for another card', requeryFirst: false }],
  ['55', { outcome: 'declined', action: 'Incorrect PIN: retry with a fresh card read', requeryFirst: false }],
  ['91', { outcome: 'unknown', action: 'Issuer or switch unavailable', requeryFirst: true }],
  ['96', { outcome: 'unknown', action: 'System malfunction', requeryFirst: true }],
  ['', { outcome: 'unknown', action: 'No response code: requery by merchant_ref', requeryFirst: true }],
]);

/**
 * 00 approved; 51 and 55 declined with the spec's advice; 91 and 96 unknown (requery first, never
 * retry blind); any other code declined with the processor's message. An empty code is unknown.
 */
export function classifyPosResponseCode(code: string, processorMessage?: string): PosResponseClassification {
  const c = String(code ?? '').trim();
  const known = KNOWN_CODES.get(c);
  if (known) return { ...known };
  const msg = processorMessage?.trim();
  return {
    outcome: 'declined',
    action: msg ? `Declined (${c}): ${msg}` : `Declined by the processor (code ${c})`,
    requeryFirst: false,
  };
}

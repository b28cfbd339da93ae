// The one scan for card data in what a page (or anything else) shows: the browser tests of the Web
// UI (test/security/web-ui.test.ts, test/browser/web-ui-metadata.test.ts) look for the PAN and the
// CVV in page text, HTML and decoded payloads with it.

export interface CardDataFound {
  kind: 'PAN' | 'CVV';
  /** The text around it, whitespace folded, for the failure message. */
  context: string;
}

/**
 * Where `card`'s PAN (whole, or in fours with spaces or with dashes) and its CVV appear in `text`
 * (empty: nowhere). A CVV is short: only a number of its own counts, with no letter, digit or
 * hyphen beside it, so 4 digits inside a run id, a timestamp or a page element's random id
 * (`910b8642-…` once matched) are not the CVV.
 */
export function cardDataIn(text: string, card: { number: string; cvv: string }): CardDataFound[] {
  const panForms = [
    card.number,
    card.number.replace(/(\d{4})(?=\d)/g, '$1 '),
    card.number.replace(/(\d{4})(?=\d)/g, '$1-'),
  ];
  const found: CardDataFound[] = [];
  for (const pan of panForms)
    if (text.includes(pan)) found.push({ kind: 'PAN', context: around(text, text.indexOf(pan)) });
  const cvv = new RegExp(`(?<![0-9A-Za-z-])${card.cvv}(?![0-9A-Za-z-])`).exec(text);
  if (cvv) found.push({ kind: 'CVV', context: around(text, cvv.index) });
  return found;
}

const around = (text: string, at: number): string => text.slice(Math.max(0, at - 60), at + 60).replace(/\s+/g, ' ');

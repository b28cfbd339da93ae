// The first step of the terminal flows (sale, refund, pre-authorisation): every field rule, before
// anything is sent. A card read in clear is refused by field name (never by value): the starter
// seals it and the input carries its handle.
import type { z } from 'zod';
import { POS_SEALED_FIELDS } from '../../shared/pos-terminal';
import { inputIssuesOf, type InputIssue } from '../../shared/input-error';
import { invalidInput } from './flow-input';

/**
 * Parses a sealed-card input: the card-read fields are left out of the parse and each one present
 * is an issue of its own (`unsealed`, naming the starter to use); the rest is checked as usual.
 * Throws InvalidInput naming every broken rule.
 */
export function parseSealedPosInput<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  unsealed: InputIssue[],
  what: string,
): z.output<S> {
  const rest = Object.fromEntries(
    Object.entries(raw ?? {}).filter(([k]) => !(POS_SEALED_FIELDS as readonly string[]).includes(k)),
  );
  const parsed = schema.safeParse(rest);
  const issues = [...unsealed, ...(parsed.success ? [] : inputIssuesOf(parsed.error))];
  if (!parsed.success || issues.length > 0) throw invalidInput(what, issues);
  return parsed.data;
}

// The first step of every POS flow: every field rule, before anything is sent. A card read in clear
// is refused by field name (never by value): the starter seals it and the input carries its handle.
import { ApplicationFailure } from '@temporalio/workflow';
import type { z } from 'zod';
import { POS_SEALED_FIELDS } from '../../shared/pos';
import { describeIssues, issuesOf, type FieldIssue } from '../../shared/failures';

/** The workflow's refusal of its input: InvalidInput, naming each broken field and its rule. */
export function invalidPosInput(what: string, issues: FieldIssue[]): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'InvalidInput',
    message: `invalid ${what}: ${describeIssues(issues)}`,
    nonRetryable: true,
    details: [issues],
  });
}

/** Parses `raw` with `schema`, or throws InvalidInput. */
export function parsePosInput<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalidPosInput(what, issuesOf(parsed.error));
  return parsed.data;
}

/**
 * Parses a sealed-card input: the card-read fields are left out of the parse and each one present
 * is an issue of its own (`unsealed`, naming the starter to use); the rest is checked as usual.
 */
export function parseSealedPosInput<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  unsealed: FieldIssue[],
  what: string,
): z.output<S> {
  const rest = Object.fromEntries(
    Object.entries(raw ?? {}).filter(([k]) => !(POS_SEALED_FIELDS as readonly string[]).includes(k)),
  );
  const parsed = schema.safeParse(rest);
  const issues = [...unsealed, ...(parsed.success ? [] : issuesOf(parsed.error))];
  if (!parsed.success || issues.length > 0) throw invalidPosInput(what, issues);
  return parsed.data;
}

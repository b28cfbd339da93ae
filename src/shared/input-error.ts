// The one input error: every typed starter, the CLI and the webhook receiver name a refused input
// the same way, as a list of { field, rule } (the field's dotted path and the rule it broke, never
// the value: card data, BVNs and OTPs are not echoed). Zod only, no Temporal: the receiver, the
// starters and the workflows' own input checks share it.
import type { z } from 'zod';
import { lazy, type Zod } from './lazy';

/** One broken rule: the field's dotted path (e.g. `card.number`, `messages.1.phone_number`) and the rule. */
export interface InputIssue {
  field: string;
  rule: string;
}

/** The issues of a zod error; an issue about the whole input is named `root` (default `(input)`). */
export function inputIssuesOf(error: z.ZodError, root = '(input)'): InputIssue[] {
  return error.issues.map((i) => ({ field: i.path.map(String).join('.') || root, rule: i.message }));
}

/** `field rule; field rule` — how a message names the issues (the same words as the workflows' own refusals). */
export function describeInputIssues(issues: readonly InputIssue[]): string {
  return issues.map((i) => `${i.field} ${i.rule}`).join('; ');
}

/**
 * A starter's input broke a rule; nothing was started, sealed or sent. `issues` name each field and
 * its rule; the message is `invalid <what> input: <field> <rule>; ...`.
 */
export class StarterInputError extends Error {
  override readonly name = 'StarterInputError';
  constructor(
    /** What was refused, e.g. `payment`, `mandate`, `POS transaction`, `SMS send`. */
    readonly what: string,
    readonly issues: InputIssue[],
  ) {
    super(`invalid ${what} input: ${describeInputIssues(issues)}`);
  }
}

/** Validates `raw` with `schema`: the parsed value, or a StarterInputError naming every broken rule at once. */
export function parseStarterInput<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new StarterInputError(what, inputIssuesOf(parsed.error));
  return parsed.data;
}

// ---- Field rules several input schemas share (built with the zod their `lazy` builder was handed) ----

/** zod's `error` option of a required field: "is required" when it is absent, else "must be <what>". */
export const required = (what: string) => ({
  error: (iss: { input: unknown }) => (iss.input === undefined ? 'is required' : `must be ${what}`),
});

/** A required, non-empty text field (e.g. terminal_id): "is required", "must be <what>", "must not be empty", at most `max` characters when given. */
export const requiredText = (z: Zod, what: string, max?: number) => {
  const text = z.string(required(what)).trim().min(1, 'must not be empty');
  return max === undefined ? text : text.max(max, `must be at most ${max} characters`);
};

/** The merchant's own reference of a flow (it names the workflow): 1 to 100 letters, digits, "_", "-" or ".". */
export const flowReference = lazy('input-error.flowReference', (z) =>
  z.string(required('a string')).regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be 1 to 100 letters, digits, "_", "-" or "."'),
);

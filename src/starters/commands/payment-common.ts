// CLI helpers the `pay` commands share (./card-payment.ts, ./bank-payment.ts, ./ussd-payment.ts,
// ./checkout.ts, ./recurring.ts): a secret read from stdin rather than argv, following a flow until
// it ends, printing a payment step's answer, and the line of a bank debit or USSD payment's state.
import type { WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import { CARD_FINAL_STATUSES } from '../../shared/card-payment';
import { DIRECT_FINAL_STATUSES, type DirectPaymentState } from '../../shared/payment-common';
import { followUntilDone } from '../progress';
import { PaymentStepError } from '../payment-common';
import { StarterInputError } from '../../shared/input-error';

/** " (final)" when a payment state is final. */
export const final = (s: { status: string }) =>
  ([...CARD_FINAL_STATUSES, ...DIRECT_FINAL_STATUSES] as string[]).includes(s.status) ? ' (final)' : '';
export const renderDirect = (s: DirectPaymentState): string =>
  `[${s.ussdCode ? 'ussd' : 'bank'} ${s.transactionRef}] ${s.status}${s.authModel ? ` ${s.authModel}` : ''}` +
  `${s.ussdCode && s.status === 'awaiting_payment' ? ` dial ${s.ussdCode} before ${s.expiresAt}` : ''}${s.confirmedBy ? ` by=${s.confirmedBy}` : ''}${s.reason ? ` (${s.reason})` : ''}${final(s)}`;

export async function secretArg(given: string | undefined, what: string): Promise<string> {
  if (given) return given;
  if (process.stdin.isTTY) process.stderr.write(`${what}: `);
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const value = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0].trim();
  if (!value)
    throw new StarterInputError('payment step', [
      { field: `--${what.toLowerCase()}`, rule: `is required (--${what.toLowerCase()} or stdin)` },
    ]);
  return value;
}

/** Prints each state until the flow ends, then the final state's line and the result as JSON. */
export async function follow<S>(
  handle: WorkflowHandle,
  query: QueryDefinition<S>,
  render: (s: S) => string,
): Promise<void> {
  const result = (await followUntilDone(handle, query, render, { intervalMs: 250 })) as S;
  console.log(render(result));
  console.log(JSON.stringify(result, null, 2));
}

/** Prints a step's outcome; a refusal is a normal answer (exit code 2), not a crash. */
export async function runStep<S>(run: () => Promise<S>, render: (s: S) => string): Promise<void> {
  try {
    console.log(render(await run()));
  } catch (err) {
    if (!(err instanceof PaymentStepError)) throw err;
    console.log(`${err.kind}: ${err.message}`);
    process.exitCode = 2;
  }
}

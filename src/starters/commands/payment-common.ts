// CLI helpers the `pay` commands share (./card-payment.ts, ./bank-payment.ts, ./ussd-payment.ts,
// ./checkout.ts, ./recurring.ts): a secret read from stdin or a silent prompt, never argv, following a flow until
// it ends, printing a payment step's answer, and the line of a bank debit or USSD payment's state.
import type { WorkflowHandle } from '@temporalio/client';
import type { Command } from 'commander';
import type { QueryDefinition } from '@temporalio/common';
import { CARD_FINAL_STATUSES } from '../../shared/card-payment';
import { DIRECT_FINAL_STATUSES, type DirectPaymentState } from '../../shared/payment-common';
import type { StarterContext } from '../connect';
import { PaymentStepError } from '../payment-common';
import type { ContextFactory } from './context';
import { parkedForAPerson, printResult, readSecret, settle, settleState } from './output';
import { followToResult } from './run-options';

/** " (final)" when a payment state is final. */
export const final = (s: { status: string }) =>
  ([...CARD_FINAL_STATUSES, ...DIRECT_FINAL_STATUSES] as string[]).includes(s.status) ? ' (final)' : '';
export const renderDirect = (s: DirectPaymentState): string =>
  `[${s.ussdCode ? 'ussd' : 'bank'} ${s.transactionRef}] ${s.status}${s.authModel ? ` ${s.authModel}` : ''}` +
  `${s.ussdCode && s.status === 'awaiting_payment' ? ` dial ${s.ussdCode} before ${s.expiresAt}` : ''}${s.confirmedBy ? ` by=${s.confirmedBy}` : ''}${s.reason ? ` (${s.reason})` : ''}${final(s)}`;

/**
 * `pay pin | otp | code`: the secret a payment waits for, never from argv (its flag is refused), from
 * stdin or a prompt that does not echo; sent as the payment's step, whose answer is printed (runStep).
 */
export function secretStepCommand<S extends { status: string }>(
  pay: Command,
  context: ContextFactory,
  what: 'PIN' | 'OTP' | 'code',
  described: string,
  send: (ctx: StarterContext, ref: string, secret: string) => Promise<S>,
  render: (s: S) => string,
): void {
  const flag = what.toLowerCase();
  pay
    .command(flag)
    .requiredOption('--ref <ref>')
    .description(`${described}: read from stdin, or typed at a prompt that does not echo`)
    .option(
      `--${flag} <${flag}>`,
      `refused: ${what === 'OTP' ? 'an' : 'a'} ${what} on the command line stays in shell history`,
    )
    .action(async (o: { ref: string } & Record<string, string | undefined>) => {
      const secret = await readSecret(what, o[flag]);
      const ctx = await context();
      await runStep(() => send(ctx, o.ref, secret), render);
    });
}

/**
 * Prints each state until the flow ends (or parks for a person), then the last state's line and the
 * state as JSON; the exit code follows its status (0 success, 1 declined or failed, 3 needs a person).
 */
export async function follow<S extends { status: string }>(
  handle: WorkflowHandle,
  query: QueryDefinition<S>,
  render: (s: S) => string,
): Promise<void> {
  // A payment parked for a person (outcome unknown) stops the follow: exit 3, `ops resolve` settles it.
  await followToResult(handle, query, render, { until: parkedForAPerson, echoLast: true });
}

/** Prints a step's outcome; a refusal is a normal answer (exit code 2), an answer lost is 3, not a crash. */
export async function runStep<S extends { status: string }>(
  run: () => Promise<S>,
  render: (s: S) => string,
): Promise<void> {
  try {
    const state = await run();
    printResult(state, render(state));
    settleState(state);
  } catch (err) {
    if (!(err instanceof PaymentStepError)) throw err;
    printResult({ refused: { kind: err.kind, message: err.message } }, `${err.kind}: ${err.message}`);
    settle(err.kind === 'outcome_unknown' ? 'needsPerson' : 'badInput');
  }
}

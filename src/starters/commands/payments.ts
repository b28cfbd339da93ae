// CLI: `npm run cli -- pay <command>`. Card data is read from a JSON file, never from argv; a
// PIN/OTP/bank code may be given with --code or (better: not in the shell history) on stdin.
//
//   pay card --file card-payment.json          a CardPaymentInput; prints each state until final
//   pay pin --ref R [--pin 1234] | pay otp --ref R [--otp 123456]
//   pay bank --file bank.json | pay code --ref R [--code 123456]
//   pay ussd --file ussd.json                  prints the code to dial, then each state until final
//   pay checkout --ref R --amount 250000 --email a@b.co [--currency NGN] [--channels card,transfer]
//                [--metadata '{"order":"A-1"}'] [--pass-charge] [--sub-merchant ID] [--callback-url U]
//   pay recurring --plan P --amount 150000 --email a@b.co --interval-ms 2592000000 [--max-cycles N]
//   pay recurring-cancel --plan P
//   pay status --ref R                         the state of any payment flow by reference
import { readFileSync } from 'node:fs';
import type { WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import type { Command } from 'commander';
import { CARD_FINAL_STATUSES, cardPaymentStateQuery, type CardPaymentState } from '../../shared/card';
import { DIRECT_FINAL_STATUSES, directPaymentStateQuery, type DirectPaymentState } from '../../shared/bank-ussd';
import { checkoutStateQuery, type CheckoutState, type PaymentChannel } from '../../shared/checkout';
import { recurringStateQuery, type RecurringState } from '../../shared/recurring';
import { paymentWorkflowId } from '../../shared/payment-webhook';
import { followUntilDone } from '../progress';
import {
  cancelRecurring,
  firstPaymentCheckoutUrl,
  getCardPaymentState,
  getCheckoutState,
  getDirectPaymentState,
  PaymentStepError,
  resubmitCard,
  startBankPayment,
  startCardPayment,
  startCheckout,
  startRecurring,
  startUssdPayment,
  submitBankCode,
  submitOtp,
  submitPin,
} from '../payments';
import type { ContextFactory } from './context';
import { StarterInputError } from '../../shared/input-error';

const final = (s: { status: string }) =>
  ([...CARD_FINAL_STATUSES, ...DIRECT_FINAL_STATUSES] as string[]).includes(s.status) ? ' (final)' : '';
export const renderCard = (s: CardPaymentState): string =>
  `[card ${s.transactionRef}] ${s.status}${s.card ? ` card=${s.card.brand}…${s.card.last4}` : ''}${s.expects ? ` expects=${s.expects}` : ''}${s.authUrl && s.status === 'awaiting_3ds' ? ` auth_url=${s.authUrl}` : ''}` +
  `${s.confirmedBy ? ` by=${s.confirmedBy}` : ''}${s.reason ? ` (${s.reason})` : ''}${final(s)}`;
export const renderDirect = (s: DirectPaymentState): string =>
  `[${s.ussdCode ? 'ussd' : 'bank'} ${s.transactionRef}] ${s.status}${s.authModel ? ` ${s.authModel}` : ''}` +
  `${s.ussdCode && s.status === 'awaiting_payment' ? ` dial ${s.ussdCode} before ${s.expiresAt}` : ''}${s.confirmedBy ? ` by=${s.confirmedBy}` : ''}${s.reason ? ` (${s.reason})` : ''}${final(s)}`;
export const renderCheckout = (s: CheckoutState): string =>
  `[checkout ${s.transactionRef}] ${s.status}${s.transactionType ? ` ${s.transactionType}` : ''}${s.confirmedBy ? ` by=${s.confirmedBy}` : ''}${s.reason ? ` (${s.reason})` : ''}${final(s)}`;
export const renderRecurring = (s: RecurringState): string =>
  `[recurring ${s.planRef}] ${s.status} cycle=${s.cycle}${s.recentCycles.length ? ` last=${s.recentCycles[s.recentCycles.length - 1].status}` : ''}` +
  `${s.nextChargeAt ? ` next=${s.nextChargeAt}` : ''}${s.reason ? ` (${s.reason})` : ''}`;

const readJson = (file: string): never => JSON.parse(readFileSync(file, 'utf8')) as never;

async function secretArg(given: string | undefined, what: string): Promise<string> {
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
async function follow<S>(handle: WorkflowHandle, query: QueryDefinition<S>, render: (s: S) => string): Promise<void> {
  const result = (await followUntilDone(handle, query, render, { intervalMs: 250 })) as S;
  console.log(render(result));
  console.log(JSON.stringify(result, null, 2));
}

/** Prints a step's outcome; a refusal is a normal answer (exit code 2), not a crash. */
async function runStep<S>(run: () => Promise<S>, render: (s: S) => string): Promise<void> {
  try {
    console.log(render(await run()));
  } catch (err) {
    if (!(err instanceof PaymentStepError)) throw err;
    console.log(`${err.kind}: ${err.message}`);
    process.exitCode = 2;
  }
}

export function registerPaymentCommands(program: Command, context: ContextFactory): void {
  const pay = program.command('pay').description('card, bank, USSD, hosted checkout and recurring payments');

  pay
    .command('card')
    .description('start a direct card payment from a JSON file (card data stays out of argv) and follow it')
    .requiredOption(
      '--file <path>',
      'JSON CardPaymentRequest (the card in the clear; it is sealed before the workflow starts)',
    )
    .action(async (o: { file: string }) => {
      const ctx = await context();
      const handle = await startCardPayment(ctx, readJson(o.file));
      console.log(`started ${handle.workflowId}`);
      await follow(handle, cardPaymentStateQuery, renderCard);
    });
  pay
    .command('card-again')
    .description(
      'in awaiting_card (the sealed card expired before it was sent): the card again, from a JSON file {number, cvv, expiryMonth, expiryYear}',
    )
    .requiredOption('--ref <ref>')
    .requiredOption('--file <path>', 'JSON card')
    .action(async (o: { ref: string; file: string }) => {
      const ctx = await context();
      await runStep(() => resubmitCard(ctx, o.ref, readJson(o.file)), renderCard);
    });
  pay
    .command('pin')
    .requiredOption('--ref <ref>')
    .option('--pin <pin>', '4 digits (default: read from stdin)')
    .action(async (o: { ref: string; pin?: string }) => {
      const ctx = await context();
      const pin = await secretArg(o.pin, 'PIN');
      await runStep(() => submitPin(ctx, o.ref, pin), renderCard);
    });
  pay
    .command('otp')
    .requiredOption('--ref <ref>')
    .option('--otp <otp>', 'the OTP (default: read from stdin)')
    .action(async (o: { ref: string; otp?: string }) => {
      const ctx = await context();
      const otp = await secretArg(o.otp, 'OTP');
      await runStep(() => submitOtp(ctx, o.ref, otp), renderCard);
    });
  pay
    .command('bank')
    .requiredOption('--file <path>', 'JSON BankPaymentInput')
    .action(async (o: { file: string }) => {
      const ctx = await context();
      const handle = await startBankPayment(ctx, readJson(o.file));
      console.log(`started ${handle.workflowId}`);
      await follow(handle, directPaymentStateQuery, renderDirect);
    });
  pay
    .command('code')
    .requiredOption('--ref <ref>')
    .option('--code <code>', "the payer's token or OTP (default: read from stdin)")
    .action(async (o: { ref: string; code?: string }) => {
      const ctx = await context();
      const code = await secretArg(o.code, 'CODE');
      await runStep(() => submitBankCode(ctx, o.ref, code), renderDirect);
    });
  pay
    .command('ussd')
    .requiredOption('--file <path>', 'JSON UssdPaymentInput')
    .action(async (o: { file: string }) => {
      const ctx = await context();
      const { ussdCode, expiresAt, handle } = await startUssdPayment(ctx, readJson(o.file));
      console.log(`started ${handle.workflowId}: dial ${ussdCode}${expiresAt ? ` before ${expiresAt}` : ''}`);
      await follow(handle, directPaymentStateQuery, renderDirect);
    });
  pay
    .command('checkout')
    .requiredOption('--ref <ref>')
    .requiredOption('--amount <lowestUnit>')
    .requiredOption('--email <email>')
    .option('--currency <c>', 'NGN or USD', 'NGN')
    .option('--channels <list>', 'comma-separated: card,bank,ussd,transfer')
    .option('--metadata <json>', 'custom fields, returned in the webhook')
    .option('--pass-charge', 'the payer pays the charge')
    .option('--sub-merchant <id>', 'aggregators only')
    .option('--callback-url <url>', 'where the payer returns (E-3)')
    .option('--expiry-ms <ms>')
    .action(
      async (o: {
        ref: string;
        amount: string;
        email: string;
        currency: 'NGN' | 'USD';
        channels?: string;
        metadata?: string;
        passCharge?: boolean;
        subMerchant?: string;
        callbackUrl?: string;
        expiryMs?: string;
      }) => {
        const ctx = await context();
        let metadata: Record<string, unknown> | undefined;
        try {
          metadata = o.metadata ? (JSON.parse(o.metadata) as Record<string, unknown>) : undefined;
        } catch {
          throw new StarterInputError('payment', [{ field: 'metadata', rule: 'must be a JSON object' }]);
        }
        const { checkoutUrl, handle } = await startCheckout(ctx, {
          transactionRef: o.ref,
          amount: Number(o.amount),
          email: o.email,
          currency: o.currency,
          metadata,
          passCharge: o.passCharge,
          subMerchantId: o.subMerchant,
          callbackUrl: o.callbackUrl,
          channels: o.channels?.split(',').map((c) => c.trim()) as PaymentChannel[] | undefined,
          expiryMs: o.expiryMs ? Number(o.expiryMs) : undefined,
        });
        console.log(`checkout_url: ${checkoutUrl}`);
        await follow(handle, checkoutStateQuery, renderCheckout);
      },
    );
  pay
    .command('recurring')
    .requiredOption('--plan <ref>')
    .requiredOption('--amount <lowestUnit>')
    .requiredOption('--email <email>')
    .requiredOption('--interval-ms <ms>')
    .option('--currency <c>', 'NGN or USD', 'NGN')
    .option('--max-cycles <n>')
    .action(
      async (o: {
        plan: string;
        amount: string;
        email: string;
        intervalMs: string;
        currency: 'NGN' | 'USD';
        maxCycles?: string;
      }) => {
        const ctx = await context();
        const handle = await startRecurring(ctx, {
          planRef: o.plan,
          amount: Number(o.amount),
          email: o.email,
          intervalMs: Number(o.intervalMs),
          currency: o.currency,
          maxCycles: o.maxCycles ? Number(o.maxCycles) : undefined,
        });
        console.log(`first payment: ${await firstPaymentCheckoutUrl(ctx, o.plan)}`);
        await follow(handle, recurringStateQuery, renderRecurring);
      },
    );
  pay
    .command('recurring-cancel')
    .requiredOption('--plan <ref>')
    .action(async (o: { plan: string }) => {
      const ctx = await context();
      await cancelRecurring(ctx, o.plan);
      console.log(`cancel requested for ${o.plan}`);
    });
  pay
    .command('status')
    .requiredOption('--ref <ref>')
    .action(async (o: { ref: string }) => {
      const ctx = await context();
      const type = (await ctx.client.workflow.getHandle(paymentWorkflowId(o.ref)).describe()).type;
      if (type === 'cardPaymentWorkflow') console.log(renderCard(await getCardPaymentState(ctx, o.ref)));
      else if (type === 'bankPaymentWorkflow' || type === 'ussdPaymentWorkflow')
        console.log(renderDirect(await getDirectPaymentState(ctx, o.ref)));
      else if (type === 'checkoutWorkflow') console.log(renderCheckout(await getCheckoutState(ctx, o.ref)));
      else console.log(`${paymentWorkflowId(o.ref)} is a ${type}`);
    });
}

// CLI: `npm run cli -- pay <command>`. Card data is read from a JSON file, never from argv.
//
//   pay card --file card-payment.json        (a CardPaymentInput) then follows the state
//   pay pin --ref R --pin 1234 | pay otp --ref R --otp 123456
//   pay bank --file bank.json | pay code --ref R --code 123456
//   pay ussd --file ussd.json
//   pay checkout --ref R --amount 250000 --email a@b.co [--currency NGN]
//   pay recurring --plan P --amount 150000 --email a@b.co --interval-ms 2592000000 | pay recurring-cancel --plan P
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CARD_FINAL_STATUSES, cardPaymentStateQuery, type CardPaymentState } from '../../shared/card';
import { directPaymentStateQuery, type DirectPaymentState } from '../../shared/bank-ussd';
import { recurringStateQuery, type RecurringState } from '../../shared/checkout';
import { followUntilDone } from '../progress';
import {
  cancelRecurring, firstPaymentCheckoutUrl, startBankPayment, startCardPayment, startCheckout, startRecurring, startUssdPayment, submitBankCode, submitOtp, submitPin,
} from '../payments';
import type { ContextFactory } from './index';

const renderCard = (s: CardPaymentState) =>
  `[card ${s.transactionRef}] ${s.status}${s.authUrl && s.status === 'awaiting_3ds' ? ` auth_url=${s.authUrl}` : ''}${s.reason ? ` (${s.reason})` : ''}${CARD_FINAL_STATUSES.includes(s.status) ? ' (final)' : ''}`;
const renderDirect = (s: DirectPaymentState) =>
  `[${s.ussdCode ? 'ussd' : 'bank'} ${s.transactionRef}] ${s.status}${s.authModel ? ` ${s.authModel}` : ''}${s.ussdCode ? ` dial ${s.ussdCode} before ${s.expiresAt}` : ''}${s.reason ? ` (${s.reason})` : ''}`;
const renderRecurring = (s: RecurringState) => `[recurring ${s.planRef}] ${s.status} cycle=${s.cycle}${s.nextChargeAt ? ` next=${s.nextChargeAt}` : ''}`;
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

export function registerPaymentCommands(program: Command, context: ContextFactory): void {
  const pay = program.command('pay').description('card, bank, USSD, hosted checkout and recurring payments');

  pay.command('card').requiredOption('--file <path>', 'JSON CardPaymentInput (card data stays out of argv)').action(async (o: { file: string }) => {
    const ctx = await context();
    const handle = await startCardPayment(ctx.client, ctx.taskQueue, readJson(o.file));
    await followUntilDone(handle, cardPaymentStateQuery, renderCard);
  });
  pay.command('pin').requiredOption('--ref <ref>').requiredOption('--pin <pin>').action(async (o: { ref: string; pin: string }) => {
    const ctx = await context();
    console.log(renderCard(await submitPin(ctx.client, o.ref, o.pin)));
  });
  pay.command('otp').requiredOption('--ref <ref>').requiredOption('--otp <otp>').action(async (o: { ref: string; otp: string }) => {
    const ctx = await context();
    console.log(renderCard(await submitOtp(ctx.client, o.ref, o.otp)));
  });
  pay.command('bank').requiredOption('--file <path>', 'JSON BankPaymentInput').action(async (o: { file: string }) => {
    const ctx = await context();
    await followUntilDone(await startBankPayment(ctx.client, ctx.taskQueue, readJson(o.file)), directPaymentStateQuery, renderDirect);
  });
  pay.command('code').requiredOption('--ref <ref>').requiredOption('--code <code>').action(async (o: { ref: string; code: string }) => {
    const ctx = await context();
    console.log(renderDirect(await submitBankCode(ctx.client, o.ref, o.code)));
  });
  pay.command('ussd').requiredOption('--file <path>', 'JSON UssdPaymentInput').action(async (o: { file: string }) => {
    const ctx = await context();
    await followUntilDone(await startUssdPayment(ctx.client, ctx.taskQueue, readJson(o.file)), directPaymentStateQuery, renderDirect);
  });
  pay
    .command('checkout')
    .requiredOption('--ref <ref>')
    .requiredOption('--amount <lowestUnit>')
    .requiredOption('--email <email>')
    .option('--currency <c>', 'NGN or USD', 'NGN')
    .action(async (o: { ref: string; amount: string; email: string; currency: 'NGN' | 'USD' }) => {
      const ctx = await context();
      const { checkoutUrl, handle } = await startCheckout(ctx.client, ctx.taskQueue, { transactionRef: o.ref, amount: Number(o.amount), email: o.email, currency: o.currency });
      console.log(`checkout_url: ${checkoutUrl}`);
      console.log(JSON.stringify(await handle.result()));
    });
  pay
    .command('recurring')
    .requiredOption('--plan <ref>')
    .requiredOption('--amount <lowestUnit>')
    .requiredOption('--email <email>')
    .requiredOption('--interval-ms <ms>')
    .option('--currency <c>', 'NGN or USD', 'NGN')
    .action(async (o: { plan: string; amount: string; email: string; intervalMs: string; currency: 'NGN' | 'USD' }) => {
      const ctx = await context();
      const handle = await startRecurring(ctx.client, ctx.taskQueue, { planRef: o.plan, amount: Number(o.amount), email: o.email, intervalMs: Number(o.intervalMs), currency: o.currency });
      console.log(`first payment: ${await firstPaymentCheckoutUrl(ctx.client, o.plan)}`);
      await followUntilDone(handle, recurringStateQuery, renderRecurring);
    });
  pay.command('recurring-cancel').requiredOption('--plan <ref>').action(async (o: { plan: string }) => {
    const ctx = await context();
    await cancelRecurring(ctx.client, o.plan);
    console.log(`cancel requested for ${o.plan}`);
  });
}

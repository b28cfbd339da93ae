// CLI: `npm run cli -- pay card | card-again | pin | otp`: the direct card payment flow. Card data
// is read from a JSON file, never from argv; a PIN or OTP may be given with --pin/--otp or (better:
// not in the shell history) on stdin.
//
//   pay card --file card-payment.json          a CardPaymentRequest; prints each state until final
//   pay card-again --ref R --file card.json    in awaiting_card: the card again
//   pay pin --ref R [--pin 1234] | pay otp --ref R [--otp 123456]
import type { Command } from 'commander';
import { cardPaymentStateQuery, type CardPaymentState } from '../../shared/card-payment';
import { resubmitCard, startCardPayment, submitOtp, submitPin } from '../card-payment';
import type { ContextFactory } from './context';
import { readJsonFile } from './json-file';
import { final, follow, runStep, secretArg } from './payment-common';

export const renderCard = (s: CardPaymentState): string =>
  `[card ${s.transactionRef}] ${s.status}${s.card ? ` card=${s.card.brand}…${s.card.last4}` : ''}${s.expects ? ` expects=${s.expects}` : ''}${s.authUrl && s.status === 'awaiting_3ds' ? ` auth_url=${s.authUrl}` : ''}` +
  `${s.confirmedBy ? ` by=${s.confirmedBy}` : ''}${s.reason ? ` (${s.reason})` : ''}${final(s)}`;

export function registerCardPaymentCommands(pay: Command, context: ContextFactory): void {
  pay
    .command('card')
    .description('start a direct card payment from a JSON file (card data stays out of argv) and follow it')
    .requiredOption(
      '--file <path>',
      'JSON CardPaymentRequest (the card in the clear; it is sealed before the workflow starts)',
    )
    .action(async (o: { file: string }) => {
      const ctx = await context();
      const handle = await startCardPayment(ctx, readJsonFile(o.file));
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
      await runStep(() => resubmitCard(ctx, o.ref, readJsonFile(o.file)), renderCard);
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
}

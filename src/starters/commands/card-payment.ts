// CLI: `npm run cli -- pay card | card-again | pin | otp`: the direct card payment flow. Card data
// is read from a JSON file, never from argv; a PIN or OTP from stdin, or typed at a prompt that
// does not echo (--pin/--otp are refused: argv stays in shell history and process lists).
//
//   pay card --file card-payment.json          a CardPaymentRequest; prints each state until final
//   pay card-again --ref R --file card.json    in awaiting_card: the card again
//   echo 1234 | pay pin --ref R | pay otp --ref R   (prompts on a terminal)
import type { Command } from 'commander';
import { cardPaymentStateQuery, type CardPaymentState } from '../../shared/card-payment';
import { resubmitCard, startCardPayment, submitOtp, submitPin } from '../card-payment';
import type { ContextFactory } from './context';
import { readJsonFile } from './json-file';
import { final, follow, runStep, secretStepCommand } from './payment-common';
import { startedFlow, startsFlow } from './run-options';

export const renderCard = (s: CardPaymentState): string =>
  `[card ${s.transactionRef}] ${s.status}${s.card ? ` card=${s.card.brand}…${s.card.last4}` : ''}${s.expects ? ` expects=${s.expects}` : ''}${s.authUrl && s.status === 'awaiting_3ds' ? ` auth_url=${s.authUrl}` : ''}` +
  `${s.confirmedBy ? ` by=${s.confirmedBy}` : ''}${s.reason ? ` (${s.reason})` : ''}${final(s)}`;

export function registerCardPaymentCommands(pay: Command, context: ContextFactory): void {
  startsFlow(
    pay
      .command('card')
      .description('start a direct card payment from a JSON file (card data stays out of argv) and follow it')
      .requiredOption(
        '--file <path>',
        'JSON CardPaymentRequest (the card in the clear; it is sealed before the workflow starts)',
      ),
  ).action(async (o: { file: string }) => {
    const input = readJsonFile<Parameters<typeof startCardPayment>[1]>(o.file);
    const handle = await startCardPayment(await context(), input);
    if (startedFlow(handle)) await follow(handle, cardPaymentStateQuery, renderCard);
  });
  pay
    .command('card-again')
    .description(
      'in awaiting_card (the sealed card expired before it was sent): the card again, from a JSON file {number, cvv, expiryMonth, expiryYear}',
    )
    .requiredOption('--ref <ref>')
    .requiredOption('--file <path>', 'JSON card')
    .action(async (o: { ref: string; file: string }) => {
      const card = readJsonFile<Parameters<typeof resubmitCard>[2]>(o.file);
      const ctx = await context();
      await runStep(() => resubmitCard(ctx, o.ref, card), renderCard);
    });
  secretStepCommand(pay, context, 'PIN', 'the PIN', submitPin, renderCard);
  secretStepCommand(pay, context, 'OTP', 'the OTP', submitOtp, renderCard);
}

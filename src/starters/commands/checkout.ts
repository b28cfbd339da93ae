// CLI: `npm run cli -- pay checkout`: the hosted checkout flow.
//
//   pay checkout --ref R --amount 250000 --email a@b.co [--currency NGN] [--channels card,transfer]
//                [--metadata '{"order":"A-1"}'] [--pass-charge] [--sub-merchant ID] [--callback-url U]
import type { Command } from 'commander';
import { checkoutStateQuery, type CheckoutState, type PaymentChannel } from '../../shared/checkout';
import { startCheckout } from '../checkout';
import { withApi, type ContextFactory } from './context';
import { printResult, progress } from './output';
import { StarterInputError } from '../../shared/input-error';
import { final, follow } from './payment-common';
import { startedFlow, startsFlow } from './run-options';
import { sentAsInput, testEnvironmentOnly } from './test-environment';

export const renderCheckout = (s: CheckoutState): string =>
  `[checkout ${s.transactionRef}] ${s.status}${s.transactionType ? ` ${s.transactionType}` : ''}${s.confirmedBy ? ` by=${s.confirmedBy}` : ''}${s.reason ? ` (${s.reason})` : ''}${final(s)}`;

export function registerCheckoutCommands(pay: Command, context: ContextFactory): void {
  startsFlow(pay.command('checkout'))
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
        progress(`checkout_url: ${checkoutUrl}`);
        if (startedFlow(handle)) await follow(handle, checkoutStateQuery, renderCheckout);
      },
    );

  pay
    .command('simulate-transfer')
    .description(
      "test environment only (A2): pay a checkout's dynamic account (shown by its transfer channel) as the payer's transfer would",
    )
    .requiredOption('--account <number>', 'the dynamic account number (10 digits)')
    .requiredOption('--amount <lowestUnit>', 'the amount due, in the lowest unit (kobo)')
    .action(async (o: { account: string; amount: string }) => {
      testEnvironmentOnly('pay simulate-transfer');
      const amount = /^\d+$/.test(o.amount) ? Number(o.amount) : Number.NaN;
      const answer = (
        await sentAsInput('pay simulate-transfer', () =>
          withApi((api) => api.checkout.simulateTransfer({ virtual_account_number: o.account, amount })),
        )
      ).data;
      const result = { virtual_account_number: o.account, amount, answer };
      printResult(result, `paid ${amount} into ${o.account}: ${typeof answer === 'string' ? answer : 'accepted'}`);
    });
}

// CLI: `pay status` and `pos status`: the state of any flow of the group, by its reference. They
// read several flows, so they live here rather than in one flow's file (each flow's own commands are
// in the file named after it).
//
//   pay status --ref R                         the state of any payment flow by reference
//   pos status --reference ORD-1 | --merchant-ref REF
import type { Command } from 'commander';
import { paymentWorkflowId } from '../../shared/payment-webhook';
import { posRemoteStateQuery } from '../../shared/pos-remote';
import { posTransactionStateQuery } from '../../shared/pos-terminal';
import { StarterInputError } from '../../shared/input-error';
import { getCardPaymentState } from '../card-payment';
import { getCheckoutState } from '../checkout';
import { getDirectPaymentState } from '../payment-common';
import { posRemoteRequestHandle } from '../pos-remote';
import { posTransactionHandle } from '../pos-terminal';
import type { ContextFactory } from './context';
import { printResult, settleState } from './output';
import { asJson, followToResult } from './run-options';
import { renderCard } from './card-payment';
import { renderCheckout } from './checkout';
import { renderDirect } from './payment-common';
import { renderPosRemoteState } from './pos-remote';
import { renderPosTransactionState } from './pos-terminal';

/** `pay status`: a card, bank, USSD or checkout payment's state line. */
export function registerPaymentStatusCommand(pay: Command, context: ContextFactory): void {
  pay
    .command('status')
    .requiredOption('--ref <ref>')
    .action(async (o: { ref: string }) => {
      const ctx = await context();
      const type = (await ctx.client.workflow.getHandle(paymentWorkflowId(o.ref)).describe()).type;
      // The exit code follows the payment's status, as when it was followed (docs/cli.md).
      const show = <S extends { status: string }>(state: S, render: (s: S) => string) => {
        printResult(state, render(state));
        settleState(state);
      };
      if (type === 'cardPaymentWorkflow') show(await getCardPaymentState(ctx, o.ref), renderCard);
      else if (type === 'bankPaymentWorkflow' || type === 'ussdPaymentWorkflow')
        show(await getDirectPaymentState(ctx, o.ref), renderDirect);
      else if (type === 'checkoutWorkflow') show(await getCheckoutState(ctx, o.ref), renderCheckout);
      else printResult({ workflowId: paymentWorkflowId(o.ref), type }, `${paymentWorkflowId(o.ref)} is a ${type}`);
    });
}

/** `pos status`: follows a remote request or a terminal transaction until it ends. */
export function registerPosStatusCommand(pos: Command, context: ContextFactory): void {
  pos
    .command('status')
    .description('show a POS flow and follow it until it ends')
    .option('--reference <ref>', 'remote request order reference')
    .option('--merchant-ref <ref>', 'terminal transaction merchant_ref')
    .action(async (o: { reference?: string; merchantRef?: string }) => {
      const ctx = await context();
      // Follow the flow to its end, print its state as JSON, and exit with what that state means.
      if (o.reference)
        await followToResult(posRemoteRequestHandle(ctx, o.reference), posRemoteStateQuery, renderPosRemoteState, {
          text: asJson,
        });
      else if (o.merchantRef)
        await followToResult(
          posTransactionHandle(ctx, o.merchantRef),
          posTransactionStateQuery,
          renderPosTransactionState,
          { text: asJson },
        );
      else {
        throw new StarterInputError('POS status', [
          { field: '--reference', rule: 'give --reference or --merchant-ref' },
        ]);
      }
    });
}

// Every workflow the payments worker runs (the export name is the workflow type). Workflow code is
// deterministic: it imports only @temporalio/workflow, src/shared, and activity *types*.
//
// Each flow's module is loaded on the flow's first call, not here: the workflow sandbox evaluates
// the modules an execution requires once per execution (and keeps them while the execution is
// cached), so a vend evaluates the vending flow and what it imports, not all nineteen flows.
// That was most of the sandbox's CPU per flow and of the worker's memory per waiting flow
// (docs/performance.md). Module evaluation runs no commands, so where it happens does not touch history.
/* eslint-disable @typescript-eslint/no-require-imports */
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { WORKFLOW_VERSIONING, type VersionedWorkflowType } from './steps/versioning';

import type * as WebhookInbox from './webhook-inbox';
import type * as VirtualAccountCredit from './virtual-account-credit';
import type * as VirtualAccountErrorLogSweep from './virtual-account-error-log-sweep';
import type * as PosRemote from './pos-remote';
import type * as PosTerminalLock from './pos-terminal-lock';
import type * as PosTerminal from './pos-terminal';
import type * as Vending from './vending';
import type * as Mandate from './mandate';
import type * as CardPayment from './card-payment';
import type * as BankPayment from './bank-payment';
import type * as UssdPayment from './ussd-payment';
import type * as Checkout from './checkout';
import type * as Recurring from './recurring';
import type * as ScheduledMoney from './scheduled-money';
import type * as PosRefund from './pos-refund';
import type * as PosRefundLedger from './pos-refund-ledger';
import type * as PosPreauth from './pos-preauth';
import type * as Reconciliation from './reconciliation';
import type * as Sms from './sms';
import type * as MerchantEventDelivery from './merchant-event-delivery';

export const unmatchedPaymentWebhookWorkflow: typeof WebhookInbox.unmatchedPaymentWebhookWorkflow = (...args) =>
  (require('./webhook-inbox') as typeof WebhookInbox).unmatchedPaymentWebhookWorkflow(...args);
export const virtualAccountCreditWorkflow: typeof VirtualAccountCredit.virtualAccountCreditWorkflow = (...args) =>
  (require('./virtual-account-credit') as typeof VirtualAccountCredit).virtualAccountCreditWorkflow(...args);
export const virtualAccountErrorLogSweepWorkflow: typeof VirtualAccountErrorLogSweep.virtualAccountErrorLogSweepWorkflow =
  (...args) =>
    (
      require('./virtual-account-error-log-sweep') as typeof VirtualAccountErrorLogSweep
    ).virtualAccountErrorLogSweepWorkflow(...args);
export const posRemoteRequestWorkflow: typeof PosRemote.posRemoteRequestWorkflow = (...args) =>
  (require('./pos-remote') as typeof PosRemote).posRemoteRequestWorkflow(...args);
export const posTerminalLockWorkflow: typeof PosTerminalLock.posTerminalLockWorkflow = (...args) =>
  (require('./pos-terminal-lock') as typeof PosTerminalLock).posTerminalLockWorkflow(...args);
export const posTerminalTransactionWorkflow: typeof PosTerminal.posTerminalTransactionWorkflow = (...args) =>
  (require('./pos-terminal') as typeof PosTerminal).posTerminalTransactionWorkflow(...args);
export const vendElectricityWorkflow: typeof Vending.vendElectricityWorkflow = (...args) =>
  (require('./vending') as typeof Vending).vendElectricityWorkflow(...args);
export const mandateWorkflow: typeof Mandate.mandateWorkflow = (...args) =>
  (require('./mandate') as typeof Mandate).mandateWorkflow(...args);
export const cardPaymentWorkflow: typeof CardPayment.cardPaymentWorkflow = (...args) =>
  (require('./card-payment') as typeof CardPayment).cardPaymentWorkflow(...args);
export const bankPaymentWorkflow: typeof BankPayment.bankPaymentWorkflow = (...args) =>
  (require('./bank-payment') as typeof BankPayment).bankPaymentWorkflow(...args);
export const ussdPaymentWorkflow: typeof UssdPayment.ussdPaymentWorkflow = (...args) =>
  (require('./ussd-payment') as typeof UssdPayment).ussdPaymentWorkflow(...args);
export const checkoutWorkflow: typeof Checkout.checkoutWorkflow = (...args) =>
  (require('./checkout') as typeof Checkout).checkoutWorkflow(...args);
export const recurringChargeWorkflow: typeof Recurring.recurringChargeWorkflow = (...args) =>
  (require('./recurring') as typeof Recurring).recurringChargeWorkflow(...args);
export const tokenChargeWorkflow: typeof Recurring.tokenChargeWorkflow = (...args) =>
  (require('./recurring') as typeof Recurring).tokenChargeWorkflow(...args);
export const scheduledMandateDebitWorkflow: typeof ScheduledMoney.scheduledMandateDebitWorkflow = (...args) =>
  (require('./scheduled-money') as typeof ScheduledMoney).scheduledMandateDebitWorkflow(...args);
export const scheduledTokenChargeWorkflow: typeof ScheduledMoney.scheduledTokenChargeWorkflow = (...args) =>
  (require('./scheduled-money') as typeof ScheduledMoney).scheduledTokenChargeWorkflow(...args);
export const posRefundWorkflow: typeof PosRefund.posRefundWorkflow = (...args) =>
  (require('./pos-refund') as typeof PosRefund).posRefundWorkflow(...args);
export const posRefundLedgerWorkflow: typeof PosRefundLedger.posRefundLedgerWorkflow = (...args) =>
  (require('./pos-refund-ledger') as typeof PosRefundLedger).posRefundLedgerWorkflow(...args);
export const posPreAuthWorkflow: typeof PosPreauth.posPreAuthWorkflow = (...args) =>
  (require('./pos-preauth') as typeof PosPreauth).posPreAuthWorkflow(...args);
export const reconciliationMarkWorkflow: typeof Reconciliation.reconciliationMarkWorkflow = (...args) =>
  (require('./reconciliation') as typeof Reconciliation).reconciliationMarkWorkflow(...args);
export const reconciliationWorkflow: typeof Reconciliation.reconciliationWorkflow = (...args) =>
  (require('./reconciliation') as typeof Reconciliation).reconciliationWorkflow(...args);
export const smsCampaignFollowWorkflow: typeof Sms.smsCampaignFollowWorkflow = (...args) =>
  (require('./sms') as typeof Sms).smsCampaignFollowWorkflow(...args);
export const smsCampaignWorkflow: typeof Sms.smsCampaignWorkflow = (...args) =>
  (require('./sms') as typeof Sms).smsCampaignWorkflow(...args);
export const smsSendWorkflow: typeof Sms.smsSendWorkflow = (...args) =>
  (require('./sms') as typeof Sms).smsSendWorkflow(...args);
export const merchantEventDeliveryWorkflow: typeof MerchantEventDelivery.merchantEventDeliveryWorkflow = (...args) =>
  (require('./merchant-event-delivery') as typeof MerchantEventDelivery).merchantEventDeliveryWorkflow(...args);

// Each type's versioning behaviour, from the one table (src/workflows/steps/versioning.ts).
const exported: Record<VersionedWorkflowType, (...args: never[]) => Promise<unknown>> = {
  unmatchedPaymentWebhookWorkflow,
  virtualAccountCreditWorkflow,
  virtualAccountErrorLogSweepWorkflow,
  posRemoteRequestWorkflow,
  posTerminalLockWorkflow,
  posTerminalTransactionWorkflow,
  vendElectricityWorkflow,
  mandateWorkflow,
  cardPaymentWorkflow,
  bankPaymentWorkflow,
  ussdPaymentWorkflow,
  checkoutWorkflow,
  recurringChargeWorkflow,
  tokenChargeWorkflow,
  scheduledMandateDebitWorkflow,
  scheduledTokenChargeWorkflow,
  posRefundWorkflow,
  posRefundLedgerWorkflow,
  posPreAuthWorkflow,
  reconciliationMarkWorkflow,
  reconciliationWorkflow,
  smsCampaignFollowWorkflow,
  smsCampaignWorkflow,
  smsSendWorkflow,
  merchantEventDeliveryWorkflow,
};
// An unversioned worker (WORKER_VERSIONING=off) must not state a behaviour: the server refuses a
// workflow task completion that carries one without deployment options. The getter runs as the
// execution starts on a worker, which tells whether that worker polls as a version (an unversioned
// worker still reports a build id, with no deployment name).
for (const [type, fn] of Object.entries(exported))
  setWorkflowOptions(
    () => ({
      versioningBehavior: workflowInfo().currentDeploymentVersion?.deploymentName
        ? WORKFLOW_VERSIONING[type as VersionedWorkflowType].behavior
        : undefined,
    }),
    fn,
  );

// Each workflow type's versioning behaviour (Worker Versioning, docs/operations.md "Change a workflow"),
// one table with the reason for each. src/workflows/index.ts applies it to the exported types, and
// test/foundation/versioning.test.ts checks that every exported type has a row.
// - PINNED: the flow finishes in minutes; it runs to its end on the worker version that started it,
//   so a change ships as a new version with no patch. A parked flow (outcome unknown) keeps its
//   version draining until it is resolved.
// - AUTO_UPGRADE: the flow lives for days or forever (or is started by a Schedule that outlives any
//   version); it moves to the current version on its next task, so a change to it is a patch, with a
//   retirement plan, checked by `npm run replay` against recorded histories.
import type { VersioningBehavior } from '@temporalio/common';

export interface VersioningRow {
  behavior: Exclude<VersioningBehavior, 'UNSPECIFIED'>;
  why: string;
}

/** Finishes in minutes (`why`): runs to its end on the version that started it. */
const pinned = (why: string): VersioningRow => ({
  behavior: 'PINNED',
  why: `finishes in minutes (${why}): runs to its end on the version that started it`,
});
/** Lives longer than a version (`why`): moves to the current version; changes through a patch. */
const autoUpgrade = (why: string): VersioningRow => ({ behavior: 'AUTO_UPGRADE', why });

export const WORKFLOW_VERSIONING = {
  cardPaymentWorkflow: pinned('PIN/OTP/3DS steps time out in minutes'),
  bankPaymentWorkflow: pinned('OTP step'),
  ussdPaymentWorkflow: pinned('the payer dials within the session'),
  checkoutWorkflow: pinned("the hosted page's session"),
  tokenChargeWorkflow: pinned('one charge of a saved token'),
  vendElectricityWorkflow: pinned('one purchase and its requery'),
  posRemoteRequestWorkflow: pinned("the request's 5-minute lifetime"),
  posTerminalTransactionWorkflow: pinned('one sale and its requery'),
  posRefundWorkflow: pinned('one refund and its requery'),
  smsSendWorkflow: pinned('one batch'),
  smsCampaignWorkflow: pinned("one campaign's creation"),
  smsCampaignFollowWorkflow: pinned('follows one campaign to its report'),
  reconciliationMarkWorkflow: pinned('records one mark and ends at once'),
  mandateWorkflow: autoUpgrade('lives for the mandate (months): approval, then debits on schedule'),
  recurringChargeWorkflow: autoUpgrade('a recurring plan: charges on a schedule for months'),
  posPreAuthWorkflow: autoUpgrade('holds a pre-authorisation for its window (7 days by default)'),
  posRefundLedgerWorkflow: autoUpgrade("a sale's refund ledger, kept while refunds may come"),
  posTerminalLockWorkflow: autoUpgrade("a terminal's lock, long-lived across requests"),
  unmatchedPaymentWebhookWorkflow: autoUpgrade('an inbox holding a webhook no flow owns yet'),
  virtualAccountCreditWorkflow: autoUpgrade(
    'a frozen credit waits (days) until the service releases it; a failed hand-over waits for an operator',
  ),
  virtualAccountErrorLogSweepWorkflow: autoUpgrade('started by a Schedule that outlives versions'),
  reconciliationWorkflow: autoUpgrade('started by the daily Schedule that outlives versions'),
  scheduledMandateDebitWorkflow: autoUpgrade('started by a Schedule that outlives versions'),
  scheduledTokenChargeWorkflow: autoUpgrade('started by a Schedule that outlives versions'),
  merchantEventDeliveryWorkflow: autoUpgrade(
    "one merchant event's delivery, retried for up to NOTIFY_RETRY_FOR (3 days by default)",
  ),
} satisfies Record<string, VersioningRow>;

export type VersionedWorkflowType = keyof typeof WORKFLOW_VERSIONING;

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

const MINUTES = 'finishes in minutes: runs to its end on the version that started it';

export const WORKFLOW_VERSIONING = {
  cardPaymentWorkflow: { behavior: 'PINNED', why: `${MINUTES} (PIN/OTP/3DS steps time out in minutes)` },
  bankPaymentWorkflow: { behavior: 'PINNED', why: `${MINUTES} (OTP step)` },
  ussdPaymentWorkflow: { behavior: 'PINNED', why: `${MINUTES} (the payer dials within the session)` },
  checkoutWorkflow: { behavior: 'PINNED', why: `${MINUTES} (the hosted page's session)` },
  tokenChargeWorkflow: { behavior: 'PINNED', why: `${MINUTES} (one charge of a saved token)` },
  vendElectricityWorkflow: { behavior: 'PINNED', why: `${MINUTES} (one purchase and its requery)` },
  posRemoteRequestWorkflow: { behavior: 'PINNED', why: `${MINUTES} (the request's 5-minute lifetime)` },
  posTerminalTransactionWorkflow: { behavior: 'PINNED', why: `${MINUTES} (one sale and its requery)` },
  posRefundWorkflow: { behavior: 'PINNED', why: `${MINUTES} (one refund and its requery)` },
  smsSendWorkflow: { behavior: 'PINNED', why: `${MINUTES} (one batch)` },
  smsCampaignWorkflow: { behavior: 'PINNED', why: `${MINUTES} (one campaign's creation)` },
  smsCampaignFollowWorkflow: { behavior: 'PINNED', why: `${MINUTES} (follows one campaign to its report)` },
  reconciliationMarkWorkflow: { behavior: 'PINNED', why: 'records one mark and ends at once' },
  mandateWorkflow: {
    behavior: 'AUTO_UPGRADE',
    why: 'lives for the mandate (months): approval, then debits on schedule',
  },
  recurringChargeWorkflow: { behavior: 'AUTO_UPGRADE', why: 'a recurring plan: charges on a schedule for months' },
  posPreAuthWorkflow: { behavior: 'AUTO_UPGRADE', why: 'holds a pre-authorisation for its window (7 days by default)' },
  posRefundLedgerWorkflow: { behavior: 'AUTO_UPGRADE', why: "a sale's refund ledger, kept while refunds may come" },
  posTerminalLockWorkflow: { behavior: 'AUTO_UPGRADE', why: "a terminal's lock, long-lived across requests" },
  unmatchedPaymentWebhookWorkflow: { behavior: 'AUTO_UPGRADE', why: 'an inbox holding a webhook no flow owns yet' },
  virtualAccountCreditWorkflow: {
    behavior: 'AUTO_UPGRADE',
    why: 'a frozen credit waits (days) until the service releases it; a failed hand-over waits for an operator',
  },
  virtualAccountErrorLogSweepWorkflow: {
    behavior: 'AUTO_UPGRADE',
    why: 'started by a Schedule that outlives versions',
  },
  reconciliationWorkflow: { behavior: 'AUTO_UPGRADE', why: 'started by the daily Schedule that outlives versions' },
  scheduledMandateDebitWorkflow: { behavior: 'AUTO_UPGRADE', why: 'started by a Schedule that outlives versions' },
  scheduledTokenChargeWorkflow: { behavior: 'AUTO_UPGRADE', why: 'started by a Schedule that outlives versions' },
} as const satisfies Record<string, VersioningRow>;

export type VersionedWorkflowType = keyof typeof WORKFLOW_VERSIONING;

// Activities of the webhook error log sweep: one reads the service's log of credit notifications we
// did not acknowledge (each row read as a credit: its six signed values only), one deletes a row
// once its credit is durably recorded (isVirtualAccountCreditRecorded, ./virtual-account-credit.ts).
import { z } from 'zod';
import type { WebhookErrorLogRow } from '../api';
import type { ActivityDeps } from './deps';
import type { VirtualAccountCredit } from '../shared/virtual-account-credit';
import type { ErrorLogSweepSummary } from '../shared/virtual-account-error-log-sweep';

/** The six signed values an error-log row must carry to be a credit (the row is the service's own record, read with our key). */
const errorLogCreditSchema = z.object({
  transaction_reference: z.string().min(1),
  virtual_account_number: z.string().min(1),
  principal_amount: z.string().regex(/^\d+(\.\d+)?$/, 'must be a decimal string'),
  settled_amount: z.string().regex(/^\d+(\.\d+)?$/, 'must be a decimal string'),
  currency: z.string().min(1),
  customer_identifier: z.string().min(1),
  // The service's own record: a row that says it is not a credit ('C') is never credited. The
  // receiver leaves an unsigned non-'C' notification unacknowledged, so it lands here to be judged.
  transaction_indicator: z.literal('C', { error: "must be 'C' (a credit)" }).optional(),
});

/** An error-log row as a credit: the signed six values only (fee and date come from the filtered transaction search, as for v2). */
export function creditFromErrorLogRow(
  row: WebhookErrorLogRow,
  receivedAt: string,
): { credit: VirtualAccountCredit } | { problem: string } {
  const parsed = errorLogCreditSchema.safeParse({
    ...row.payload,
    transaction_reference: row.payload.transaction_reference ?? row.transaction_ref,
  });
  if (!parsed.success)
    return { problem: parsed.error.issues.map((i) => `payload.${i.path.join('.')}: ${i.message}`).join('; ') };
  const p = parsed.data;
  const meta = (row.payload.meta ?? {}) as Record<string, unknown>;
  const freezeRef =
    typeof meta.freeze_transaction_ref === 'string' && meta.freeze_transaction_ref.length > 0
      ? meta.freeze_transaction_ref
      : undefined;
  return {
    credit: {
      transactionReference: row.transaction_ref,
      virtualAccountNumber: p.virtual_account_number,
      principalAmount: p.principal_amount,
      settledAmount: p.settled_amount,
      currency: p.currency,
      customerIdentifier: p.customer_identifier,
      version: 2,
      receivedAt,
      source: 'error-log',
      ...(freezeRef
        ? {
            frozenHint: {
              freezeTransactionRef: freezeRef,
              ...(typeof meta.reason_for_frozen_transaction === 'string'
                ? { reason: meta.reason_for_frozen_transaction }
                : {}),
            },
          }
        : {}),
    },
  };
}

export function createVirtualAccountErrorLogSweepActivities({ api, logger }: ActivityDeps) {
  const log = logger.child({ flow: 'va-credit' });
  return {
    /** The service's log of credit notifications (C10) we did not acknowledge, read as credits. */
    async readWebhookErrorLog(input: {
      perPage: number;
    }): Promise<{ credits: VirtualAccountCredit[]; invalid: ErrorLogSweepSummary['invalid'] }> {
      const page = (await api.virtualAccounts.webhookErrorLog({ page: 1, perPage: input.perPage })).data;
      const receivedAt = new Date().toISOString();
      const credits: VirtualAccountCredit[] = [];
      const invalid: ErrorLogSweepSummary['invalid'] = [];
      for (const row of page.rows) {
        const read = creditFromErrorLogRow(row, receivedAt);
        if ('credit' in read) credits.push(read.credit);
        else invalid.push({ transactionRef: row.transaction_ref, problem: read.problem });
      }
      if (invalid.length > 0)
        log.warn(
          { invalid: invalid.length },
          'webhook error log: rows without the signed values of a credit were left in the log',
        );
      return { credits, invalid };
    },

    /** Deletes the error-log entry (C11) (true when the service removed one). */
    async deleteWebhookErrorLogEntry(transactionReference: string): Promise<boolean> {
      return (await api.virtualAccounts.deleteWebhookErrorLog({ transaction_ref: transactionReference })).data === 1;
    },
  };
}

export type VirtualAccountErrorLogSweepActivities = ReturnType<typeof createVirtualAccountErrorLogSweepActivities>;

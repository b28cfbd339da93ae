// The durable record of credited virtual-account transactions: the duplicate check the spec asks of
// whoever receives the virtual-account credit notification (E-2): "a transaction-reference duplicate
// check ... so that value is never given twice".
//
// One row per transaction reference (primary key). The first delivery that reaches the check
// inserts the row and is the credit; every later delivery of the same reference finds it and is a
// duplicate (counted, never credited). INSERT ... ON CONFLICT is atomic, so two deliveries at the
// same moment credit once. Rows are never deleted by the application: the window is unbounded
// (Temporal's workflow-id check only covers a closed credit workflow for the namespace's retention).
//
// The row remembers the workflow run that credited, so a retried activity of that run (its first
// attempt committed, then the worker died before reporting) is still that run's credit, not a duplicate.
//
// It lives in the claim-check's PostgreSQL (CLAIM_CHECK_DATABASE_URL): already durable, already
// run by `npm start` (embedded) and compose; a table of its own, created idempotently on connect.
import type pg from 'pg';
import { connectPostgresStore, type PostgresStoreOptions } from '../claim-check/postgres';
import type {
  CreditFieldsSource,
  CreditedVirtualAccountTransaction,
  VirtualAccountCredit,
} from '../shared/virtual-account-credit';

const TABLE = 'va_credit_records';
const SCHEMA = {
  lock: 0x76616372, // advisory lock id: several processes may migrate at once
  statements: [
    // Amounts are the service's decimal strings, stored as text: exact, never floats.
    `CREATE TABLE IF NOT EXISTS ${TABLE} (
      transaction_reference text PRIMARY KEY,
      virtual_account_number text NOT NULL,
      principal_amount text NOT NULL,
      settled_amount text NOT NULL,
      currency text NOT NULL,
      customer_identifier text NOT NULL,
      fee_charged text,
      transaction_date text,
      fields_source text NOT NULL,
      version smallint NOT NULL,
      credited_by_run text NOT NULL,
      credited_at timestamptz NOT NULL DEFAULT now(),
      delivery_runs text[] NOT NULL,
      deliveries integer NOT NULL DEFAULT 1,
      last_delivery_at timestamptz NOT NULL DEFAULT now()
    )`,
  ],
};

export interface ClaimResult {
  /** True when this workflow run owns the credit (it inserted the row, now or in an earlier attempt). */
  credited: boolean;
  record: CreditedVirtualAccountTransaction;
  deliveries: number;
  /** The delivery's signed values differ from the recorded credit's (same reference): logged, never credited. */
  conflicting: boolean;
}

interface Row {
  transaction_reference: string;
  virtual_account_number: string;
  principal_amount: string;
  settled_amount: string;
  currency: string;
  customer_identifier: string;
  fee_charged: string | null;
  transaction_date: string | null;
  fields_source: CreditFieldsSource;
  version: number;
  credited_by_run: string;
  credited_at: Date;
  deliveries: number;
}

function toRecord(r: Row): CreditedVirtualAccountTransaction {
  return {
    transactionReference: r.transaction_reference,
    virtualAccountNumber: r.virtual_account_number,
    principalAmount: r.principal_amount,
    settledAmount: r.settled_amount,
    currency: r.currency,
    customerIdentifier: r.customer_identifier,
    ...(r.fee_charged !== null ? { feeCharged: r.fee_charged } : {}),
    ...(r.transaction_date !== null ? { transactionDate: r.transaction_date } : {}),
    fieldsSource: r.fields_source,
    version: r.version as 1 | 2 | 3,
    creditedAt: r.credited_at.toISOString(),
  };
}

const SIGNED = ['virtualAccountNumber', 'principalAmount', 'settledAmount', 'currency', 'customerIdentifier'] as const;

export class VirtualAccountCreditStore {
  private constructor(private readonly pool: pg.Pool) {}

  /** Connects and creates the table if needed. */
  static connect(opts: PostgresStoreOptions): Promise<VirtualAccountCreditStore> {
    return connectPostgresStore(opts, SCHEMA, (pool) => new VirtualAccountCreditStore(pool));
  }

  /**
   * The duplicate check and the credit in one statement. `runId` identifies the delivery (the
   * credit workflow's run): the same run asking again is not a new delivery.
   */
  async claim(credit: VirtualAccountCredit, runId: string): Promise<ClaimResult> {
    const fieldsSource: CreditFieldsSource = credit.version === 1 ? 'signed-body' : 'unconfirmed';
    const { rows } = await this.pool.query<Row>(
      `INSERT INTO ${TABLE} AS t (transaction_reference, virtual_account_number, principal_amount, settled_amount, currency, customer_identifier,
         fee_charged, transaction_date, fields_source, version, credited_by_run, delivery_runs)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, ARRAY[$11])
       ON CONFLICT (transaction_reference) DO UPDATE SET
         delivery_runs = CASE WHEN $11 = ANY (t.delivery_runs) THEN t.delivery_runs ELSE t.delivery_runs || $11 END,
         deliveries = CASE WHEN $11 = ANY (t.delivery_runs) THEN t.deliveries ELSE t.deliveries + 1 END,
         last_delivery_at = now()
       RETURNING t.*`,
      [
        credit.transactionReference,
        credit.virtualAccountNumber,
        credit.principalAmount,
        credit.settledAmount,
        credit.currency,
        credit.customerIdentifier,
        credit.version === 1 ? (credit.feeCharged ?? null) : null,
        credit.version === 1 ? (credit.transactionDate ?? null) : null,
        fieldsSource,
        credit.version,
        runId,
      ],
    );
    const row = rows[0];
    const record = toRecord(row);
    return {
      credited: row.credited_by_run === runId,
      record,
      deliveries: row.deliveries,
      conflicting: SIGNED.some((k) => record[k] !== credit[k]),
    };
  }

  /** Records the fields the service's own query confirmed, on the credit `runId` owns. */
  async confirm(
    transactionReference: string,
    runId: string,
    fields: { feeCharged?: string; transactionDate?: string },
  ): Promise<CreditedVirtualAccountTransaction | undefined> {
    const { rows } = await this.pool.query<Row>(
      `UPDATE ${TABLE} SET fee_charged = $3, transaction_date = $4, fields_source = 'service-query'
       WHERE transaction_reference = $1 AND credited_by_run = $2 RETURNING *`,
      [transactionReference, runId, fields.feeCharged ?? null, fields.transactionDate ?? null],
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /** The recorded credit and its delivery count (operators, tests). */
  async get(
    transactionReference: string,
  ): Promise<{ record: CreditedVirtualAccountTransaction; deliveries: number } | undefined> {
    const { rows } = await this.pool.query<Row>(`SELECT * FROM ${TABLE} WHERE transaction_reference = $1`, [
      transactionReference,
    ]);
    return rows[0] ? { record: toRecord(rows[0]), deliveries: rows[0].deliveries } : undefined;
  }

  /** How many rows hold this reference (0 or 1; for tests). */
  async countRecords(transactionReference: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${TABLE} WHERE transaction_reference = $1`,
      [transactionReference],
    );
    return Number(rows[0].n);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

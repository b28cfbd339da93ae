// Scripted terminal activities (F3 send, F4 requery) for the refund and pre-authorisation workflow
// tests: each merchant_ref has its own script of F3 answers and F4 answers, every call is recorded
// in order, and leftovers show a flow that stopped earlier than the test expected.
import { ApplicationFailure } from '@temporalio/activity';
import type { PosTerminalActivities } from '../../src/activities/pos-terminal';
import type { PosLinkedInitiateRequest, PosRequeryOutcome, PosTransactionRecord } from '../../src/shared/pos-terminal';
import { SECRET_UNAVAILABLE } from '../../src/shared/claim-check';
import type { CallRecord } from './helpers';

export type F3Answer = { code: string } | { fail: string };
export type F4Answer =
  | {
      code: string;
      type?: string;
      amount?: number;
      pan?: string;
      currency?: string;
      /** Fields of the record set last (undefined ones removed): a record the defaults cannot give. */
      record?: Partial<PosTransactionRecord>;
    }
  | 'not_found'
  | { fail: string };

export const MASKED = '539983******0008';

export function record(ref: string, code: string, over: Partial<PosTransactionRecord> = {}): PosTransactionRecord {
  return {
    status: code === '00' ? 'success' : 'failed',
    response_code: code,
    amount: 150000,
    currency: 'NGN',
    merchant_ref: ref,
    card_pan_masked: MASKED,
    ...over,
  };
}

export class TerminalScript {
  readonly f3 = new Map<string, F3Answer[]>();
  readonly f4 = new Map<string, F4Answer[]>();
  readonly calls: CallRecord[] = [];
  readonly sent: PosLinkedInitiateRequest[] = [];
  readonly discarded: string[] = [];

  on(ref: string, f3: F3Answer[], f4: F4Answer[] = []): this {
    this.f3.set(ref, [...(this.f3.get(ref) ?? []), ...f3]);
    this.f4.set(ref, [...(this.f4.get(ref) ?? []), ...f4]);
    return this;
  }

  /** Script entries not used (empty when the flow did exactly what the test expected). */
  leftovers(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [ref, l] of [...this.f3, ...this.f4]) if (l.length) out[ref] = (out[ref] ?? 0) + l.length;
    return out;
  }

  activities(): Pick<
    PosTerminalActivities,
    'posTerminalInitiateTransaction' | 'posTerminalRequeryTransaction' | 'posDiscardSealedCard'
  > {
    return {
      posTerminalInitiateTransaction: async (req) => {
        const r = req as PosLinkedInitiateRequest;
        const s = this.f3.get(r.merchant_ref)?.shift();
        if (!s) throw new Error(`unscripted F3 for ${r.merchant_ref}`);
        if ('fail' in s && s.fail === SECRET_UNAVAILABLE)
          throw ApplicationFailure.create({
            type: SECRET_UNAVAILABLE,
            message: 'the sealed pos-card is no longer available',
            nonRetryable: true,
          });
        this.calls.push({ op: 'initiate', merchantRef: r.merchant_ref });
        this.sent.push(r);
        if ('fail' in s)
          throw ApplicationFailure.create({ type: s.fail, message: `scripted ${s.fail}`, nonRetryable: true });
        return {
          transaction: record(r.merchant_ref, s.code, {
            amount: Number(r.amount),
            transaction_type: r.transaction_type,
          }),
        };
      },
      posTerminalRequeryTransaction: async (req): Promise<PosRequeryOutcome> => {
        const s = this.f4.get(req.merchant_ref)?.shift();
        if (!s) throw new Error(`unscripted F4 for ${req.merchant_ref}`);
        if (s === 'not_found') {
          this.calls.push({ op: 'requery', merchantRef: req.merchant_ref, answer: 'not_found' });
          return { found: false };
        }
        if ('fail' in s) {
          this.calls.push({ op: 'requery', merchantRef: req.merchant_ref, answer: 'error' });
          throw ApplicationFailure.create({ type: s.fail, message: `scripted ${s.fail}`, nonRetryable: true });
        }
        this.calls.push({ op: 'requery', merchantRef: req.merchant_ref, answer: 'found' });
        return {
          found: true,
          transaction: record(req.merchant_ref, s.code, {
            ...(s.amount !== undefined ? { amount: s.amount } : {}),
            ...(s.type ? { transaction_type: s.type } : {}),
            ...(s.pan ? { card_pan_masked: s.pan } : {}),
            ...(s.currency ? { currency: s.currency } : {}),
            ...s.record,
          }),
        };
      },
      posDiscardSealedCard: async (handle) => {
        this.discarded.push(handle);
      },
    };
  }

  /** The calls for one merchant_ref, as "op:answer" strings. */
  opsOf(ref: string): string[] {
    return this.calls
      .filter((c) => c.merchantRef === ref)
      .map((c) => (c.op === 'requery' ? `requery:${c.answer}` : 'initiate'));
  }
}

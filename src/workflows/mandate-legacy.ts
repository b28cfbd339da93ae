// REPLAY ONLY. The mandate flow's D1 and D3 steps as they were before the patch
// 'mandate-money-safety' (src/workflows/mandate.ts): D1 looked up by D5 merchant_ref, D3 settled
// by D5's total_debited, an unknown debit blocking new ones. Runs started after the patch never
// take this code: they send through send-once (./send-once.ts). It stays, unchanged in its
// commands, only so that runs started before the patch (and the recorded histories in
// test/replay/histories) replay. Remove it (and the patch check) once no such run is open.
import { proxyActivities, log } from '@temporalio/workflow';
import type { createMandateActivities, MandateSnapshot } from '../activities/mandates';
import {
  MANDATE_DEBITS_KEPT,
  debitReference,
  type MandateDebit,
  type MandateInput,
  type MandateState,
} from '../shared/mandate';
import { SECRET_UNAVAILABLE } from '../shared/claim-check';
import { failureOf } from '../shared/failures';

type Activities = ReturnType<typeof createMandateActivities>;

const reads = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '1s' },
});
const once = proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 1 } });

const UNCLEAR = ['OutcomeUnknown', 'Transient'];
const messageOf = (err: unknown): string =>
  failureOf(err)?.message ?? (err instanceof Error ? err.message : String(err));

export interface LegacyContext {
  input: MandateInput;
  state: MandateState;
  nextSequence(): number;
  countDebit(): void;
  fail(message: string): void;
  setStatus(status: MandateState['status'], endReason?: string): void;
  setSession(mandateId: string, sessionToken: string): void;
  releaseAtService(why: string): Promise<void>;
  endIfEndedAtService(): Promise<void>;
}

export function legacyMandateSteps(ctx: LegacyContext) {
  const { input, state, fail } = ctx;

  async function readMandate(): Promise<MandateSnapshot | undefined> {
    try {
      return await reads.getMandate(state.mandateId!);
    } catch (err) {
      log.warn('D5 read failed', { error: messageOf(err) });
      return undefined;
    }
  }

  function record(entry: MandateDebit): void {
    if (entry.status === 'success') {
      state.balance -= entry.amount;
      state.totalDebited += entry.amount;
    } else if (entry.status === 'unknown') {
      state.unresolvedDebits = [...state.unresolvedDebits, entry];
      fail(
        `${entry.reference}: outcome unknown (${entry.error ?? 'no answer'}); settled through D5 before the next debit`,
      );
    } else fail(`${entry.reference}: ${entry.error ?? 'refused'}`);
    state.recentDebits = [...state.recentDebits.filter((d) => d.reference !== entry.reference), entry].slice(
      -MANDATE_DEBITS_KEPT,
    );
  }

  async function settle(
    entry: MandateDebit,
    req: Parameters<Activities['debitMandate']>[0],
    mayResend: boolean,
  ): Promise<void> {
    const seen = await readMandate();
    const landed = seen ? seen.totalDebited - state.totalDebited : undefined;
    if (landed === entry.amount) {
      entry.status = 'success';
      entry.confirmedBy = 'requery';
      entry.error = undefined;
      return;
    }
    if (landed === 0 && mayResend) {
      try {
        await once.debitMandate(req);
        entry.status = 'success';
        entry.confirmedBy = 'resend';
        entry.error = undefined;
      } catch (err) {
        const type = failureOf(err)?.type;
        entry.error = messageOf(err);
        if (type === 'DuplicateReference') return settle(entry, req, false);
        if (!UNCLEAR.includes(type ?? '')) entry.status = 'failed';
      }
      return;
    }
    entry.error =
      landed === undefined
        ? `${entry.error ?? 'no answer'}; D5 could not be read`
        : landed === 0
          ? `${entry.error ?? 'no answer'}; D5 shows no change`
          : `${entry.error ?? 'no answer'}; D5 shows ${landed} kobo debited beyond what this flow confirmed`;
  }

  return {
    async debit(
      amount: number,
      narration: string,
      kind: MandateDebit['kind'],
      scheduledFor?: string,
    ): Promise<MandateDebit> {
      const sequence = ctx.nextSequence();
      const reference = debitReference(input.mandateRef, sequence);
      const entry: MandateDebit = {
        sequence,
        reference,
        amount,
        status: 'unknown',
        kind,
        at: new Date().toISOString(),
        ...(scheduledFor ? { scheduledFor } : {}),
      };
      const req = { mandateId: state.mandateId!, amount, reference, narration, customerEmail: input.customerEmail };
      ctx.countDebit();
      try {
        await once.debitMandate(req);
        entry.status = 'success';
        entry.confirmedBy = 'response';
      } catch (err) {
        const type = failureOf(err)?.type;
        entry.error = messageOf(err);
        if (type === 'DuplicateReference' || UNCLEAR.includes(type ?? ''))
          await settle(entry, req, type !== 'DuplicateReference');
        else entry.status = 'failed';
      }
      record(entry);
      if (entry.status === 'failed' && /not ready/i.test(entry.error ?? '')) await ctx.endIfEndedAtService();
      return entry;
    },

    async settleUnresolved(): Promise<boolean> {
      if (state.unresolvedDebits.length === 0) return true;
      const seen = await readMandate();
      if (!seen) return false;
      const pending = state.unresolvedDebits.reduce((sum, d) => sum + d.amount, 0);
      const landed = seen.totalDebited - state.totalDebited;
      if (landed !== pending && landed !== 0) return false;
      for (const d of state.unresolvedDebits) {
        const settled: MandateDebit =
          landed === 0
            ? {
                ...d,
                status: 'failed',
                confirmedBy: 'requery',
                error: `${d.error ?? ''}; not applied (D5 shows no change)`,
              }
            : { ...d, status: 'success', confirmedBy: 'requery', error: undefined };
        if (settled.status === 'success') {
          state.balance -= d.amount;
          state.totalDebited += d.amount;
        }
        fail(`${d.reference}: settled as ${settled.status} through D5`);
        state.recentDebits = state.recentDebits.map((r) => (r.reference === d.reference ? settled : r));
      }
      state.unresolvedDebits = [];
      return true;
    },

    async create(): Promise<boolean> {
      for (let attempt = 1; ; attempt++) {
        try {
          const created = await once.createMandate(input);
          ctx.setSession(created.mandateId, created.sessionToken);
          return true;
        } catch (err) {
          const type = failureOf(err)?.type;
          if (type === SECRET_UNAVAILABLE) {
            ctx.setStatus(
              'failed',
              'the sealed BVN expired before the mandate was created (nothing was sent to the service): start the mandate again with the BVN',
            );
            return false;
          }
          if (!UNCLEAR.includes(type ?? '')) {
            ctx.setStatus('failed', messageOf(err));
            return false;
          }
          let found: MandateSnapshot | undefined;
          try {
            found = await reads.findMandateByRef(input.mandateRef);
          } catch (lookupErr) {
            ctx.setStatus(
              'failed',
              `D1 went unanswered and the lookup failed (${messageOf(lookupErr)}); check merchant_ref ${input.mandateRef} before starting again`,
            );
            return false;
          }
          if (found) {
            state.mandateId = found.mandateId;
            await ctx.releaseAtService('a lost D1 response');
            ctx.setStatus(
              'failed',
              'the creation response was lost; the mandate it created was cancelled at the service; start a new mandate',
            );
            return false;
          }
          if (attempt >= 2) {
            ctx.setStatus('failed', `D1 went unanswered twice and no mandate exists for ${input.mandateRef}`);
            return false;
          }
        }
      }
    },
  };
}

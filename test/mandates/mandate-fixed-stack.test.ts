// A FIXED mandate on the local stack as `npm start` runs it (dev server, the project's worker, the
// sandbox over HTTP): the sandbox debits the date it reached (today's, at approval), and the flow's
// first D5 read records it `success` with no D3 of its own, told as mandate.debit.succeeded. Later
// dates lie on later days of real time: mandate-fixed-sandbox.test.ts takes a mandate through three.
import { newNotifySecret } from '../../src/notify';
import { MANDATE_OTP } from '../../src/sandbox';
import { cancelMandate, getMandateState, startMandate, submitMandateOtp } from '../../src/starters/mandate';
import { useEventReceiver } from '../notify/receiver';
import { newMandateRequest } from '../support/flow-inputs';
import { eventually } from '../support/polling';
import { testConfig, useServices } from '../support/stack';

const secret = newNotifySecret();
const stack = useServices(testConfig({ NOTIFY_SECRET: secret }));
const listener = useEventReceiver(secret);

it("today's date of a FIXED mandate: debited by the sandbox, observed by the flow (no D3), told to the merchant", async () => {
  const today = new Date().toISOString().slice(0, 10);
  const i = newMandateRequest({
    debitType: 'fixed',
    amount: 300_000,
    fixed: { frequency: 'MONTHLY', interval: 1, initialDebitAmount: 100_000, initialDebitDate: today },
    observeReadsMs: [0], // today's read is due at once (the default, 6 h into the day, may not be yet)
    notify: { url: listener.url },
  });
  const ctx = stack.services.starters;
  const handle = await startMandate(ctx, i);
  await eventually(
    () => getMandateState(ctx, i.mandateRef),
    (s) => s.status === 'awaiting_otp',
    { timeoutMs: 30_000, description: 'awaiting the OTP', ignoreErrors: true },
  );
  await submitMandateOtp(ctx, i.mandateRef, MANDATE_OTP);
  const seen = await eventually(
    () => getMandateState(ctx, i.mandateRef),
    (s) => s.recentDebits.length > 0,
    { timeoutMs: 30_000, description: "today's date observed" },
  );
  expect(seen).toMatchObject({ totalDebited: 100_000, balance: 200_000, debitCount: 0 });
  expect(seen.recentDebits.map((d) => [d.reference, d.kind, d.status, d.amount, d.scheduledFor])).toEqual([
    [`${i.mandateRef}-F1`, 'observed', 'success', 100_000, today],
  ]);
  const log = await stack.admin.requests();
  expect(log.filter((r) => r.path === '/transaction/mandate/debit')).toEqual([]);
  const events = await listener.delivered(i.mandateRef, 2);
  expect(events.map((e) => [e.type, e.data.part, e.data.amount])).toEqual([
    ['mandate.approved', undefined, undefined],
    ['mandate.debit.succeeded', `${i.mandateRef}-F1`, 100_000],
  ]);
  await cancelMandate(ctx, i.mandateRef);
  expect((await handle.result()).status).toBe('cancelled');
  expect(listener.refused).toEqual([]);
}, 90_000);

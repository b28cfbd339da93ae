// `pay cancel-token` as a user runs it against a running stack (issue #44 §2): a token saved by a
// plan's first payment and moved to a Schedule (the plan no longer cancels it) is cancelled with
// A5 (exit 0); asked again, the service refuses (any 400: exit 2 with its message); A5 answering
// 5xx past --retry-for-ms is unknown (exit 3, "check the token by hand").
import { randomUUID } from 'node:crypto';
import { moveRecurringToScheduleSignal, recurringWorkflowId } from '../../src/shared/recurring';
import { firstPaymentCheckoutUrl, getRecurringState, startRecurring } from '../../src/starters/recurring';
import { waitForState } from '../../src/starters/payment-common';
import { cliAgainst } from '../support/cli';
import { payCheckoutByCard } from '../support/sandbox-admin';
import { testConfig, useServices } from '../support/stack';

const config = testConfig();
const stack = useServices(config);
const { cli } = cliAgainst(config, stack);
afterEach(() => stack.admin?.clearFaults());

/** A token the sandbox saved for a plan's first payment; the plan then moved to a Schedule (token kept live). */
async function savedToken(): Promise<string> {
  const ctx = stack.services.starters;
  const planRef = `cli-tok-${randomUUID().slice(0, 8)}`;
  const handle = await startRecurring(ctx, {
    planRef,
    amount: 150_000,
    currency: 'NGN',
    email: 'ada@example.com',
    intervalMs: 24 * 3600_000,
  });
  await payCheckoutByCard(await firstPaymentCheckoutUrl(ctx, planRef));
  const active = await waitForState(
    () => getRecurringState(ctx, planRef),
    (s) => s.status === 'active',
    { timeoutMs: 30_000 },
  );
  await ctx.client.workflow.getHandle(recurringWorkflowId(planRef)).signal(moveRecurringToScheduleSignal);
  expect(await handle.result()).toMatchObject({ status: 'completed' });
  return active.tokenId!;
}

it('cancels a saved token (exit 0); asked again the service refuses (exit 2, its message); 5xx past the retry window is unknown (exit 3)', async () => {
  const token = await savedToken();
  const cancelled = await cli(['pay', 'cancel-token', '--token', token]);
  expect(cancelled).toMatchObject({ code: 0, stdout: expect.stringContaining(`[token ${token}] cancelled (A5)`) });

  const refused = await cli(['pay', 'cancel-token', '--token', token]);
  expect(refused.code).toBe(2);
  expect(refused.stdout).toContain(`[token ${token}] refused: Recurring Payment was not cancelled`);

  await stack.admin!.fault({ path: '/transaction/cancel/recurring', kind: 'error5xx', status: 503 });
  const unknown = await cli(['pay', 'cancel-token', '--token', token, '--retry-for-ms', '1500']);
  expect(unknown.code).toBe(3);
  expect(unknown.stdout).toContain(`[token ${token}] unknown: check the token by hand`);
  expect(unknown.stdout).toContain('Service temporarily unavailable'); // the sandbox's 503
  expect((await cli(['pay', 'cancel-token', '--token', 'not a token'])).code).toBe(2);
}, 120_000);

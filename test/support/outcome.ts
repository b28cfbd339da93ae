// An operator resolving a parked outcome by hand (`resolveOutcomeUpdate`), as the suites of the
// flows that park one (vend, POS sale) play it.
import type { WorkflowHandle } from '@temporalio/client';
import { resolveOutcomeUpdate, type ResolveOutcomeInput } from '../../src/shared/outcome';

/** The reason an Update was refused (the validator's message), or 'accepted'. */
const refusedBecause = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'accepted',
    (e: { cause?: Error; message: string }) => e.cause?.message ?? e.message,
  );

/** Sends `resolution` to the parked flow; the recorded resolution. */
export const resolveOutcome = (handle: WorkflowHandle, resolution: ResolveOutcomeInput) =>
  handle.executeUpdate(resolveOutcomeUpdate, { args: [resolution] });

/** Why the flow refused `resolution` (or 'accepted'). */
export const refusedResolution = (handle: WorkflowHandle, resolution: ResolveOutcomeInput) =>
  refusedBecause(resolveOutcome(handle, resolution));

/**
 * Each resolution of `refused` is refused with a reason matching its pattern, in turn; then
 * `resolution` is accepted and the flow records it as given (outcome, operator, reason).
 */
export async function expectResolution(
  handle: WorkflowHandle,
  refused: [ResolveOutcomeInput, RegExp][],
  resolution: ResolveOutcomeInput,
): Promise<void> {
  for (const [wrong, reason] of refused) expect(await refusedResolution(handle, wrong)).toMatch(reason);
  expect(await resolveOutcome(handle, resolution)).toMatchObject(resolution);
}

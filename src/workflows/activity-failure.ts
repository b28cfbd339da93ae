// An activity's failure reaches workflow code as an ActivityFailure whose cause is the
// ApplicationFailure the activity threw (with its deliberate `type`); this unwraps it.
import { ApplicationFailure } from '@temporalio/workflow';

export function failureOf(err: unknown): ApplicationFailure | undefined {
  return err instanceof Error && 'cause' in err && err.cause instanceof ApplicationFailure ? err.cause : undefined;
}

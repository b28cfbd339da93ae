// The calls the spec gives the test environment only, simulating a transfer (A2) and a credit
// (C9): the CLI refuses them in production mode (DEPLOYMENT, NODE_ENV or PAYMENTS_ENVIRONMENT
// says production), with exit 2, before anything is sent; and what they send, checked by the
// API client first, is the caller's input (exit 2) when refused.
import { RequestValidationError } from '../../api/errors';
import { productionModeOf } from '../../shared/production-mode';
import { StarterInputError } from '../../shared/input-error';
import { runEnv } from './context';

/** Throws (exit 2) when the run is configured for production. */
export function testEnvironmentOnly(command: string): void {
  if (productionModeOf(runEnv()))
    throw new StarterInputError(command, [
      { field: 'PAYMENTS_ENVIRONMENT', rule: 'is production: this call exists in the test environment only' },
    ]);
}

/** A payments API call whose request the client refuses before sending it is bad input (exit 2), naming its fields. */
export async function sentAsInput<T>(command: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof RequestValidationError)
      throw new StarterInputError(
        command,
        err.issues.map((i) => ({ field: i.path || '(input)', rule: i.message })),
      );
    throw err;
  }
}

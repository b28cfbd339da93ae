// The steps activities repeat around a call to the payments service: the request id of an attempt,
// a read whose failure Temporal's retry policy handles, and a money-moving call made once with its
// answer or its loss logged. The failure types themselves are chosen in ./failures.ts only.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import { isDocumentedNotFound, NotFoundError, PaymentsApiError } from '../api';
import { FailureTypes } from '../shared/failures';
import { heartbeatWhile } from './heartbeat';
import { toActivityFailure } from './failures';

/** `<activityId>-<attempt><suffix>`: the request id of this attempt, so the service's logs tell attempts apart. */
export function attemptRequestId(suffix = ''): string {
  const { activityId, attempt } = Context.current().info;
  return `${activityId}-${attempt}${suffix}`;
}

/** What every direct payment request (card, bank debit, USSD) carries from its flow's input. */
export function directPayment<C extends string>(input: {
  transactionRef: string;
  amount: number;
  currency: C;
  passCharge?: boolean;
  customer: { name: string; email: string };
}) {
  const { transactionRef, amount, currency, passCharge, customer } = input;
  const payer = { name: customer.name, email: customer.email };
  return { transaction_reference: transactionRef, amount, currency, pass_charge: passCharge, customer: payer };
}

/** How a read's failure may still be an answer. */
export interface ReadAbsence<A> {
  /** The lookup whose documented "not found" (src/api/not-found.ts) answers `answer`, not a failure. */
  notFound: Parameters<typeof isDocumentedNotFound>[0];
  answer: A;
  /** The documented absence's words: any other 404 is the service's error, never absence. */
  otherNotFound?: string;
}

/**
 * A read at the service. Its failure is typed for the activity's retry policy (never money-moving);
 * with `absence`, the documented not-found answers `absence.answer`.
 */
export async function read<T, A = never>(
  what: string,
  call: () => Promise<T>,
  absence?: ReadAbsence<A>,
): Promise<T | A> {
  try {
    return await call();
  } catch (err) {
    if (absence && isDocumentedNotFound(absence.notFound, err)) return absence.answer;
    if (absence?.otherNotFound && err instanceof NotFoundError)
      throw ApplicationFailure.nonRetryable(`${absence.otherNotFound}: ${err.message}`, FailureTypes.ServiceError);
    throw toActivityFailure(err, { moneyMoving: false, what });
  }
}

/**
 * A payment call that moves money, once (scheduled with one attempt). Every failure is typed
 * (toActivityFailure): a refusal proves nothing happened; anything else is an unknown outcome the
 * workflow settles by verifying the reference first (./transaction-lookup.ts), never by sending again.
 */
export async function moneyCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toActivityFailure(err, { moneyMoving: true, what });
  }
}

/** What a money-moving call logs: where it was made (never a request body), and `<call> answered` or `<call> without an answer`. */
export interface SendOnce {
  log: Logger;
  what: string;
  where: Record<string, unknown>;
  call: string;
}

/**
 * A money-moving call, once (the activity is scheduled with one attempt), heartbeating while it is
 * open. Every failure is non-retryable with a deliberate type: the workflow settles a lost answer by
 * asking the service first, never by sending again.
 */
export async function sendOnce<T>(c: SendOnce, send: () => Promise<T>, logged: (answer: T) => object): Promise<T> {
  const where = { workflowId: Context.current().info.workflowExecution?.workflowId, ...c.where };
  try {
    const answer = await heartbeatWhile(send);
    c.log.info({ ...where, ...logged(answer) }, `${c.call} answered`);
    return answer;
  } catch (err) {
    const failure = toActivityFailure(err, { moneyMoving: true, what: c.what });
    const status = err instanceof PaymentsApiError ? { status: err.status } : {};
    c.log.warn({ ...where, type: failure.type, ...status }, `${c.call} without an answer`);
    throw failure;
  }
}

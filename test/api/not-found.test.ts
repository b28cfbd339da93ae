// The one home of "the service does not know this reference" (src/api/not-found.ts): each
// lookup's documented answer is absence; the look-alikes (a wrong route, the terminal, a proxy
// page with no envelope, a 5xx, another 400) are not.
import {
  BadRequestError,
  DOCUMENTED_NOT_FOUND,
  isDocumentedNotFound,
  NotFoundError,
  ServerError,
  type PaymentsApiErrorInit,
  type ReferenceLookup,
} from '../../src/api';

const init = (status: number, serviceMessage: string): PaymentsApiErrorInit => ({
  message: serviceMessage || `HTTP ${status}`,
  operation: 'x',
  status,
  serviceMessage,
  retrySafe: false,
  outcomeUnknown: false,
  requestSent: true,
});
const notFound = (message: string) => new NotFoundError(init(404, message));
const badRequest = (message: string) => new BadRequestError(init(400, message));

const documented: [ReferenceLookup, Error][] = [
  ['verifyTransaction', badRequest('Transaction R1 not found')],
  ['posTerminalRequery', notFound('Transaction not found')],
  ['posRemoteRequery', notFound('Request not found or expired')],
  ['mandateByReference', badRequest('No mandate found for reference M-1')],
  ['mandateByReference', notFound('No mandate found for reference M-1')],
  ['vendingByReference', notFound('Transaction not found')],
  // With the reference between the words.
  ['posTerminalRequery', notFound('Transaction TX-77 was never received')],
  ['vendingByReference', notFound('Transaction VND-1 not found')],
];

it.each(documented)('%s: the documented not-found is absence', (lookup, err) => {
  expect(isDocumentedNotFound(lookup, err)).toBe(true);
});

const lookalikes: [ReferenceLookup, Error, string][] = [
  ['verifyTransaction', badRequest('transaction_ref is required'), 'another 400'],
  ['verifyTransaction', notFound('Transaction R1 not found'), 'a 404 where the service answers 400'],
  ['verifyTransaction', badRequest(''), 'a 400 without an envelope message (a proxy page)'],
  ['posTerminalRequery', notFound('Terminal not found'), 'the terminal, not the transaction'],
  ['posTerminalRequery', notFound('Terminal T-1 for transaction TX-77 not found'), 'the terminal, named first'],
  ['posTerminalRequery', notFound('Route not found'), 'a wrong route'],
  ['posTerminalRequery', notFound(''), 'a 404 page with no envelope'],
  ['posRemoteRequery', new NotFoundError({ ...init(404, ''), serviceMessage: undefined }), 'a 404 with no body at all'],
  ['posTerminalRequery', new ServerError(init(503, 'Transaction not found')), 'a 5xx'],
  ['posRemoteRequery', notFound('Route not found'), 'a wrong route'],
  ['posRemoteRequery', notFound('Payment request not found or expired'), 'another request'],
  ['posRemoteRequery', notFound('Request not found or expired: terminal offline'), 'more than the documented message'],
  ['mandateByReference', notFound('Debit refused: no mandate found for reference M-1'), 'not the message itself'],
  ['mandateByReference', notFound('Not Found'), 'a bare 404'],
  ['vendingByReference', notFound('Cannot GET /vending/transaction'), 'a wrong route'],
];

it.each(lookalikes)('%s: %p (%s) is not absence', (lookup, err) => {
  expect(isDocumentedNotFound(lookup, err)).toBe(false);
});

it('a non-client error is never absence, and every lookup names its source', () => {
  expect(isDocumentedNotFound('posTerminalRequery', new Error('Transaction not found'))).toBe(false);
  for (const rule of Object.values(DOCUMENTED_NOT_FOUND)) expect(rule.source.length).toBeGreaterThan(10);
});

it("each lookup's source names the section of the service's contract it comes from", () => {
  const sections: Record<ReferenceLookup, RegExp> = {
    verifyTransaction: /^verify: 400\b.*public facts/,
    posTerminalRequery: /^POS terminal requery \(F4\): 404\b/,
    posRemoteRequery: /^POS remote requery \(E2\): 404 'Request not found or expired'/,
    mandateByReference: /^mandate lookup \(D5\): 'No mandate found for reference/,
    vendingByReference: /^vend by reference \(H4\): 404\b/,
  };
  for (const [lookup, section] of Object.entries(sections))
    expect(DOCUMENTED_NOT_FOUND[lookup as ReferenceLookup].source).toMatch(section);
});

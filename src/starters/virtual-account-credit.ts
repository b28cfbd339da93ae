// Virtual accounts for backends: account creation (C1/C2) — a request that breaks a field rule is a
// StarterInputError (nothing sent), the service's refusals a VirtualAccountCreationError named by field —
// and the credit workflows' state and operator retry. The error-log sweep on demand:
// ./virtual-account-error-log-sweep.ts.
//
// Creating an account is one call with nothing to settle later (no money moves, and the service
// answers at once), so it is a direct, validated API call rather than a workflow: a BVN then
// never enters Temporal, and a caller who lost the answer asks for the account by its customer_identifier (C7).
import type { WorkflowHandle } from '@temporalio/client';
import {
  BadRequestError,
  DependencyFailedError,
  PaymentsApiError,
  RequestValidationError,
  type CreateBusinessAccountRequest,
  type CreateCustomerAccountRequest,
  type VirtualAccount,
} from '../api';
import {
  retryCreditHandoffUpdate,
  virtualAccountCreditStateQuery,
  virtualAccountCreditWorkflowId,
  type VirtualAccountCreditState,
} from '../shared/virtual-account-credit';
import type { StarterContext } from './connect';
import { retryTransient } from './temporal-retry';
import { StarterInputError } from '../shared/input-error';

/** The service refused to create the account; `field` names the input at fault when it can be told. (A request that breaks a field rule never reaches it: StarterInputError.) */
export class VirtualAccountCreationError extends Error {
  override readonly name = 'VirtualAccountCreationError';
  constructor(
    readonly issues: { field: string; rule: string }[],
    readonly status?: number,
  ) {
    super(`the virtual account was not created: ${issues.map((i) => `${i.field}: ${i.rule}`).join('; ')}`);
  }
}

/** Which field a refusal message is about (the spec's messages for creating accounts: BVN validation, the beneficiary account, `<field> is required`). */
function fieldOf(message: string): string {
  const required = /^"?`?([a-z_]+)`?"? is (?:required|not allowed)/i.exec(message);
  if (required) return required[1]!.toLowerCase();
  if (/customer identifier/i.test(message)) return 'customer_identifier';
  if (/bvn/i.test(message)) return 'bvn';
  if (/account number|beneficiary/i.test(message)) return 'beneficiary_account';
  if (/already exists/i.test(message)) return 'customer_identifier';
  return '(request)';
}

async function create(
  kind: 'customer' | 'business',
  call: () => Promise<{ data: VirtualAccount }>,
): Promise<VirtualAccount> {
  try {
    return (await call()).data;
  } catch (err) {
    if (err instanceof RequestValidationError)
      throw new StarterInputError(
        `${kind} virtual account`,
        err.issues.map((i) => ({ field: i.path || '(input)', rule: i.message })),
      );
    if (err instanceof BadRequestError || err instanceof DependencyFailedError) {
      // The BVN is checked against name, date of birth, gender and phone: a mismatch names the BVN.
      throw new VirtualAccountCreationError(
        [
          {
            field: fieldOf(err.message),
            rule: err.message || `the service refused the ${kind} account (HTTP ${err.status})`,
          },
        ],
        err.status,
      );
    }
    if (err instanceof PaymentsApiError && err.status !== undefined && err.status < 500) {
      throw new VirtualAccountCreationError(
        [{ field: '(credentials)', rule: err.message || `HTTP ${err.status}` }],
        err.status,
      );
    }
    throw err; // 5xx, timeout: unknown; the caller asks C7 by customer_identifier before trying again
  }
}

/** Creates a customer account (C1). Validated first (every field error at once); BVN never logged. */
export const createCustomerVirtualAccount = (
  ctx: Pick<StarterContext, 'api'>,
  input: CreateCustomerAccountRequest,
): Promise<VirtualAccount> => create('customer', () => ctx.api.virtualAccounts.createCustomer(input));

/** Creates a business account (C2). */
export const createBusinessVirtualAccount = (
  ctx: Pick<StarterContext, 'api'>,
  input: CreateBusinessAccountRequest,
): Promise<VirtualAccount> => create('business', () => ctx.api.virtualAccounts.createBusiness(input));

export const virtualAccountCreditHandle = (ctx: StarterContext, transactionReference: string): WorkflowHandle =>
  ctx.client.workflow.getHandle(virtualAccountCreditWorkflowId(transactionReference));

/** The credit workflow's state (recording, frozen, handing_over, handoff_failed, credited...). */
export function getVirtualAccountCreditState(
  ctx: StarterContext,
  transactionReference: string,
): Promise<VirtualAccountCreditState> {
  return retryTransient('virtual-account credit state', () =>
    virtualAccountCreditHandle(ctx, transactionReference).query(virtualAccountCreditStateQuery),
  );
}

/** Operator: hand a credit over again after its handler gave up (handoff_failed); refused in any other state. */
export function retryVirtualAccountCreditHandoff(
  ctx: StarterContext,
  transactionReference: string,
  input: { operator: string; reason: string },
): Promise<{ accepted: true }> {
  return retryTransient('retry credit hand-over', () =>
    virtualAccountCreditHandle(ctx, transactionReference).executeUpdate(retryCreditHandoffUpdate, { args: [input] }),
  );
}

// What every start operation of the `payments` Nexus service checks and fills in before the flow
// starts, from the worker's config: a caller's own event target (https in production), return URLs
// (https in production; a link to our /payments/return signed with RETURN_LINK_KEY, or refused where
// the worker holds no key: docs/nexus.md "Return links"), and the start of a payment under its
// starter's workflow id and search attributes.
import type { z } from 'zod';
import { RETURN_PATH, signReturnUrl, withSignedReturn, type ReturnLinkConfig } from '../config/return-links';
import { productionModeOf } from '../config/config';
import type { MerchantEventInput } from '../shared/merchant-event';
import { paymentWorkflowId } from '../shared/payment-webhook';
import { cycleReference, type RecurringInput } from '../shared/recurring';
import { paymentSearch } from '../starters/payment-common';
import { asGiven, badRequest, parsed, type FlowStartSpec } from './operations';

/** What the handler takes from the worker's config, as the starters take it from theirs. */
export interface PaymentsNexusOptions {
  /** Production mode: a caller's notify.url and return URLs must be https (default: as src/config decides from the environment). */
  production?: boolean;
  /**
   * RETURN_LINK_KEY and TTL: return URLs are signed where they are built (here, for Nexus callers).
   * Without them a return URL to our /payments/return is refused: it could not be signed.
   */
  returnLinks?: ReturnLinkConfig;
}

type Money = { transactionRef: string; amount: number; currency: string };
type ReturnUrls = { transactionRef: string; callbackUrl?: string; redirectUrl?: string };

export class StartRules {
  readonly production: boolean;
  private readonly links?: ReturnLinkConfig;

  constructor(opts: PaymentsNexusOptions = {}) {
    this.production = opts.production ?? productionModeOf(process.env);
    this.links = opts.returnLinks;
  }

  /** Production's https rule on the caller's own notify.url (without one: the worker's NOTIFY_URL, at delivery). */
  resolveNotify<T extends MerchantEventInput>(input: T): T {
    const url = input?.notify?.url;
    if (this.production && url !== undefined && !url.startsWith('https://'))
      throw badRequest('notify.url: must be an https:// URL in production');
    return input;
  }

  /** A payment's return URLs checked, then signed as the starters sign them. */
  signedReturn<T extends ReturnUrls>(v: T): T {
    this.checkReturnUrl('callbackUrl', v.callbackUrl);
    this.checkReturnUrl('redirectUrl', v.redirectUrl);
    return withSignedReturn({ returnLinks: this.links }, v);
  }

  /** A plan's first payment is a checkout under the first cycle's reference: its return link names that. */
  signedPlanReturn(v: RecurringInput): RecurringInput {
    const callbackUrl = v.checkout?.callbackUrl;
    this.checkReturnUrl('checkout.callbackUrl', callbackUrl);
    if (!callbackUrl || !this.links) return v;
    return {
      ...v,
      checkout: { ...v.checkout, callbackUrl: signReturnUrl(callbackUrl, cycleReference(v.planRef, 1), this.links) },
    };
  }

  /** A payment started under `payment-<transactionRef>` with the starters' search attributes. */
  payment<T extends Money>(flow: string, workflowType: string, status: string, input: T): FlowStartSpec {
    return {
      workflowType,
      workflowId: paymentWorkflowId(input.transactionRef),
      input,
      search: paymentSearch(flow, input, status),
    };
  }

  /** A bank debit or USSD payment: validated, its event target resolved, started `initiating`. */
  directPayment(flow: string, workflowType: string, schema: z.ZodType<Money & MerchantEventInput>, raw: unknown) {
    return this.payment(flow, workflowType, 'initiating', this.resolveNotify(parsed(schema, raw, 'payment')));
  }

  /** asGiven, with the event target resolved into the raw input (once `v` parsed it). */
  givenWithNotify<V>(raw: unknown, v: V, start: (v: V) => Omit<FlowStartSpec, 'input'>): FlowStartSpec {
    return asGiven(this.resolveNotify(raw as MerchantEventInput), v, start);
  }

  /** https in production, and a link to our /payments/return only when it can be signed (unsigned, it shows the payer nothing). */
  private checkReturnUrl(field: string, url: string | undefined): void {
    if (url === undefined) return;
    if (this.production && !url.startsWith('https://'))
      throw badRequest(`${field}: must be an https:// URL in production`);
    if (!this.links && new URL(url).pathname.endsWith(RETURN_PATH))
      throw badRequest(
        `${field}: a link to ${RETURN_PATH} must be signed and this worker holds no RETURN_LINK_KEY; give it the key, or return to a page of your own`,
      );
  }
}

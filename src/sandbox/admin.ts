// The admin API under /__admin: a bearer token (SANDBOX_ADMIN_TOKEN, checked in index.ts), never faulted,
// not in the request log. Ledger, request log, clock, request and webhook faults, webhook
// delivery attempts, reset, and the payer-side actions the real service leaves to people
// (dialling a USSD code, completing 3DS, a terminal's decision, a mandate rejected by its holder).
import type { SandboxClock } from './clock';
import type { DirectApi } from './direct';
import type { RequestFaults, WebhookFaults } from './faults';
import { fail, ok, Router, type Reply, type RequestLogEntry } from './http';
import { pathParams } from './validation';
import { LEDGER_KINDS, type Ledger } from './ledger';
import type { MandatesApi } from './mandates';
import type { PosRemoteApi } from './pos-remote';
import type { SmsApi } from './sms';
import type { WebhookDispatcher } from './webhooks';
import type { VirtualAccountsApi } from './virtual-accounts';

export interface AdminState {
  clock: SandboxClock;
  ledger: Ledger;
  faults: RequestFaults;
  webhookFaults: WebhookFaults;
  webhooks: WebhookDispatcher;
  requestLog: RequestLogEntry[];
  direct: DirectApi;
  posRemote: PosRemoteApi;
  mandates: MandatesApi;
  virtualAccounts: VirtualAccountsApi;
  sms: SmsApi;
}

export const ADMIN_ENDPOINTS = [
  'GET /__admin/ledger?reference=&kind=',
  'GET /__admin/requests',
  'GET /__admin/clock',
  'POST /__admin/clock/advance {ms}',
  'GET|POST|DELETE /__admin/faults',
  'GET|POST|DELETE /__admin/webhook-faults',
  'POST /__admin/webhook-faults/release',
  'GET /__admin/webhooks?ref=&target=',
  'POST /__admin/webhooks/settle',
  'POST /__admin/reset',
  'POST /__admin/ussd/{ref}/pay {phone?}',
  'POST /__admin/3ds/{ref}/complete',
  'POST /__admin/3ds/{ref}/fail',
  'POST /__admin/pos/remote/{ref}/decide {response_code}',
  'POST /__admin/mandates/{mandate_id}/reject',
  'POST /__admin/mandates/wrong-otp-status {status: 400|424}',
  'POST /__admin/mandates/{mandate_id}/debit-outcomes {outcomes: [pending|failed, ...]}',
  'GET /__admin/mandates/{mandate_id}/scheduled-debits',
  'POST /__admin/mandate-debits/{transaction_reference}/settle {status: success|failed}',
  'POST /__admin/virtual-accounts/freeze-next {reason}',
  'POST /__admin/virtual-accounts/credits/{transaction_reference}/release',
  'GET /__admin/sms/messages',
];

export function createAdminRouter(state: () => AdminState, reset: () => Promise<void>): Router {
  const router = new Router();
  // The admin API is the sandbox's own (not an operation of the service): its identifiers are
  // checked as identifiers, its bodies by the fault and clock stores themselves.
  const add = (method: string, path: string, handler: Parameters<Router['add']>[4]) => {
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    router.add(method, `/__admin${path}`, 'none', names.length ? { params: pathParams(...names) } : {}, handler);
  };

  add('GET', '', () => ok({ endpoints: ADMIN_ENDPOINTS }));

  add('GET', '/ledger', async ({ query }) => {
    await state().clock.runDue();
    const kind = query.get('kind');
    if (kind && !(LEDGER_KINDS as readonly string[]).includes(kind))
      return fail(400, `kind must be one of ${LEDGER_KINDS.join(', ')}`);
    return ok(state().ledger.list({ reference: query.get('reference'), kind }));
  });

  add('POST', '/virtual-accounts/freeze-next', ({ body }) => {
    const reason =
      typeof body.reason === 'string' && body.reason.trim() !== '' ? body.reason : 'Suspicious transaction';
    state().virtualAccounts.freezeNext(reason);
    return ok({ reason });
  });

  add('POST', '/virtual-accounts/credits/{ref}/release', ({ params }) =>
    state().virtualAccounts.release(params.ref)
      ? ok({ released: params.ref })
      : fail(404, 'no frozen credit with that reference'),
  );

  add('GET', '/requests', () => ok(state().requestLog));

  add('GET', '/clock', () => {
    const { clock } = state();
    return ok({ now: clock.iso(), offsetMs: clock.offset, pendingTimers: clock.pending() });
  });

  add('POST', '/clock/advance', async ({ body }) => {
    const ms = body.ms;
    if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0)
      return fail(400, 'ms must be a non-negative integer');
    const { clock } = state();
    await clock.advance(ms);
    return ok({ now: clock.iso(), offsetMs: clock.offset });
  });

  add('GET', '/faults', () => ok(state().faults.list()));
  add('POST', '/faults', ({ body }) => {
    const rule = state().faults.add(body);
    return typeof rule === 'string' ? fail(400, rule) : ok(rule);
  });
  add('DELETE', '/faults', () => {
    state().faults.clear();
    return ok({});
  });

  add('GET', '/webhook-faults', () => ok(state().webhookFaults.list()));
  add('POST', '/webhook-faults', ({ body }) => {
    const fault = state().webhookFaults.add(body);
    return typeof fault === 'string' ? fail(400, fault) : ok(fault);
  });
  add('DELETE', '/webhook-faults', () => {
    state().webhookFaults.clear();
    return ok({});
  });
  add('POST', '/webhook-faults/release', () => ok({ released: state().webhooks.releaseHeld() }));

  add('GET', '/webhooks', ({ query }) => {
    const { webhooks } = state();
    const filter = { ref: query.get('ref') };
    return ok({
      payments: webhooks.deliveries({ ...filter, target: 'payment' }),
      virtualAccounts: webhooks.deliveries({ ...filter, target: 'virtual-account' }),
      held: webhooks.heldCount(),
    });
  });
  add('POST', '/webhooks/settle', async () => {
    await state().clock.settled();
    return ok({});
  });

  add('POST', '/reset', async () => {
    await reset();
    return ok({});
  });

  add('POST', '/ussd/{ref}/pay', ({ params, body }) =>
    state().direct.payUssd(
      params.ref,
      typeof body.phone === 'string' && /^\d{7,15}$/.test(body.phone) ? body.phone : undefined,
    ),
  );

  const threeDs = (ref: string, outcome: 'complete' | 'fail'): Reply => {
    const reply = state().direct.finish3ds(ref, outcome);
    if (reply.status === 404) return fail(404, 'No 3DS challenge pending for that reference');
    return ok({ transaction_ref: ref, outcome, ...(reply.location ? { redirect: reply.location } : {}) });
  };
  add('POST', '/3ds/{ref}/complete', ({ params }) => threeDs(params.ref, 'complete'));
  add('POST', '/3ds/{ref}/fail', ({ params }) => threeDs(params.ref, 'fail'));

  add('POST', '/pos/remote/{ref}/decide', ({ params, body }) => {
    const code = body.response_code ?? (body.approve === false ? '51' : '00');
    return state().posRemote.decide(params.ref, String(code));
  });

  add('POST', '/mandates/wrong-otp-status', ({ body }) => state().mandates.setWrongOtpStatus(body.status));
  add('POST', '/mandates/{id}/reject', ({ params }) => state().mandates.reject(params.id));
  add('POST', '/mandates/{id}/debit-outcomes', ({ params, body }) =>
    state().mandates.scriptDebits(params.id, body.outcomes),
  );
  add('GET', '/mandates/{id}/scheduled-debits', async ({ params }) => {
    await state().clock.runDue(); // dates reached in real time since the last tick
    return state().mandates.scheduledDebits(params.id);
  });
  add('GET', '/sms/messages', () => ok(state().sms.sentMessages()));
  add('POST', '/mandate-debits/{ref}/settle', ({ params, body }) =>
    state().mandates.settleDebit(params.ref, body.status),
  );

  return router;
}

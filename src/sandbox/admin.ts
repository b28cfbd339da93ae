// The admin API under /__admin: a bearer token (SANDBOX_ADMIN_TOKEN, checked in index.ts), never faulted,
// not in the request log. Ledger, request log, clock, request and webhook faults, webhook
// delivery attempts, reset, and the payer-side actions the real service leaves to people
// (dialling a USSD code, completing 3DS, a terminal's decision, a mandate rejected by its holder).
import type { SandboxClock } from './clock';
import type { DirectApi } from './direct';
import type { RequestFaults, WebhookFaults } from './faults';
import { fail, ok, Router, type Reply, type RequestContext, type RequestLogEntry, type RouteHandler } from './http';
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

/** What the admin handlers work with: the current sandbox generation, and the reset that replaces it. */
interface AdminDeps {
  state: () => AdminState;
  reset: () => Promise<void>;
}
type AdminHandler = RouteHandler<AdminDeps>;

async function ledger({ state }: AdminDeps, { query }: RequestContext): Promise<Reply> {
  await state().clock.runDue();
  const kind = query.get('kind');
  if (kind && !(LEDGER_KINDS as readonly string[]).includes(kind))
    return fail(400, `kind must be one of ${LEDGER_KINDS.join(', ')}`);
  return ok(state().ledger.list({ reference: query.get('reference'), kind }));
}

const freezeNext: AdminHandler = ({ state }, { body }) => {
  const reason = typeof body.reason === 'string' && body.reason.trim() !== '' ? body.reason : 'Suspicious transaction';
  state().virtualAccounts.freezeNext(reason);
  return ok({ reason });
};

const releaseCredit: AdminHandler = ({ state }, { params }) =>
  state().virtualAccounts.release(params.ref)
    ? ok({ released: params.ref })
    : fail(404, 'no frozen credit with that reference');

const clockNow: AdminHandler = ({ state }) => {
  const { clock } = state();
  return ok({ now: clock.iso(), offsetMs: clock.offset, pendingTimers: clock.pending() });
};

async function advanceClock({ state }: AdminDeps, { body }: RequestContext): Promise<Reply> {
  const ms = body.ms;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0)
    return fail(400, 'ms must be a non-negative integer');
  const { clock } = state();
  await clock.advance(ms);
  return ok({ now: clock.iso(), offsetMs: clock.offset });
}

/** Runs an admin action, then answers with an empty envelope. */
async function done(action: () => unknown): Promise<Reply> {
  await action();
  return ok({});
}

/** A fault store's answer to an added rule: the rule, or the message refusing it. */
const added = (rule: unknown): Reply => (typeof rule === 'string' ? fail(400, rule) : ok(rule));

const webhooks: AdminHandler = ({ state }, { query }) => {
  const { webhooks } = state();
  const filter = { ref: query.get('ref') };
  return ok({
    payments: webhooks.deliveries({ ...filter, target: 'payment' }),
    virtualAccounts: webhooks.deliveries({ ...filter, target: 'virtual-account' }),
    held: webhooks.heldCount(),
  });
};

const payUssd: AdminHandler = ({ state }, { params, body }) =>
  state().direct.payUssd(
    params.ref,
    typeof body.phone === 'string' && /^\d{7,15}$/.test(body.phone) ? body.phone : undefined,
  );

const threeDs =
  (outcome: 'complete' | 'fail'): AdminHandler =>
  ({ state }, { params: { ref } }) => {
    const reply = state().direct.finish3ds(ref, outcome);
    if (reply.status === 404) return fail(404, 'No 3DS challenge pending for that reference');
    return ok({ transaction_ref: ref, outcome, ...(reply.location ? { redirect: reply.location } : {}) });
  };

const decide: AdminHandler = ({ state }, { params, body }) => {
  const code = body.response_code ?? (body.approve === false ? '51' : '00');
  return state().posRemote.decide(params.ref, String(code));
};

async function scheduledDebits({ state }: AdminDeps, { params }: RequestContext): Promise<Reply> {
  await state().clock.runDue(); // dates reached in real time since the last tick
  return state().mandates.scheduledDebits(params.id);
}

/** The admin API: method, path under /__admin, handler. */
const ADMIN_ROUTES: readonly (readonly [string, string, AdminHandler])[] = [
  ['GET', '', () => ok({ endpoints: ADMIN_ENDPOINTS })],
  ['GET', '/ledger', ledger],
  ['POST', '/virtual-accounts/freeze-next', freezeNext],
  ['POST', '/virtual-accounts/credits/{ref}/release', releaseCredit],
  ['GET', '/requests', ({ state }) => ok(state().requestLog)],
  ['GET', '/clock', clockNow],
  ['POST', '/clock/advance', advanceClock],
  ['GET', '/faults', ({ state }) => ok(state().faults.list())],
  ['POST', '/faults', ({ state }, { body }) => added(state().faults.add(body))],
  ['DELETE', '/faults', ({ state }) => done(() => state().faults.clear())],
  ['GET', '/webhook-faults', ({ state }) => ok(state().webhookFaults.list())],
  ['POST', '/webhook-faults', ({ state }, { body }) => added(state().webhookFaults.add(body))],
  ['DELETE', '/webhook-faults', ({ state }) => done(() => state().webhookFaults.clear())],
  ['POST', '/webhook-faults/release', ({ state }) => ok({ released: state().webhooks.releaseHeld() })],
  ['GET', '/webhooks', webhooks],
  ['POST', '/webhooks/settle', ({ state }) => done(() => state().clock.settled())],
  ['POST', '/reset', ({ reset }) => done(reset)],
  ['POST', '/ussd/{ref}/pay', payUssd],
  ['POST', '/3ds/{ref}/complete', threeDs('complete')],
  ['POST', '/3ds/{ref}/fail', threeDs('fail')],
  ['POST', '/pos/remote/{ref}/decide', decide],
  ['POST', '/mandates/wrong-otp-status', ({ state }, { body }) => state().mandates.setWrongOtpStatus(body.status)],
  ['POST', '/mandates/{id}/reject', ({ state }, { params }) => state().mandates.reject(params.id)],
  [
    'POST',
    '/mandates/{id}/debit-outcomes',
    ({ state }, { params, body }) => state().mandates.scriptDebits(params.id, body.outcomes),
  ],
  ['GET', '/mandates/{id}/scheduled-debits', scheduledDebits],
  ['GET', '/sms/messages', ({ state }) => ok(state().sms.sentMessages())],
  [
    'POST',
    '/mandate-debits/{ref}/settle',
    ({ state }, { params, body }) => state().mandates.settleDebit(params.ref, body.status),
  ],
];

export function createAdminRouter(state: () => AdminState, reset: () => Promise<void>): Router {
  const router = new Router();
  // The admin API is the sandbox's own (not an operation of the service): its identifiers are
  // checked as identifiers, its bodies by the fault and clock stores themselves.
  for (const [method, path, handle] of ADMIN_ROUTES) {
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const fields = names.length ? { params: pathParams(...names) } : {};
    router.add(method, `/__admin${path}`, 'none', fields, (ctx) => handle({ state, reset }, ctx));
  }
  return router;
}

// A request fault scoped to a query (POST /__admin/faults {query}): only requests whose query string
// contains the text take it, so concurrent callers of one path can each have a fault of their own
// (test/virtual-accounts/va-credit-v3.test.ts runs its three filtered-search (C5) outages side by side this way).
import { useSandbox } from './helpers';

const env = useSandbox();
afterEach(() => env.api.admin.del('/faults'));

const FILTERED_CREDITS = '/virtual-account/merchant/transactions/all';

describe('request faults scoped to a query', () => {
  it('only a request whose query contains the text takes the fault; then the rule is used up', async () => {
    const added = await env.api.admin.post('/faults', {
      method: 'GET',
      path: FILTERED_CREDITS,
      query: 'session_id=111',
      kind: 'error5xx',
      count: 1,
    });
    expect(added.body!.data).toMatchObject({ query: 'session_id=111' });
    expect((await env.api.get(`${FILTERED_CREDITS}?session_id=222`)).status).toBe(200);
    expect((await env.api.get(FILTERED_CREDITS)).status).toBe(200);
    expect((await env.api.admin.get('/faults')).body!.data).toHaveLength(1);
    expect((await env.api.get(`${FILTERED_CREDITS}?per_page=5&session_id=111`)).status).toBe(503);
    expect((await env.api.admin.get('/faults')).body!.data).toEqual([]);
    expect((await env.api.get(`${FILTERED_CREDITS}?session_id=111`)).status).toBe(200);
  });

  it('an empty or non-text query is refused', async () => {
    for (const query of ['', 5]) {
      const r = await env.api.admin.post('/faults', { path: FILTERED_CREDITS, query, kind: 'reset' });
      expect(r.status).toBe(400);
      expect(r.text).toContain('query must be a non-empty string');
    }
  });
});

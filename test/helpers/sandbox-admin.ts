// The sandbox's admin API (/__admin) as the tests call it: one home for its bearer token and
// content type, so every helper that drives faults, the clock or the ledger sends both.
import { DEFAULT_SANDBOX_ADMIN_TOKEN } from '../../src/sandbox';

/** Headers every admin request carries (the sandboxes the suite starts use the default token). */
export const SANDBOX_ADMIN_HEADERS: Readonly<Record<string, string>> = {
  authorization: `Bearer ${DEFAULT_SANDBOX_ADMIN_TOKEN}`,
  'content-type': 'application/json',
};

/** Calls `/__admin<path>` and returns the envelope's `data`; a non-2xx answer throws with its body. */
export async function sandboxAdminCall<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}/__admin${path}`, {
    method,
    headers: SANDBOX_ADMIN_HEADERS,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { data: T };
  if (!res.ok) throw new Error(`admin ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

// What a sandbox route receives and answers, on its own so that the router (http.ts) and the
// validation helpers its routes declare (validation.ts) can both name them without importing each other.
import type { IncomingHttpHeaders } from 'node:http';

export interface Reply {
  status: number;
  body?: unknown;
  /** An HTML page instead of JSON. */
  html?: string;
  /** Redirect (with `status` 302/303) to this URL. */
  location?: string;
  /** Hold the socket open with no reply, then destroy it (a processor that never answers). */
  hang?: boolean;
}

export interface RequestContext {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  /** The request came from an HTML form (application/x-www-form-urlencoded): answer with a page. */
  form: boolean;
  /** The accepted secret key the caller used ('' on unauthenticated routes). */
  secretKey: string;
  headers: IncomingHttpHeaders;
}

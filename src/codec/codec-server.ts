// Remote codec endpoint for the Temporal Web UI and CLI: POST /encode and /decode with
// `{payloads: [...]}` (proto3 JSON). CORS lets the Web UI call it. Who may call it:
//  - token mode (`npm start`, no identity provider): one static bearer token opens every namespace;
//  - OIDC mode (`oidc`): the user's own token, as the Web UI behind single sign-on forwards it, is
//    verified (issuer, audience, the issuer's JWKS signature, exp, nbf: ./oidc.ts) and must grant the
//    namespace the request names (X-Namespace): 401 for a token that does not authenticate, 403 for
//    a namespace it does not grant.
// Every decode is audited (who, namespace, workflow id when given, payload count; never a payload).
// /encode (which turns chosen plaintext into ciphertext the workers accept) is off unless `encode`
// is set: by default on only for the static token outside production. Each client (an OIDC user's
// subject; otherwise its address) has a budget of requests per minute (429).
// The bundled dev UI of `npm start` cannot attach a custom header, so that stack alone gives the
// server a `pathToken`, a capability of its own (never CODEC_SERVER_TOKEN) that may lead the path:
// http://host:port/t/<pathToken>/decode (docs/architecture.md, "Encryption and the Web UI"). Without
// one, and always in production, a token in the path is refused: a URL ends up in the UI's public
// settings, browser history and proxy logs.
// GET /healthz (alive) and GET /readyz (the codec encrypts and decrypts a probe) need no token.
// Requests are counted by route and status; the route label never carries the path's token.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { createSafeServer, HttpError, readBodyLimited, requireJsonContentType } from '../http/safe-server';
import { RateLimiter } from '../http/rate-limit';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { Logger } from 'pino';
import { httpMetricsObserver } from '../telemetry/metrics';
import { answerHealth } from '../observability/health';
import { KeysUnavailableError, TokenRejectedError, type OidcVerifier } from './oidc';

interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Token mode: the bearer token (Authorization header). Ignored when `oidc` is given. */
  token?: string;
  /** OIDC mode: verifies the user's token and names the namespaces it grants. */
  oidc?: OidcVerifier;
  /** POST /encode answers (default: only in token mode outside production). */
  encode?: boolean;
  /** Requests per minute per client (default 600). */
  rateLimitPerMinute?: number;
  /** The one token accepted in the URL path (/t/<token>/...): the development stack's UI only. Refused in production. */
  pathToken?: string;
  /** Production mode: a token in the path is refused, and `pathToken` may not be set. */
  production?: boolean;
  corsOrigins: string[];
  host?: string;
  port?: number;
  logger?: Logger;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes?: number;
}

export interface RunningCodecServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

function fromJson(p: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: p.data ? Buffer.from(p.data, 'base64') : undefined,
  };
}

function toJson(p: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    data: p.data ? Buffer.from(p.data).toString('base64') : undefined,
  };
}

function tokenMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The route label of a request path: the /t/<token> prefix is dropped, so no token reaches a label. */
export function codecRoute(path: string): string {
  const route = path.replace(/^\/t\/[^/]*/, '');
  return ['/encode', '/decode', '/healthz', '/readyz'].includes(route) ? route : 'other';
}

/** Ready when the codec round-trips a probe payload (its keys load and work). */
async function codecWorks(codec: PayloadCodec): Promise<boolean> {
  try {
    const probe = Buffer.from('readiness-probe');
    const [decoded] = await codec.decode(await codec.encode([{ metadata: {}, data: probe }]));
    return Buffer.from(decoded.data ?? []).equals(probe);
  } catch {
    return false;
  }
}

/** Who is calling: a user (OIDC `sub`) with the namespaces their token grants, or the static token's id (every namespace). */
interface Caller {
  user: string;
  namespaces?: ReadonlySet<string>;
}

/** The request is refused: its status and the answer's error (never the token or a payload). */
type Refusal = { status: number; error: string; retryAfterS?: number };

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** CORS for the Web UI's origins only. */
function setCors(req: IncomingMessage, res: ServerResponse, origins: string[]): void {
  const origin = req.headers.origin;
  if (origin && origins.includes(origin)) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type, Authorization, X-Namespace');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
  }
}

/** The options' rules, checked once: misconfiguration stops the process with one line. */
function checkOptions(opts: CodecServerOptions): void {
  if (!opts.oidc && !opts.token)
    throw new Error('codec server: set a token (CODEC_AUTH_MODE=token) or an OIDC issuer (CODEC_AUTH_MODE=oidc)');
  if (opts.production && opts.pathToken !== undefined)
    throw new Error('a codec token in the URL path is refused in production: use Authorization: Bearer');
  if (opts.oidc && opts.pathToken !== undefined)
    throw new Error('a codec token in the URL path is for the static token mode only');
}

export function createCodecServer(opts: CodecServerOptions): Server {
  checkOptions(opts);
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const encodeOn = opts.encode ?? (!opts.oidc && !opts.production);
  const limiter = new RateLimiter({ limit: opts.rateLimitPerMinute ?? 600 });
  const health = {
    live: () => true,
    ready: async () => {
      const codec = await codecWorks(opts.codec);
      return { ready: codec, checks: { codec } };
    },
  };

  /** The caller, or why not; every answer (refusals too) spends one request of the client's budget. */
  const admit = async (req: IncomingMessage, presented: string | undefined): Promise<Caller | Refusal> => {
    const caller = await authenticate(opts, presented);
    // An OIDC user by subject; the static token (shared by everyone behind it) and a failed attempt by address.
    const client =
      'user' in caller && caller.namespaces ? `user:${caller.user}` : `ip:${req.socket.remoteAddress ?? 'unknown'}`;
    const retryAfterS = limiter.take(client);
    if (retryAfterS > 0) return { status: 429, error: 'too many requests: slow down', retryAfterS };
    if (!('user' in caller)) return caller;
    const namespace = headerValue(req, 'x-namespace');
    if (caller.namespaces && !(namespace && caller.namespaces.has(namespace)))
      return {
        status: 403,
        error: namespace ? `not allowed to use namespace ${namespace}` : 'X-Namespace is required',
      };
    return caller;
  };

  // createSafeServer: a malformed target is a 400 before this runs, and nothing thrown here ends the process.
  return createSafeServer(
    async (req, res, url) => {
      setCors(req, res, opts.corsOrigins);
      if (req.method === 'OPTIONS') {
        res.writeHead(204);
        res.end();
        return;
      }
      const target = resolvePathToken(url.pathname, opts);
      if ('status' in target) return reply(res, target.status, { error: target.error });
      const { path } = target;
      const presented = target.token ?? bearerOf(req);
      if ((path === '/healthz' || path === '/readyz') && (await answerHealth(req.method, path, health, res))) return;
      if (path !== '/encode' && path !== '/decode') return reply(res, 404, { error: 'not found' });
      if (req.method !== 'POST') return reply(res, 405, { error: 'method not allowed' });
      if (path === '/encode' && !encodeOn)
        return reply(res, 404, { error: '/encode is off on this server (CODEC_ENCODE_ENABLED)' });
      const caller = await admit(req, presented);
      if ('status' in caller) {
        audit(opts.logger, req, path, { refused: caller.status, reason: caller.error });
        const headers: Record<string, string> = caller.retryAfterS ? { 'Retry-After': String(caller.retryAfterS) } : {};
        return reply(res, caller.status, { error: caller.error }, headers);
      }
      requireJsonContentType(req);
      const input = parsePayloads(await readBodyLimited(req, maxBody));
      if (typeof input === 'string') return reply(res, 400, { error: input });
      audit(opts.logger, req, path, { user: caller.user, payloads: input.length });
      try {
        const output = path === '/encode' ? await opts.codec.encode(input) : await opts.codec.decode(input);
        reply(res, 200, { payloads: output.map(toJson) });
      } catch (err) {
        opts.logger?.warn({ err, path }, 'codec request failed');
        reply(res, 400, { error: 'payloads could not be processed' });
      }
    },
    { observe: httpMetricsObserver('codec', codecRoute), span: { server: 'codec', routeOf: codecRoute } },
  );
}

/**
 * The route behind an optional /t/<token> prefix, and the token it carries when that is the
 * development stack's path capability (it stands for the bearer token). A path token is refused
 * whatever it holds when none is configured: header authentication only.
 */
function resolvePathToken(pathname: string, opts: CodecServerOptions): { path: string; token?: string } | Refusal {
  const match = /^\/t\/([^/]+)(\/.*)$/.exec(pathname);
  if (!match) return { path: pathname };
  const path = match[2];
  if (opts.pathToken === undefined) {
    if (path === '/encode' || path === '/decode')
      return { status: 401, error: 'a token in the URL path is refused: send Authorization: Bearer <token>' };
    return { path };
  }
  let given: string;
  try {
    given = decodeURIComponent(match[1]);
  } catch {
    return { status: 400, error: 'malformed token in path' };
  }
  if (!tokenMatches(opts.pathToken, given)) return { status: 401, error: 'invalid token in path' };
  return { path, token: opts.token };
}

/** The bearer token of the Authorization header (a proxy's, or the Web UI's access-token forwarding). */
function bearerOf(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  return typeof auth === 'string' && /^Bearer /i.test(auth) ? auth.slice('Bearer '.length).trim() : undefined;
}

/** Token mode: the static token (every namespace). OIDC mode: the verified user and their namespaces. */
async function authenticate(opts: CodecServerOptions, presented: string | undefined): Promise<Caller | Refusal> {
  if (!presented) return { status: 401, error: 'missing or invalid bearer token' };
  if (!opts.oidc) {
    return tokenMatches(opts.token!, presented)
      ? { user: `token:${tokenId(presented)}` }
      : { status: 401, error: 'missing or invalid bearer token' };
  }
  try {
    const user = await opts.oidc.verify(presented);
    return { user: user.subject, namespaces: user.namespaces };
  } catch (err) {
    if (err instanceof TokenRejectedError) return { status: 401, error: `token refused: ${err.message}` };
    if (err instanceof KeysUnavailableError) {
      opts.logger?.error({ err }, 'codec server: the identity provider keys could not be read');
      return { status: 503, error: "the identity provider's keys are unavailable: try again" };
    }
    throw err;
  }
}

/** The request's payloads, or the error to answer 400 with. */
function parsePayloads(raw: Buffer): Payload[] | string {
  let body: { payloads?: JsonPayload[] };
  try {
    body = JSON.parse(raw.toString('utf8')) as { payloads?: JsonPayload[] };
  } catch {
    throw new HttpError(400, 'body is not JSON');
  }
  if (!body || !Array.isArray(body.payloads)) return 'payloads must be an array';
  try {
    return body.payloads.map(fromJson);
  } catch {
    return 'payloads must be {metadata, data} with base64 values';
  }
}

/** The audit line of every encode, decode and refusal: who, which namespace and workflow, how many payloads; never a payload or a token. */
function audit(logger: Logger | undefined, req: IncomingMessage, path: string, fields: Record<string, unknown>): void {
  logger?.info(
    {
      audit: `codec.${path.slice(1)}`,
      namespace: headerValue(req, 'x-namespace'),
      workflowId: headerValue(req, 'x-workflow-id'),
      ...fields,
    },
    'refused' in fields ? `codec ${path.slice(1)} refused` : `codec ${path.slice(1)}`,
  );
}

/** A short, stable, non-secret id of a token for audit lines. */
const tokenId = (token: string): string => createHash('sha256').update(token).digest('hex').slice(0, 12);

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' && v.length <= 200 ? v : undefined;
}

export async function startCodecServer(opts: CodecServerOptions): Promise<RunningCodecServer> {
  const server = createCodecServer(opts);
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// The sandbox against hostile requests (issue 27, security round): a body nested past a sane depth is
// refused and stored nowhere, a declared length over the limit is refused before the body is read,
// the admin API authenticates before it parses, a long run of slashes is read in linear time, and the
// process refuses to start in production mode.
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH, jsonDepth } from '../../src/sandbox/http';
import { KEY, call, useSandbox } from './helpers';

const ROOT = join(__dirname, '..', '..');
const env = useSandbox();

/** `{"a":{"a":…1…}}` nested `depth` levels deep. */
const nested = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

/** A raw request whose headers say what the test wants, the body never sent: the status it gets. */
function statusOfDeclared(path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${env.sb.url}${path}`, { method: 'POST', headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', reject);
    req.flushHeaders(); // headers only: a server that waited for the body would never answer
  });
}

describe('a JSON body nested past the limit', () => {
  it('measures nesting outside strings only, in one pass', () => {
    expect(jsonDepth('{"a":[1,{"b":2}]}')).toBe(3);
    expect(jsonDepth('{"a":"{{{[[[\\"{{"}')).toBe(1);
    expect(jsonDepth(nested(MAX_JSON_DEPTH))).toBe(MAX_JSON_DEPTH);
  });

  it('is refused with 400, and the service keeps answering its reads', async () => {
    const ref = `deep-${Date.now()}`;
    const body = `{"email":"a@b.co","amount":5000,"currency":"NGN","initiate_type":"inline","transaction_ref":"${ref}","metadata":${nested(20_000)}}`;
    const res = await fetch(`${env.sb.url}/transaction/initiate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      body,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ success: false, message: 'Invalid JSON body' });
    // Nothing was stored: the reference reads as one never sent, and the reads answer as before.
    const never = await call(env.sb.url, 'GET', `/transaction/verify/never-${ref}`);
    expect(await call(env.sb.url, 'GET', `/transaction/verify/${ref}`)).toMatchObject({
      status: never.status,
      body: { message: String(never.body?.message).replace(`never-${ref}`, ref) },
    });
    expect((await call(env.sb.url, 'GET', '/transaction?page=1&perPage=5')).status).toBeLessThan(500);
  });

  it('at the limit is parsed as usual', async () => {
    const res = await fetch(`${env.sb.url}/transaction/initiate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      body: `{"metadata":${nested(MAX_JSON_DEPTH - 1)}}`,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).not.toBe('Invalid JSON body');
  });
});

describe('the length a request declares', () => {
  it('over the limit is refused with 413 before a byte of the body is read', async () => {
    const status = await statusOfDeclared('/transaction/initiate', {
      Authorization: `Bearer ${KEY}`,
      'Content-Type': 'application/json',
      'Content-Length': String(MAX_BODY_BYTES + 1),
    });
    expect(status).toBe(413);
  });
});

describe('the admin API', () => {
  it('answers 401 to a request without its token before it reads or parses the body', async () => {
    const status = await statusOfDeclared('/__admin/faults', {
      'Content-Type': 'application/json',
      'Content-Length': '1000',
    });
    expect(status).toBe(401);
    const res = await fetch(`${env.sb.url}/__admin/faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(401);
  });
});

describe('a path with a long run of slashes', () => {
  it('is answered (the trailing-slash trim is linear)', async () => {
    const res = await call(env.sb.url, 'GET', `/transaction/verify/x${'/'.repeat(15_000)}y`);
    expect(res.status).toBe(404); // no such route: the slashes are not trimmed away from the middle
    const trimmed = await call(env.sb.url, 'GET', '/transaction/verify/nope///');
    expect(trimmed).toMatchObject({ status: (await call(env.sb.url, 'GET', '/transaction/verify/nope')).status });
  });
});

describe('the sandbox process', () => {
  it.each([{ DEPLOYMENT: 'production' }, { NODE_ENV: 'production' }, { PAYMENTS_ENVIRONMENT: 'production' }])(
    'refuses to start in production mode (%o)',
    (production) => {
      const run = spawnSync(
        process.execPath,
        [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'src', 'sandbox', 'main.ts')],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SANDBOX_PORT: '0', ...production },
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('the payments sandbox does not run in production mode');
    },
  );
});

// Issue #41 §4: docker-compose's Web UI decodes payloads although compose has no login. The test
// reads docker-compose.yml and runs what its two services run, without Docker: the codec server's
// program (`node dist/codec/main.js`) with the codec-server service's environment, and the Web UI
// (the dev server's bundled UI, the same ui-server version as compose's temporalio/ui image) with
// the temporal-ui service's codec settings. The compose network's ports 4030 and 8233 become free
// ones. A real browser (chromium) then opens a flow whose input is encrypted in history: the page
// shows it decoded. The codec server still refuses the same call without the path capability, and
// the UI's public settings never carry CODEC_SERVER_TOKEN.
//
// Needs /usr/bin/chromium, as test/security/web-ui.test.ts (SKIP_BROWSER_TESTS=1 skips it on purpose).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { chromium, type Browser } from 'playwright-core';
import { parse } from 'yaml';
import { startCodecServer } from '../../src/codec/codec-server';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { loadCodecConfig } from '../../src/config/processes';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { freePort } from '../../src/http/free-port';
import { startDevServer, type DevServer } from '../../src/stack/temporal-dev-server';
import { createTemporalClient } from '../../src/temporal/client';
import { eventually } from '../support/polling';
import { testConfig } from '../support/stack';
import { CHROMIUM, CHROMIUM_ARGS } from '../support/web-ui-browser';
import { DIST, ensureBuilt } from '../ship/build';

jest.setTimeout(120_000);

type Env = Record<string, string>;
const compose = parse(readFileSync(join(PROJECT_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { environment?: Env }>;
};
const uiEnv = compose.services['temporal-ui']!.environment!;
const codecEnv = compose.services['codec-server']!.environment!;

/** Compose's interpolation of ${NAME}, ${NAME:-default} and ${NAME:?error} from `values`. */
function interpolate(text: string, values: Env): string {
  return String(text).replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (_m, name: string, op?: string, arg = '') => {
    if (values[name]) return values[name];
    if (op === '?') throw new Error(`compose refuses to start: ${arg}`);
    return op === '-' ? arg : '';
  });
}

// What an operator puts in .env (.env.example says how to make each).
const dotEnv: Env = {
  CODEC_PATH_TOKEN: randomBytes(24).toString('hex'),
  CODEC_SERVER_TOKEN: randomBytes(24).toString('hex'),
  PAYLOAD_ENCRYPTION_KEYS: `compose-1:${randomBytes(32).toString('base64')}`,
};

const skip = process.env.SKIP_BROWSER_TESTS === '1';
let dev: DevServer | undefined;
let codec: ChildProcess | undefined;
let browser: Browser | undefined;
let client: Client | undefined;
let uiUrl = '';
let codecPort = 0;
let codecOutput = '';

(skip ? describe.skip : describe)("docker-compose's Web UI decodes without a login", () => {
  let setUp: Promise<void> | undefined;
  beforeAll(() => (setUp = setUpStack()), 600_000);
  async function setUpStack(): Promise<void> {
    const [port, uiPort] = await Promise.all([freePort(), freePort(), ensureBuilt()]);
    codecPort = port;
    // The endpoint the browser calls, as compose gives it to the UI, on this run's codec port.
    const endpoint = interpolate(uiEnv.TEMPORAL_CODEC_ENDPOINT!, dotEnv).replace(
      'localhost:4030',
      `localhost:${codecPort}`,
    );
    dev = await startDevServer({ uiPort, codecEndpoint: endpoint });
    uiUrl = `http://localhost:${uiPort}`;
    const env: Env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
    for (const [name, value] of Object.entries(codecEnv)) env[name] = interpolate(value, dotEnv);
    Object.assign(env, {
      CODEC_HOST: '127.0.0.1',
      CODEC_PORT: String(codecPort),
      CODEC_CORS_ORIGINS: env.CODEC_CORS_ORIGINS!.replace(':8233', `:${uiPort}`),
      METRICS_PORT: 'off',
    });
    codec = spawn(process.execPath, [join(DIST, 'codec', 'main.js')], { cwd: PROJECT_ROOT, env });
    codec.stdout!.on('data', (d: Buffer) => (codecOutput += d.toString()));
    codec.stderr!.on('data', (d: Buffer) => (codecOutput += d.toString()));
    await eventually(() => fetch(`http://127.0.0.1:${codecPort}/healthz`).then((r) => r.ok), {
      timeoutMs: 30_000,
      ignoreErrors: true,
      description: `the codec server answers (it said: ${codecOutput})`,
    });
    const config = testConfig({
      TEMPORAL_ADDRESS: dev.address,
      PAYLOAD_ENCRYPTION_KEYS: dotEnv.PAYLOAD_ENCRYPTION_KEYS!,
    });
    client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
  }

  afterAll(async () => {
    // A set-up still running (its hook timed out) would start processes after this: wait for it first.
    await setUp?.catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await client?.connection.close();
    codec?.kill('SIGTERM');
    await dev?.stop();
  });

  it('is configured as a UI with no login: no access token forwarded, a path capability in the endpoint', () => {
    expect(uiEnv.TEMPORAL_CODEC_PASS_ACCESS_TOKEN).toBe('false');
    expect(uiEnv.TEMPORAL_CODEC_ENDPOINT).toBe('http://localhost:4030/t/${CODEC_PATH_TOKEN:?set CODEC_PATH_TOKEN}');
    expect(codecEnv.CODEC_PATH_TOKEN).toBe('${CODEC_PATH_TOKEN:?set CODEC_PATH_TOKEN}');
    expect(JSON.stringify(uiEnv)).not.toContain('CODEC_SERVER_TOKEN');
    expect(() => interpolate(uiEnv.TEMPORAL_CODEC_ENDPOINT!, {})).toThrow(
      'compose refuses to start: set CODEC_PATH_TOKEN',
    );
  });

  it("shows a flow's encrypted input decoded in the browser; without the capability the codec server refuses", async () => {
    const ref = `compose-ui-${randomUUID()}`;
    // A flow no worker runs: its input stays in history as the client encrypted it.
    const handle = await client!.workflow.start('vendElectricityWorkflow', {
      workflowId: ref,
      taskQueue: `no-worker-${randomUUID()}`,
      args: [{ order_ref: ref, note: 'shown decoded by the compose Web UI' }],
    });
    try {
      const started = (await handle.fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!;
      const stored = Buffer.from(started.input!.payloads![0]!.data!).toString('utf8');
      expect(stored).not.toContain(ref); // ciphertext in history: only the codec server can show it

      const page = await browser!.newPage();
      page.setDefaultTimeout(20_000);
      const decodes: number[] = [];
      page.on('response', (res) => {
        if (new URL(res.url()).pathname.endsWith('/decode')) decodes.push(res.status());
      });
      try {
        await page.goto(`${uiUrl}/namespaces/default/workflows/${encodeURIComponent(ref)}`);
        await eventually(
          async () => (await page.locator('body').innerText()).includes('shown decoded by the compose Web UI'),
          { timeoutMs: 30_000, intervalMs: 250, description: 'the Web UI shows the decoded input' },
        );
        expect(await page.locator('body').innerText()).toContain(ref);
        expect(decodes.length).toBeGreaterThan(0);
        expect(decodes.every((s) => s === 200)).toBe(true);
      } finally {
        await page.close();
      }

      // The same call without the capability (what the UI sent before: no token at all) is refused.
      const bare = await fetch(`http://127.0.0.1:${codecPort}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Namespace': 'default', origin: uiUrl },
        body: JSON.stringify({ payloads: [] }),
      });
      expect(bare.status).toBe(401);
      const settings = await (await fetch(`${uiUrl}/api/v1/settings`)).text();
      expect(settings).toContain(`/t/${dotEnv.CODEC_PATH_TOKEN}`);
      expect(settings).not.toContain(dotEnv.CODEC_SERVER_TOKEN);
    } finally {
      await handle.terminate('compose web ui test done').catch(() => undefined);
    }
  });
});

describe('CODEC_PATH_TOKEN (the codec-server process)', () => {
  it('is read into the codec config; a short or malformed one is refused by name', () => {
    expect(loadCodecConfig({ CODEC_PATH_TOKEN: dotEnv.CODEC_PATH_TOKEN }).codec.pathToken).toBe(
      dotEnv.CODEC_PATH_TOKEN,
    );
    expect(loadCodecConfig({}).codec.pathToken).toBeUndefined();
    for (const bad of ['short', `${'a'.repeat(31)}`, `${'a'.repeat(40)}/x`])
      expect(() => loadCodecConfig({ CODEC_PATH_TOKEN: bad })).toThrow(
        'CODEC_PATH_TOKEN: must be at least 32 letters, digits, "_" or "-" (openssl rand -hex 24)',
      );
  });

  it('is refused in production mode: the codec server does not start with it', async () => {
    const config = loadCodecConfig({ CODEC_PATH_TOKEN: dotEnv.CODEC_PATH_TOKEN });
    await expect(
      startCodecServer({
        codec: new AesGcmPayloadCodec(config.encryption.keys, config.encryption.activeKeyId),
        token: dotEnv.CODEC_SERVER_TOKEN!,
        pathToken: config.codec.pathToken!,
        production: true,
        corsOrigins: [],
        host: '127.0.0.1',
        port: 0,
      }),
    ).rejects.toThrow('a codec token in the URL path is refused in production: use Authorization: Bearer');
  });
});

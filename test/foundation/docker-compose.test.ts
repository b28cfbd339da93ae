// docker-compose.yml cannot run here (no Docker engine), so this checks that it parses and
// agrees with the code: every service, the variables the config reads, the ports and entry points.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { envSchema, loadConfig } from '../../src/config/config';
import { SEARCH_ATTRIBUTE_REGISTRATION } from '../../src/shared/search-attributes';

const root = join(__dirname, '..', '..');
type Service = { image?: string; build?: unknown; command?: string[] | string; environment?: Record<string, string>; ports?: string[]; depends_on?: Record<string, unknown> };
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const defaults = loadConfig({});

describe('docker-compose.yml', () => {
  it('names every service of the deployment', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['codec-server', 'postgresql', 'sandbox', 'temporal', 'temporal-setup', 'temporal-ui', 'webhooks', 'worker'].sort(),
    );
    expect(services.temporal.environment?.DB).toBe('postgres12');
    expect(services.temporal.depends_on).toHaveProperty('postgresql');
  });

  it('starts each app process from an entry point that exists in src', () => {
    const entry: Record<string, string> = { worker: 'workers/main', webhooks: 'webhooks/main', 'codec-server': 'codec/main', sandbox: 'sandbox/main' };
    for (const [name, file] of Object.entries(entry)) {
      expect(services[name].command).toEqual(['node', `dist/${file}.js`]);
      expect(existsSync(join(root, 'src', `${file}.ts`))).toBe(true);
    }
  });

  it('gives the app processes every variable the config needs, all known to the config schema', () => {
    const known = new Set(Object.keys(envSchema.shape));
    const required = ['PAYMENTS_ENVIRONMENT', 'PAYMENTS_BASE_URL', 'PAYMENTS_SECRET_KEY', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_TASK_QUEUE', 'PAYLOAD_ENCRYPTION_KEYS', 'CODEC_SERVER_TOKEN'];
    for (const name of ['worker', 'webhooks', 'codec-server']) {
      const env = services[name].environment ?? {};
      for (const v of required) expect(env).toHaveProperty(v);
      for (const v of Object.keys(env)) expect(known.has(v)).toBe(true);
      expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
    }
  });

  it('publishes the ports the code defaults to', () => {
    const published = (name: string) => (services[name].ports ?? []).map((p) => Number(p.split(':')[0]));
    expect(published('temporal')).toContain(Number(defaults.temporal.address.split(':')[1]));
    expect(published('temporal-ui')).toContain(defaults.temporal.uiPort);
    expect(published('codec-server')).toContain(defaults.codec.port);
    expect(published('webhooks')).toContain(defaults.webhooks.port);
    expect(published('sandbox')).toContain(defaults.sandbox.port);
    expect(services['codec-server'].environment?.CODEC_PORT).toBe(String(defaults.codec.port));
    expect(services.webhooks.environment?.WEBHOOK_PORT).toBe(String(defaults.webhooks.port));
    expect(services.sandbox.environment?.SANDBOX_PORT).toBe(String(defaults.sandbox.port));
  });

  it('wires the UI to the codec server and the sandbox to the webhook receiver', () => {
    expect(services['temporal-ui'].environment?.TEMPORAL_CODEC_ENDPOINT).toMatch(new RegExp(`^http://localhost:${defaults.codec.port}/t/`));
    expect(services['codec-server'].environment?.CODEC_CORS_ORIGINS).toContain(`:${defaults.temporal.uiPort}`);
    expect(services.sandbox.environment?.SANDBOX_WEBHOOK_URL).toBe(`http://webhooks:${defaults.webhooks.port}/webhooks`);
  });

  it('registers exactly the search attributes the workflows use', () => {
    const command = ([] as string[]).concat(services['temporal-setup'].command ?? []).join(' ');
    const registered = Object.fromEntries([...command.matchAll(/--name (\w+) --type (\w+)/g)].map((m) => [m[1], m[2]]));
    expect(registered).toEqual(SEARCH_ATTRIBUTE_REGISTRATION);
  });
});

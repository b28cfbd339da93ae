// docker-compose.yml cannot run here (no Docker engine), so this checks that it parses and
// agrees with the code: every service, each app service given only what its process reads (and
// each secret only to the services that read it: src/config/processes.ts), the ports and entry points,
// current Temporal images (no auto-setup), healthchecks, and the worker's stop grace.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { randomBytes } from 'node:crypto';
import { EMBEDDED_DEFAULTS, loadConfig } from '../../src/config/config';
import {
  loadProcessConfig,
  processSecretVariables,
  processVariables,
  SECRET_VARIABLES,
  type ProcessKind,
} from '../../src/config/processes';
import { SEARCH_ATTRIBUTE_REGISTRATION } from '../../src/shared/search-attributes';
import { WORKER_SHUTDOWN_GRACE_MS, WORKER_STOP_GRACE_S } from '../../src/shared/activity-timeouts';
import { PRODUCTION_WORKER_COMMAND } from '../../src/shared/workflow-stack-traces';

const root = join(__dirname, '..', '..');
type Service = {
  profiles?: string[];
  image?: string;
  build?: unknown;
  command?: string[] | string;
  entrypoint?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition?: string }>;
  volumes?: string[];
  healthcheck?: { test?: string[] };
  restart?: string;
  stop_grace_period?: string;
};
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const services = compose.services;
const defaults = loadConfig({});

/** The process of src/config/processes.ts each app service runs (the sandbox's variables are its own). */
const COMPOSE_PROCESS = {
  worker: 'worker',
  webhooks: 'receiver',
  'codec-server': 'codec',
  'search-attributes': 'admin',
} as const satisfies Record<string, ProcessKind>;
type ComposeProcess = (typeof COMPOSE_PROCESS)[keyof typeof COMPOSE_PROCESS];

describe('the docker-compose deployment', () => {
  it('names every service of the deployment', () => {
    expect(Object.keys(services).sort()).toEqual(
      [
        'codec-server',
        'grafana',
        'postgresql',
        'prometheus',
        'sandbox',
        'search-attributes',
        'temporal',
        'temporal-namespace',
        'temporal-schema',
        'temporal-ui',
        'webhooks',
        'worker',
      ].sort(),
    );
    expect(services.temporal.environment?.DB).toBe('postgres12');
  });

  it('runs current Temporal images, never the deprecated auto-setup image, each pinned to a version', () => {
    const text = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
    expect(text).not.toMatch(/image:\s*\S*auto-setup/);
    for (const service of Object.values(services)) expect(service.image ?? '').not.toContain('auto-setup');
    expect(services.temporal.image).toMatch(/^temporalio\/server:/);
    expect(services['temporal-ui'].image).toMatch(/^temporalio\/ui:/);
    for (const name of ['temporal-schema', 'temporal-namespace'])
      expect(services[name].image).toMatch(/^temporalio\/admin-tools:/);
    for (const [name, service] of Object.entries(services)) {
      if (service.build) continue; // our own image
      expect(`${name} ${service.image}`).toMatch(/:(v?\d|\$\{[A-Z_]+:-v?\d)/); // a version tag (or a variable defaulting to one), never latest
    }
  });

  it('sets Temporal up in order: schema (admin-tools), server, namespace (admin-tools), search attributes, then the app', () => {
    const completed = (name: string, dep: string) =>
      expect(services[name].depends_on?.[dep]?.condition).toBe('service_completed_successfully');
    const healthy = (name: string, dep: string) =>
      expect(services[name].depends_on?.[dep]?.condition).toBe('service_healthy');
    healthy('temporal-schema', 'postgresql');
    completed('temporal', 'temporal-schema');
    healthy('temporal-namespace', 'temporal');
    completed('search-attributes', 'temporal-namespace');
    for (const name of ['worker', 'webhooks', 'codec-server']) completed(name, 'search-attributes');
    for (const [name, script] of [
      ['temporal-schema', 'setup-schema.sh'],
      ['temporal-namespace', 'create-namespace.sh'],
    ]) {
      expect(services[name].command).toEqual([`/deploy/${script}`]);
      expect(services[name].volumes).toContain('./deploy/temporal:/deploy:ro');
      const path = join(root, 'deploy', 'temporal', script);
      expect(statSync(path).mode & 0o111).not.toBe(0);
      expect(readFileSync(path, 'utf8')).toMatch(/^#!\/bin\/sh\nset -eu|^#!\/bin\/sh\n(#.*\n)*set -eu/);
    }
    // The schema script takes its password from the environment, never from a file.
    expect(services['temporal-schema'].environment?.SQL_PASSWORD).toBe('${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}');
  });

  it('gives every long-running service a healthcheck (one-shots have none)', () => {
    const oneShots = ['temporal-schema', 'temporal-namespace', 'search-attributes'];
    for (const [name, service] of Object.entries(services)) {
      if (oneShots.includes(name)) {
        expect(service.restart).toMatch(/^on-failure/);
        continue;
      }
      expect(`${name}: ${JSON.stringify(service.healthcheck?.test ?? null)}`).toMatch(/: \["CMD/);
    }
    // The app's own HTTP health routes: the receiver's and codec server's /healthz, the worker's /readyz.
    expect(services.webhooks.healthcheck?.test?.join(' ')).toContain(`127.0.0.1:${defaults.webhooks.port}/healthz`);
    expect(services['codec-server'].healthcheck?.test?.join(' ')).toContain(`127.0.0.1:${defaults.codec.port}/healthz`);
    expect(services.worker.healthcheck?.test?.join(' ')).toContain(
      `127.0.0.1:${services.worker.environment?.HEALTH_PORT}/readyz`,
    );
  });

  it('gives the worker longer to stop than its shutdown grace, which outlasts the longest money-moving activity', () => {
    const seconds = Number(/^(\d+)s$/.exec(services.worker.stop_grace_period ?? '')?.[1]);
    expect(seconds).toBeGreaterThanOrEqual(WORKER_STOP_GRACE_S);
    expect(seconds * 1000).toBeGreaterThan(WORKER_SHUTDOWN_GRACE_MS);
  });

  it('starts each app process from an entry point that exists in src', () => {
    const entry: Record<string, string> = {
      worker: 'workers/main',
      webhooks: 'webhooks/main',
      'codec-server': 'codec/main',
      sandbox: 'sandbox/main',
      'search-attributes': 'workers/register-search-attributes',
    };
    for (const [name, file] of Object.entries(entry)) {
      // The worker also preloads the switch of the SDK's per-promise stack capture (src/workers/workflow-stack-traces.ts).
      expect(services[name].command).toEqual(
        name === 'worker' ? PRODUCTION_WORKER_COMMAND : ['node', `dist/${file}.js`],
      );
      expect(existsSync(join(root, 'src', `${file}.ts`))).toBe(true);
    }
    expect(existsSync(join(root, 'src', 'workers', 'workflow-stack-traces.ts'))).toBe(true);
  });

  it('gives each app service only variables its process reads, and every secret its process requires', () => {
    // What no process can do without (a missing one would fall back to a development value).
    const required: Record<ComposeProcess, string[]> = {
      worker: ['PAYMENTS_SECRET_KEY', 'PAYLOAD_ENCRYPTION_KEYS', 'CLAIM_CHECK_DATABASE_URL', 'CLAIM_CHECK_KEYS'],
      receiver: ['PAYMENTS_SECRET_KEY', 'PAYLOAD_ENCRYPTION_KEYS'],
      codec: ['CODEC_SERVER_TOKEN', 'PAYLOAD_ENCRYPTION_KEYS'],
      admin: [],
    };
    for (const [name, kind] of Object.entries(COMPOSE_PROCESS)) {
      const env = services[name].environment ?? {};
      const reads = new Set(processVariables(kind));
      for (const v of Object.keys(env))
        expect(`${name}: ${v} ${reads.has(v) ? 'read' : 'not read'}`).toBe(`${name}: ${v} read`);
      for (const v of required[kind]) expect(env).toHaveProperty(v);
      expect(env.TEMPORAL_ADDRESS ?? '${TEMPORAL_ADDRESS:-temporal:7233}').toBe('${TEMPORAL_ADDRESS:-temporal:7233}');
    }
    for (const name of ['worker', 'webhooks', 'search-attributes'])
      expect(services[name].environment).toHaveProperty('TEMPORAL_ADDRESS');
    // The sandbox is another process with its own variables (src/sandbox/main.ts, docs/sandbox.md): SANDBOX_*,
    // and the production-mode ones it reads to refuse to start in production (the image says NODE_ENV=production).
    for (const v of Object.keys(services.sandbox.environment ?? {}))
      expect(v).toMatch(/^(SANDBOX_\w+|DEPLOYMENT|NODE_ENV)$/);
    expect(services.sandbox.environment).toMatchObject({
      DEPLOYMENT: '${DEPLOYMENT:-development}',
      NODE_ENV: '${NODE_ENV:-development}',
    });
  });

  it("gives each app service a subset of its process's secrets: no payments or claim-check key in the codec server", () => {
    for (const [name, kind] of Object.entries(COMPOSE_PROCESS)) {
      const own = new Set(processSecretVariables(kind));
      const given = Object.keys(services[name].environment ?? {}).filter((v) =>
        (SECRET_VARIABLES as readonly string[]).includes(v),
      );
      for (const v of given)
        expect(`${name}: ${v} ${own.has(v) ? 'its own' : 'not its own'}`).toBe(`${name}: ${v} its own`);
    }
    const codec = services['codec-server'].environment ?? {};
    for (const v of ['PAYMENTS_SECRET_KEY', 'CLAIM_CHECK_KEYS', 'CLAIM_CHECK_DATABASE_URL', 'TEMPORAL_API_KEY'])
      expect(codec).not.toHaveProperty(v);
  });

  it('hands each secret of the environment only to the services that read it', () => {
    // Which services' variables interpolate each secret (${NAME:?…} or ${NAME:-…}), whatever the variable is called there.
    const holders = (secret: string) =>
      Object.entries(services)
        .filter(([, s]) => Object.values(s.environment ?? {}).some((v) => String(v).includes(`\${${secret}:`)))
        .map(([name]) => name)
        .sort();
    expect(
      Object.fromEntries(
        [
          'PAYMENTS_SECRET_KEY',
          'PAYLOAD_ENCRYPTION_KEYS',
          'CODEC_SERVER_TOKEN',
          'CODEC_PATH_TOKEN',
          'CLAIM_CHECK_KEYS',
          'CLAIM_CHECK_DB_PASSWORD',
          'TEMPORAL_API_KEY',
          'POSTGRES_PASSWORD',
          'SANDBOX_ADMIN_TOKEN',
        ].map((secret) => [secret, holders(secret)]),
      ),
    ).toEqual({
      // The sandbox stands in for the payments service: it signs with the same key (SANDBOX_SECRET_KEYS).
      PAYMENTS_SECRET_KEY: ['sandbox', 'webhooks', 'worker'],
      PAYLOAD_ENCRYPTION_KEYS: ['codec-server', 'webhooks', 'worker'],
      CODEC_SERVER_TOKEN: ['codec-server'],
      // The Web UI's capability: the UI's endpoint and the codec server that accepts it.
      CODEC_PATH_TOKEN: ['codec-server', 'temporal-ui'],
      CLAIM_CHECK_KEYS: ['worker'],
      CLAIM_CHECK_DB_PASSWORD: ['postgresql', 'worker'],
      TEMPORAL_API_KEY: ['search-attributes', 'webhooks', 'worker'],
      POSTGRES_PASSWORD: ['postgresql', 'temporal', 'temporal-schema'],
      SANDBOX_ADMIN_TOKEN: ['sandbox'],
    });
  });

  it("gives each app service an environment its process's own config accepts", () => {
    const values: Record<string, string> = {
      PAYMENTS_SECRET_KEY: `sandbox_sk_${randomBytes(8).toString('hex')}`,
      PAYLOAD_ENCRYPTION_KEYS: `compose-1:${randomBytes(32).toString('base64')}`,
      CLAIM_CHECK_KEYS: `compose-cc-1:${randomBytes(32).toString('base64')}`,
      CODEC_SERVER_TOKEN: randomBytes(16).toString('hex'),
      CODEC_PATH_TOKEN: randomBytes(24).toString('hex'),
      CLAIM_CHECK_DB_PASSWORD: randomBytes(8).toString('hex'),
    };
    // Compose's interpolation: ${NAME:?message} takes the value set above, ${NAME:-default} its default.
    const interpolate = (text: string) =>
      text.replace(/\$\{(\w+)(?::\?[^}]*|:-([^}]*))\}/g, (_, name: string, fallback?: string) => {
        if (fallback !== undefined) return fallback;
        if (!(name in values)) throw new Error(`no test value for required ${name}`);
        return values[name];
      });
    for (const [name, kind] of Object.entries(COMPOSE_PROCESS)) {
      const env = Object.fromEntries(
        Object.entries(services[name].environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]),
      );
      expect(() => loadProcessConfig(kind, env)).not.toThrow();
    }
  });

  /** "[address:]published:container" with the address possibly a ${VAR:-default} expression. */
  const portBindings = (name: string) =>
    (services[name].ports ?? []).map((p) => {
      const m = /^(?:(.+):)?(\d+):(\d+)$/.exec(p);
      if (!m) throw new Error(`unexpected port syntax in ${name}: ${p}`);
      return { address: m[1], published: Number(m[2]), container: Number(m[3]) };
    });

  it('binds every published port to 127.0.0.1 unless BIND_ADDRESS says otherwise', () => {
    const withPorts = Object.keys(services).filter((name) => (services[name].ports ?? []).length > 0);
    expect(withPorts.sort()).toEqual([
      'codec-server',
      'grafana',
      'prometheus',
      'sandbox',
      'temporal',
      'temporal-ui',
      'webhooks',
    ]);
    for (const name of withPorts) {
      for (const binding of portBindings(name)) expect(binding.address).toBe('${BIND_ADDRESS:-127.0.0.1}');
    }
    // PostgreSQL is reached only over the compose network.
    expect(services.postgresql.ports).toBeUndefined();
  });

  it('requires every secret from the environment and never carries a value or the embedded dev defaults', () => {
    const text = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
    const appEnv = services.worker.environment ?? {};
    expect(appEnv.PAYMENTS_SECRET_KEY).toBe('${PAYMENTS_SECRET_KEY:?set PAYMENTS_SECRET_KEY}');
    expect(appEnv.PAYLOAD_ENCRYPTION_KEYS).toBe('${PAYLOAD_ENCRYPTION_KEYS:?set PAYLOAD_ENCRYPTION_KEYS}');
    expect(services['codec-server'].environment?.CODEC_SERVER_TOKEN).toBe(
      '${CODEC_SERVER_TOKEN:?set CODEC_SERVER_TOKEN}',
    );
    expect(appEnv.CLAIM_CHECK_KEYS).toBe('${CLAIM_CHECK_KEYS:?set CLAIM_CHECK_KEYS}');
    expect(appEnv.CLAIM_CHECK_DATABASE_URL).toBe(
      'postgres://claimcheck:${CLAIM_CHECK_DB_PASSWORD:?set CLAIM_CHECK_DB_PASSWORD}@postgresql:5432/claimcheck',
    );
    expect(services.sandbox.environment?.SANDBOX_ADMIN_TOKEN).toBe('${SANDBOX_ADMIN_TOKEN:?set SANDBOX_ADMIN_TOKEN}');
    expect(services.postgresql.environment?.POSTGRES_PASSWORD).toBe('${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}');
    expect(services.postgresql.environment?.CLAIM_CHECK_DB_PASSWORD).toBe(
      '${CLAIM_CHECK_DB_PASSWORD:?set CLAIM_CHECK_DB_PASSWORD}',
    );
    for (const value of Object.values(EMBEDDED_DEFAULTS)) {
      if (value !== EMBEDDED_DEFAULTS.baseUrl) expect(text).not.toContain(value);
    }
  });

  it('creates the claim-check database and its own user in the compose PostgreSQL', () => {
    expect(services.postgresql.volumes).toContain('./deploy/postgres-init:/docker-entrypoint-initdb.d:ro');
    const script = readFileSync(join(root, 'deploy', 'postgres-init', '10-claimcheck.sh'), 'utf8');
    expect(script).toMatch(/CREATE ROLE claimcheck LOGIN PASSWORD :'claimcheck_password'/);
    expect(script).toMatch(/CREATE DATABASE claimcheck OWNER claimcheck/);
    expect(script).toContain('claimcheck_password="$CLAIM_CHECK_DB_PASSWORD"');
    expect(services.worker.depends_on).toHaveProperty('postgresql');
  });

  it('stays out of production mode by default and says so (the sandbox and a plaintext Temporal)', () => {
    const appEnv = services.worker.environment ?? {};
    expect(appEnv.DEPLOYMENT).toBe('${DEPLOYMENT:-development}');
    // The image sets NODE_ENV=production, which alone would switch production mode on.
    expect(appEnv.NODE_ENV).toBe('${NODE_ENV:-development}');
    expect(appEnv.CLAIM_CHECK_EMBEDDED).toBe('false');
  });

  it('publishes the ports the code defaults to', () => {
    const published = (name: string) => portBindings(name).map((b) => b.published);
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
    // No login, so no access token to forward: the path capability (CODEC_PATH_TOKEN), never the
    // codec token, leads the endpoint (test/security/compose-web-ui.test.ts decodes with it in a browser).
    const ui = services['temporal-ui'].environment ?? {};
    expect(ui.TEMPORAL_CODEC_ENDPOINT).toBe(
      `http://localhost:${defaults.codec.port}/t/\${CODEC_PATH_TOKEN:?set CODEC_PATH_TOKEN}`,
    );
    expect(ui.TEMPORAL_CODEC_PASS_ACCESS_TOKEN).toBe('false');
    expect(JSON.stringify(ui)).not.toMatch(/CODEC_SERVER_TOKEN/);
    expect(services['codec-server'].environment?.CODEC_CORS_ORIGINS).toContain(`:${defaults.temporal.uiPort}`);
    expect(services.sandbox.environment?.SANDBOX_WEBHOOK_URL).toBe(
      `http://webhooks:${defaults.webhooks.port}/webhooks`,
    );
  });

  it('registers the search attributes from the code (SEARCH_ATTRIBUTE_REGISTRATION), never from a second list in this file', () => {
    expect(services['search-attributes'].command).toEqual(['node', 'dist/workers/register-search-attributes.js']);
    const text = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
    for (const name of Object.keys(SEARCH_ATTRIBUTE_REGISTRATION)) expect(text).not.toContain(name);
    // What the program registers is tested against a real server in test/ship/search-attributes.test.ts.
  });
});

describe('the observability profile of docker-compose', () => {
  const scrapeConfig = parse(readFileSync(join(root, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8')) as {
    rule_files: string[];
    scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
  };
  const hostPath = (volume: string) => volume.split(':')[0];
  const mountOf = (service: string, target: string) =>
    (services[service].volumes ?? []).find((v) => v.split(':')[1] === target);

  it('adds Prometheus and Grafana under the `observability` profile only, both pinned and bound to BIND_ADDRESS', () => {
    const profiled = Object.entries(services).filter(([, s]) => s.profiles);
    expect(profiled.map(([name, s]) => `${name}:${s.profiles!.join(',')}`).sort()).toEqual([
      'grafana:observability',
      'prometheus:observability',
    ]);
    expect(services.prometheus.image).toMatch(/^prom\/prometheus:\$\{PROMETHEUS_VERSION:-v\d+\.\d+\.\d+\}$/);
    expect(services.grafana.image).toMatch(/^grafana\/grafana:\$\{GRAFANA_VERSION:-\d+\.\d+\.\d+\}$/);
    expect(services.grafana.depends_on?.prometheus?.condition).toBe('service_healthy');
  });

  it('mounts only files and folders that exist in the repository', () => {
    for (const name of ['prometheus', 'grafana']) {
      const binds = (services[name].volumes ?? []).filter((v) => v.startsWith('./'));
      expect(binds.length).toBeGreaterThan(0);
      for (const v of binds) {
        expect(`${name}: ${hostPath(v)} ${existsSync(join(root, hostPath(v))) ? 'exists' : 'missing'}`).toBe(
          `${name}: ${hostPath(v)} exists`,
        );
        expect(v.endsWith(':ro')).toBe(true);
      }
    }
  });

  it('sets METRICS_PORT on every app process, on all interfaces of the compose network, never published', () => {
    for (const name of ['worker', 'webhooks', 'codec-server']) {
      const env = services[name].environment ?? {};
      expect(env.METRICS_PORT).toBe('9464');
      expect(env.METRICS_HOST).toBe('0.0.0.0');
      const { METRICS_PORT, METRICS_HOST } = env;
      expect(loadConfig({ METRICS_PORT, METRICS_HOST }).observability.metrics).toEqual({ host: '0.0.0.0', port: 9464 });
      expect((services[name].ports ?? []).some((p) => p.endsWith(':9464'))).toBe(false);
    }
  });

  it('scrapes each app process on its METRICS_PORT under the job names the alert rules use, with the rules loaded', () => {
    const jobs = Object.fromEntries(
      scrapeConfig.scrape_configs.map((c) => [c.job_name, c.static_configs.flatMap((s) => s.targets)]),
    );
    expect(jobs).toEqual({
      'payflow-worker': ['worker:9464'],
      'payflow-webhooks': ['webhooks:9464'],
      'payflow-codec-server': ['codec-server:9464'],
    });
    const alerts = readFileSync(join(root, 'deploy', 'prometheus', 'alerts.yml'), 'utf8');
    for (const job of [...alerts.matchAll(/job="([^"]+)"/g)].map((m) => m[1])) expect(Object.keys(jobs)).toContain(job);
    for (const rule of scrapeConfig.rule_files) {
      const mount = mountOf('prometheus', rule);
      expect(mount && hostPath(mount)).toBe('./deploy/prometheus/alerts.yml');
    }
    expect(hostPath(mountOf('prometheus', '/etc/prometheus/prometheus.yml')!)).toBe(
      './deploy/prometheus/prometheus.yml',
    );
  });

  it('provisions Grafana with the compose Prometheus and both dashboards (payflow and the Temporal SDK)', () => {
    const datasources = parse(
      readFileSync(
        join(root, hostPath(mountOf('grafana', '/etc/grafana/provisioning/datasources')!), 'prometheus.yml'),
        'utf8',
      ),
    ) as { datasources: { type: string; url: string; isDefault: boolean }[] };
    expect(datasources.datasources).toEqual([
      expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090', isDefault: true }),
    ]);
    const providers = parse(
      readFileSync(
        join(root, hostPath(mountOf('grafana', '/etc/grafana/provisioning/dashboards')!), 'payflow.yml'),
        'utf8',
      ),
    ) as { providers: { type: string; options: { path: string } }[] };
    const dashboardDir = providers.providers[0].options.path;
    const dashboards = (services.grafana.volumes ?? [])
      .filter((v) => v.split(':')[1].startsWith(`${dashboardDir}/`))
      .map((v) => JSON.parse(readFileSync(join(root, hostPath(v)), 'utf8')) as { uid: string; title: string });
    expect(dashboards.map((d) => d.uid).sort()).toEqual(['payflow-temporal', 'payflow-temporal-sdk']);
  });
});

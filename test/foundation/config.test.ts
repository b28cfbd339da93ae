import { join } from 'node:path';
import {
  ConfigError,
  loadConfig,
  EMBEDDED_DEFAULTS,
  DEV_SECRET_VARIABLES,
  envSchema,
  WORKER_TUNING_DEFAULTS,
} from '../../src/config/config';
import {
  HTTP_TIMEOUT_MARGIN_MS,
  MAX_HTTP_TIMEOUT_MS,
  SERVICE_ACTIVITY_START_TO_CLOSE_MS,
} from '../../src/shared/activity-timeouts';
import {
  describeTemporalConnection,
  temporalConnectionOptions,
  TemporalTlsFileError,
} from '../../src/temporal/connection';
import {
  configIssues as issuesOf,
  configIssueVariables as variablesOf,
  productionEnv,
  tempFiles,
  testKey as key,
} from '../support/config';

describe('configuration from the environment', () => {
  it('starts on embedded defaults with no environment at all', () => {
    const c = loadConfig({});
    expect(c.payments.baseUrl).toBe(EMBEDDED_DEFAULTS.baseUrl);
    expect(c.payments.secretKey.startsWith('sandbox_sk_')).toBe(true);
    expect(c.temporal).toMatchObject({
      address: '127.0.0.1:7233',
      namespace: 'default',
      taskQueue: 'payments',
      uiPort: 8233,
    });
    expect(c.encryption.keys[0].key).toHaveLength(32);
    expect(c.encryption.activeKeyId).toBe(c.encryption.keys[0].id);
  });

  it('refuses a sandbox key on the production host, naming the variable', () => {
    const issues = issuesOf({
      PAYMENTS_BASE_URL: 'https://api-d.squadco.com',
      PAYMENTS_ENVIRONMENT: 'production',
      PAYMENTS_SECRET_KEY: 'sandbox_sk_abc12345',
    });
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ variable: 'PAYMENTS_SECRET_KEY', message: expect.stringContaining('sandbox key') }),
      ]),
    );
  });

  it('refuses a live key on the test host', () => {
    const issues = issuesOf({ PAYMENTS_SECRET_KEY: 'sk_live_0123456789' });
    expect(issues).toEqual([
      expect.objectContaining({
        variable: 'PAYMENTS_SECRET_KEY',
        message: expect.stringContaining('live key is refused on the test host'),
      }),
    ]);
  });

  it('refuses the production host unless the environment says production', () => {
    const issues = issuesOf({
      PAYMENTS_BASE_URL: 'https://api-d.squadco.com',
      PAYMENTS_SECRET_KEY: 'sk_live_0123456789',
    });
    expect(issues.map((i) => i.variable)).toContain('PAYMENTS_ENVIRONMENT');
  });

  it('refuses every embedded development secret and an unprotected Temporal connection on the live host', () => {
    const issues = issuesOf({
      PAYMENTS_ENVIRONMENT: 'production',
      PAYMENTS_BASE_URL: 'https://api-d.squadco.com',
      PAYMENTS_SECRET_KEY: 'sk_live_0123456789',
    });
    expect(issues.map((i) => i.variable).sort()).toEqual([
      'CLAIM_CHECK_DATABASE_URL',
      'CLAIM_CHECK_KEYS',
      'CODEC_CORS_ORIGINS',
      'CODEC_SERVER_TOKEN',
      'PAYLOAD_ENCRYPTION_KEYS',
      'RETURN_LINK_KEY',
      'TEMPORAL_TLS',
    ]);
  });

  it('accepts a complete production configuration', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const c = loadConfig({
      PAYMENTS_ENVIRONMENT: 'production',
      PAYMENTS_BASE_URL: 'https://api-d.squadco.com/',
      PAYMENTS_SECRET_KEY: 'sk_live_0123456789',
      PAYLOAD_ENCRYPTION_KEYS: `k2:${key},k1:${Buffer.alloc(32, 1).toString('base64')}`,
      PAYLOAD_ENCRYPTION_KEY_ID: 'k1',
      CODEC_SERVER_TOKEN: 'a-long-random-codec-token-of-40-characters',
      CODEC_CORS_ORIGINS: 'https://temporal-ui.example.com',
      RETURN_LINK_KEY: 'a-long-random-return-link-key-of-40-chars',
      CLAIM_CHECK_KEYS: `cc1:${Buffer.alloc(32, 9).toString('base64')}`,
      CLAIM_CHECK_DATABASE_URL: 'postgres://claimcheck:s3cret@db.internal:5432/claimcheck',
      TEMPORAL_TLS: 'true',
    });
    expect(c.production).toBe(true);
    expect(c.payments.baseUrl).toBe('https://api-d.squadco.com');
    expect(c.encryption.keys.map((k) => k.id)).toEqual(['k2', 'k1']);
    expect(c.encryption.activeKeyId).toBe('k1');
    expect(c.sandbox.enabled).toBe(false);
  });

  it.each([
    [{ SANDBOX_PORT: '70000' }, 'SANDBOX_PORT'],
    [{ WEBHOOK_PORT: 'abc' }, 'WEBHOOK_PORT'],
    [{ TEMPORAL_ADDRESS: 'no-port' }, 'TEMPORAL_ADDRESS'],
    [{ PAYMENTS_BASE_URL: 'ftp://x' }, 'PAYMENTS_BASE_URL'],
    [{ PAYLOAD_ENCRYPTION_KEYS: 'k1:c2hvcnQ=' }, 'PAYLOAD_ENCRYPTION_KEYS'],
    [{ PAYLOAD_ENCRYPTION_KEY_ID: 'nope' }, 'PAYLOAD_ENCRYPTION_KEY_ID'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ PAYMENTS_PATH_CHARGE_TOKEN: 'no-slash' }, 'PAYMENTS_PATH_CHARGE_TOKEN'],
  ])('fails on %j naming %s', (env, variable) => {
    const issues = issuesOf(env);
    expect(issues.map((i) => i.variable)).toContain(variable);
    expect(issues.every((i) => i.message.length > 0)).toBe(true);
  });

  it('refuses an HTTP timeout the service activities could not outlast, naming both settings', () => {
    const err = (() => {
      try {
        loadConfig({ PAYMENTS_TIMEOUT_MS: String(MAX_HTTP_TIMEOUT_MS + 1) });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.issues).toEqual([
      { variable: 'PAYMENTS_TIMEOUT_MS', message: expect.stringContaining('SERVICE_ACTIVITY_START_TO_CLOSE_MS') },
    ]);
    expect(
      loadConfig({ PAYMENTS_TIMEOUT_MS: String(MAX_HTTP_TIMEOUT_MS) }).payments.timeoutMs + HTTP_TIMEOUT_MARGIN_MS,
    ).toBeLessThanOrEqual(SERVICE_ACTIVITY_START_TO_CLOSE_MS);
  });

  it('never echoes a secret value in its error', () => {
    try {
      loadConfig({ PAYMENTS_SECRET_KEY: 'sk_live_supersecretvalue' });
      throw new Error('should fail');
    } catch (err) {
      expect((err as Error).message).not.toContain('supersecretvalue');
    }
  });

  it('maps path overrides for the "not shown" operations', () => {
    const c = loadConfig({ PAYMENTS_PATH_CHARGE_TOKEN: '/v2/charge', PAYMENTS_PATH_KEY_EXCHANGE: '/pos/keys' });
    expect(c.payments.paths).toEqual({ chargeToken: '/v2/charge', keyExchange: '/pos/keys' });
  });

  describe('production mode (docs/security.md)', () => {
    /** A complete production-mode environment against the payments test host (a staging deployment). */
    const PROD = productionEnv({ TEMPORAL_API_KEY: 'temporal-api-key-do-not-log' });

    it('accepts the complete staging environment', () => {
      const c = loadConfig(PROD);
      expect(c.production).toBe(true);
      expect(c.payments.environment).toBe('test');
      expect(c.temporal.apiKey).toBe(PROD.TEMPORAL_API_KEY);
      expect(c.temporal.tls).toEqual({});
    });

    it.each([
      [{ NODE_ENV: 'production' }],
      [{ DEPLOYMENT: 'production' }],
      [
        {
          PAYMENTS_ENVIRONMENT: 'production',
          PAYMENTS_BASE_URL: 'https://api-d.squadco.com',
          PAYMENTS_SECRET_KEY: 'sk_live_0123456789',
        },
      ],
    ])('is switched on by %j', (switchOn) => {
      const { DEPLOYMENT: _unused, ...rest } = PROD;
      expect(loadConfig({ ...rest, ...switchOn }).production).toBe(true);
      // ... and then refuses the embedded codec token.
      expect(variablesOf({ ...rest, ...switchOn, CODEC_SERVER_TOKEN: EMBEDDED_DEFAULTS.codecToken })).toEqual([
        'CODEC_SERVER_TOKEN',
      ]);
    });

    it('is off by default and for NODE_ENV values other than production', () => {
      expect(loadConfig({}).production).toBe(false);
      expect(loadConfig({ NODE_ENV: 'development', DEPLOYMENT: 'development' }).production).toBe(false);
      expect(variablesOf({ DEPLOYMENT: 'prod' })).toEqual(['DEPLOYMENT']);
    });

    it('lists a refusal for every embedded development secret', () => {
      const secrets = Object.keys(EMBEDDED_DEFAULTS).filter((name) => name !== 'baseUrl');
      expect(Object.values(DEV_SECRET_VARIABLES)).toEqual(expect.arrayContaining(secrets));
    });

    it.each(Object.entries(DEV_SECRET_VARIABLES).filter(([, name]) => name in EMBEDDED_DEFAULTS))(
      'refuses the embedded %s, whether defaulted or copied in',
      (variable, name) => {
        // Left unset: refused when the schema's default is the embedded value.
        const { [variable]: _own, ...withoutIt } = PROD;
        const defaulted = (
          envSchema.shape as Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown } }>
        )[variable]?.safeParse(undefined);
        if (defaulted?.success && defaulted.data !== undefined) expect(variablesOf(withoutIt)).toContain(variable);
        const copied = issuesOf({ ...PROD, [variable]: (EMBEDDED_DEFAULTS as Record<string, string>)[name] });
        expect(copied).toContainEqual({
          variable,
          message: expect.stringContaining('embedded development value is refused in production'),
        });
        expect(JSON.stringify(copied)).not.toContain((EMBEDDED_DEFAULTS as Record<string, string>)[name]);
      },
    );

    it('needs no sandbox admin token (it runs no sandbox), refuses the development one when set, and a short one anywhere', () => {
      expect(loadConfig(PROD).sandbox.enabled).toBe(false);
      expect(variablesOf({ ...PROD, SANDBOX_ADMIN_TOKEN: EMBEDDED_DEFAULTS.sandboxAdminToken })).toEqual([
        'SANDBOX_ADMIN_TOKEN',
      ]);
      expect(loadConfig({ ...PROD, SANDBOX_ADMIN_TOKEN: 'a-production-rehearsal-token' }).sandbox.adminToken).toBe(
        'a-production-rehearsal-token',
      );
      expect(variablesOf({ SANDBOX_ADMIN_TOKEN: 'short' })).toEqual(['SANDBOX_ADMIN_TOKEN']);
      expect(loadConfig({}).sandbox.adminToken).toBe(EMBEDDED_DEFAULTS.sandboxAdminToken);
    });

    it('refuses an embedded key listed under another id, and accepts it outside production', () => {
      const devKey = EMBEDDED_DEFAULTS.encryptionKeys.split(':')[1];
      expect(variablesOf({ ...PROD, PAYLOAD_ENCRYPTION_KEYS: `p2:${key(3)},renamed:${devKey}` })).toEqual([
        'PAYLOAD_ENCRYPTION_KEYS',
      ]);
      expect(loadConfig({ PAYLOAD_ENCRYPTION_KEYS: `renamed:${devKey}` }).encryption.activeKeyId).toBe('renamed');
    });

    it('requires https for PAYMENTS_BASE_URL', () => {
      expect(issuesOf({ ...PROD, PAYMENTS_BASE_URL: 'http://payments.internal:4010' })).toEqual([
        { variable: 'PAYMENTS_BASE_URL', message: 'must be an https:// URL in production' },
      ]);
      expect(loadConfig({ PAYMENTS_BASE_URL: 'http://payments.internal:4010' }).payments.baseUrl).toBe(
        'http://payments.internal:4010',
      );
    });

    it('requires https for webhook URL settings, known to the schema or not', () => {
      expect(
        variablesOf({
          ...PROD,
          WEBHOOK_PUBLIC_URL: 'http://hooks.example.com/webhooks',
          SANDBOX_WEBHOOK_URL: 'http://webhooks:4020/webhooks',
        }).sort(),
      ).toEqual(['SANDBOX_WEBHOOK_URL', 'WEBHOOK_PUBLIC_URL']);
      expect(
        loadConfig({ ...PROD, WEBHOOK_PUBLIC_URL: 'https://hooks.example.com/webhooks', SANDBOX_WEBHOOK_URL: 'none' })
          .production,
      ).toBe(true);
      expect(loadConfig({ SANDBOX_WEBHOOK_URL: 'http://127.0.0.1:4020/webhooks' }).production).toBe(false);
    });

    it('keeps the sandbox off: default false, true refused', () => {
      expect(loadConfig(PROD).sandbox.enabled).toBe(false);
      expect(loadConfig({}).sandbox.enabled).toBe(true);
      expect(loadConfig({ SANDBOX_ENABLED: 'false' }).sandbox.enabled).toBe(false);
      expect(variablesOf({ ...PROD, SANDBOX_ENABLED: 'true' })).toEqual(['SANDBOX_ENABLED']);
    });
  });

  describe('Temporal connection: TLS and API key', () => {
    const { dir, file } = tempFiles('payflow-tls-');
    const ca = file('ca.pem', 'CA-PEM');
    const cert = file('client.pem', 'CERT-PEM');
    const keyPath = file('client.key', 'KEY-PEM');
    const missing = join(dir, 'secret-location', 'nope.key');
    /** A production-mode environment that says nothing about the Temporal connection. */
    const PROD_NO_TEMPORAL = productionEnv();

    it('is plaintext by default outside production', () => {
      const c = loadConfig({});
      expect(c.temporal.tls).toBeUndefined();
      expect(c.temporal.apiKey).toBeUndefined();
      expect(temporalConnectionOptions(c.temporal)).toEqual({ address: '127.0.0.1:7233' });
    });

    it('refuses production without TLS or an API key, naming TEMPORAL_TLS', () => {
      expect(issuesOf(PROD_NO_TEMPORAL)).toEqual([
        { variable: 'TEMPORAL_TLS', message: expect.stringContaining('TEMPORAL_API_KEY') },
      ]);
      expect(
        issuesOf({ ...PROD_NO_TEMPORAL, TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k-123456' }).map((i) => i.variable),
      ).toEqual(['TEMPORAL_TLS']);
    });

    it.each([
      ['TEMPORAL_TLS=true', { TEMPORAL_TLS: 'true' }],
      ['a server CA', { TEMPORAL_TLS_CA_PATH: ca }],
      ['a client certificate and key', { TEMPORAL_TLS_CERT_PATH: cert, TEMPORAL_TLS_KEY_PATH: keyPath }],
      ['an API key', { TEMPORAL_API_KEY: 'temporal-api-key-do-not-log' }],
    ])('accepts production with %s', (_label, extra) => {
      const c = loadConfig({ ...PROD_NO_TEMPORAL, ...extra });
      expect(c.temporal.tls).toBeDefined();
      expect(describeTemporalConnection(c.temporal).tls).toBe(true);
    });

    it('builds TLS options from the files, with server name and API key', () => {
      const c = loadConfig({
        TEMPORAL_ADDRESS: 'ns.tmprl.cloud:7233',
        TEMPORAL_TLS_CA_PATH: ca,
        TEMPORAL_TLS_CERT_PATH: cert,
        TEMPORAL_TLS_KEY_PATH: keyPath,
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
        TEMPORAL_API_KEY: 'api-key-1',
      });
      const options = temporalConnectionOptions(c.temporal);
      expect(options.address).toBe('ns.tmprl.cloud:7233');
      expect(options.apiKey).toBe('api-key-1');
      expect(options.tls?.serverNameOverride).toBe('temporal.internal');
      expect(Buffer.from(options.tls!.serverRootCACertificate!).toString()).toBe('CA-PEM');
      expect(Buffer.from(options.tls!.clientCertPair!.crt).toString()).toBe('CERT-PEM');
      expect(Buffer.from(options.tls!.clientCertPair!.key).toString()).toBe('KEY-PEM');
      expect(describeTemporalConnection(c.temporal)).toEqual({
        address: 'ns.tmprl.cloud:7233',
        tls: true,
        mtls: true,
        apiKey: true,
      });
      expect(JSON.stringify(describeTemporalConnection(c.temporal))).not.toMatch(/api-key-1|client\.key/);
    });

    it('refuses a certificate without its key (and the reverse) in any mode', () => {
      expect(issuesOf({ TEMPORAL_TLS_CERT_PATH: cert }).map((i) => i.variable)).toEqual(['TEMPORAL_TLS_KEY_PATH']);
      expect(issuesOf({ TEMPORAL_TLS_KEY_PATH: keyPath }).map((i) => i.variable)).toEqual(['TEMPORAL_TLS_CERT_PATH']);
    });

    it('refuses an unreadable TLS file, naming the variable but not the path', () => {
      const issues = issuesOf({ TEMPORAL_TLS_CERT_PATH: cert, TEMPORAL_TLS_KEY_PATH: missing });
      expect(issues).toEqual([{ variable: 'TEMPORAL_TLS_KEY_PATH', message: 'must name a readable PEM file' }]);
      expect(JSON.stringify(issues)).not.toContain('secret-location');
      expect(() => temporalConnectionOptions({ address: 'x:1', tls: { caPath: missing } })).toThrow(
        TemporalTlsFileError,
      );
      expect(() => temporalConnectionOptions({ address: 'x:1', tls: { caPath: missing } })).toThrow(
        /^TEMPORAL_TLS_CA_PATH: the file cannot be read$/,
      );
    });

    it('refuses TEMPORAL_TLS=false next to TLS settings', () => {
      expect(issuesOf({ TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA_PATH: ca }).map((i) => i.variable)).toEqual([
        'TEMPORAL_TLS',
      ]);
    });

    it('never echoes the API key or a key path in an error', () => {
      try {
        loadConfig({
          ...PROD_NO_TEMPORAL,
          TEMPORAL_TLS: 'false',
          TEMPORAL_API_KEY: 'temporal-api-key-do-not-log',
          TEMPORAL_TLS_KEY_PATH: missing,
        });
        throw new Error('should fail');
      } catch (err) {
        expect((err as Error).message).not.toContain('temporal-api-key-do-not-log');
        expect((err as Error).message).not.toContain('secret-location');
      }
    });
  });

  describe('worker tuning (WORKER_*)', () => {
    it('defaults: an auto cache, the fixed tuner with the default slots and pollers, a 10 s sticky queue', () => {
      expect(loadConfig({}).worker).toEqual({
        maxCachedWorkflows: 'auto',
        tuner: {
          kind: 'fixed',
          maxConcurrentWorkflowTaskExecutions: WORKER_TUNING_DEFAULTS.maxConcurrentWorkflowTaskExecutions,
          maxConcurrentActivityTaskExecutions: WORKER_TUNING_DEFAULTS.maxConcurrentActivityTaskExecutions,
          maxConcurrentLocalActivityExecutions: WORKER_TUNING_DEFAULTS.maxConcurrentLocalActivityExecutions,
        },
        workflowPollers: { mode: 'maximum', maximum: WORKER_TUNING_DEFAULTS.workflowPollers },
        activityPollers: { mode: 'maximum', maximum: WORKER_TUNING_DEFAULTS.activityPollers },
        stickyQueueTimeoutMs: 10_000,
      });
    });

    it('parses every field', () => {
      expect(
        loadConfig({
          WORKER_MAX_CACHED_WORKFLOWS: '500',
          WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '60',
          WORKER_MAX_CONCURRENT_ACTIVITIES: '200',
          WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: '20',
          WORKER_WORKFLOW_POLLERS: '30',
          WORKER_ACTIVITY_POLLERS: 'auto',
          WORKER_STICKY_QUEUE_TIMEOUT: '30s',
        }).worker,
      ).toEqual({
        maxCachedWorkflows: 500,
        tuner: {
          kind: 'fixed',
          maxConcurrentWorkflowTaskExecutions: 60,
          maxConcurrentActivityTaskExecutions: 200,
          maxConcurrentLocalActivityExecutions: 20,
        },
        workflowPollers: { mode: 'maximum', maximum: 30 },
        activityPollers: { mode: 'autoscaling' },
        stickyQueueTimeoutMs: 30_000,
      });
      expect(loadConfig({ WORKER_STICKY_QUEUE_TIMEOUT: '2500' }).worker.stickyQueueTimeoutMs).toBe(2_500);
      expect(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '0' }).worker.maxCachedWorkflows).toBe(0);
      expect(
        loadConfig({
          WORKER_TUNER: 'resource-based',
          WORKER_TUNER_TARGET_MEMORY: '0.7',
          WORKER_TUNER_TARGET_CPU: '1',
        }).worker.tuner,
      ).toEqual({ kind: 'resource-based', targetMemoryUsage: 0.7, targetCpuUsage: 1 });
      expect(loadConfig({ WORKER_TUNER: 'resource-based' }).worker.tuner).toEqual({
        kind: 'resource-based',
        targetMemoryUsage: WORKER_TUNING_DEFAULTS.tunerTargetMemory,
        targetCpuUsage: WORKER_TUNING_DEFAULTS.tunerTargetCpu,
      });
    });

    it('keeps unset slots and pollers within a smaller cache or fewer slots that are set', () => {
      const small = loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '20', WORKER_MAX_CONCURRENT_ACTIVITIES: '4' }).worker;
      expect(small.tuner).toMatchObject({
        maxConcurrentWorkflowTaskExecutions: 20,
        maxConcurrentActivityTaskExecutions: 4,
      });
      expect(small.activityPollers).toEqual({ mode: 'maximum', maximum: 4 });
    });

    it('refuses bad values, naming the variable', () => {
      const bad: Record<string, string> = {
        WORKER_MAX_CACHED_WORKFLOWS: '1',
        WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '1',
        WORKER_MAX_CONCURRENT_ACTIVITIES: 'many',
        WORKER_WORKFLOW_POLLERS: '1',
        WORKER_ACTIVITY_POLLERS: '0',
        WORKER_STICKY_QUEUE_TIMEOUT: '10 fortnights',
        WORKER_TUNER: 'magic',
        WORKER_WORKFLOW_STACK_TRACES: 'sometimes',
      };
      for (const [variable, value] of Object.entries(bad)) {
        expect(issuesOf({ [variable]: value }).map((i) => i.variable)).toContain(variable);
      }
      expect(issuesOf({ WORKER_STICKY_QUEUE_TIMEOUT: '500ms' })).toEqual([
        expect.objectContaining({ variable: 'WORKER_STICKY_QUEUE_TIMEOUT', message: expect.stringContaining('1s') }),
      ]);
      for (const share of ['0', '1.5', '-0.2', 'most']) {
        expect(issuesOf({ WORKER_TUNER: 'resource-based', WORKER_TUNER_TARGET_CPU: share })).toEqual([
          expect.objectContaining({ variable: 'WORKER_TUNER_TARGET_CPU' }),
        ]);
      }
    });

    it('refuses the combinations the SDK refuses or silently changes, naming the variable to change', () => {
      // The SDK throws on a tuner next to slot counts.
      expect(
        issuesOf({
          WORKER_TUNER: 'resource-based',
          WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '10',
          WORKER_MAX_CONCURRENT_ACTIVITIES: '10',
          WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: '10',
        }),
      ).toEqual([
        expect.objectContaining({
          variable: 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
          message: expect.stringContaining('WORKER_TUNER=resource-based'),
        }),
        expect.objectContaining({ variable: 'WORKER_MAX_CONCURRENT_ACTIVITIES' }),
        expect.objectContaining({ variable: 'WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES' }),
      ]);
      // The SDK lowers workflow task slots above the cache, with a warning only.
      expect(issuesOf({ WORKER_MAX_CACHED_WORKFLOWS: '50', WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '60' })).toEqual([
        expect.objectContaining({
          variable: 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
          message: expect.stringContaining('WORKER_MAX_CACHED_WORKFLOWS'),
        }),
      ]);
      expect(
        loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '0', WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '60' }).worker.tuner,
      ).toMatchObject({
        maxConcurrentWorkflowTaskExecutions: 60,
      });
      // Pollers beyond the slots would wait for slots that never come.
      expect(issuesOf({ WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '8', WORKER_WORKFLOW_POLLERS: '10' })).toEqual([
        expect.objectContaining({ variable: 'WORKER_WORKFLOW_POLLERS' }),
      ]);
      expect(issuesOf({ WORKER_MAX_CONCURRENT_ACTIVITIES: '5', WORKER_ACTIVITY_POLLERS: '6' })).toEqual([
        expect.objectContaining({ variable: 'WORKER_ACTIVITY_POLLERS' }),
      ]);
      // Tuner targets set but not used.
      expect(issuesOf({ WORKER_TUNER_TARGET_MEMORY: '0.5' })).toEqual([
        expect.objectContaining({
          variable: 'WORKER_TUNER_TARGET_MEMORY',
          message: expect.stringContaining('resource-based'),
        }),
      ]);
    });
  });
});

import { ConfigError, loadConfig, EMBEDDED_DEFAULTS } from '../../src/config/config';

function issuesOf(env: Record<string, string>) {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('expected loadConfig to fail');
}

describe('config', () => {
  it('starts on embedded defaults with no environment at all', () => {
    const c = loadConfig({});
    expect(c.payments.baseUrl).toBe(EMBEDDED_DEFAULTS.baseUrl);
    expect(c.payments.secretKey.startsWith('sandbox_sk_')).toBe(true);
    expect(c.temporal).toMatchObject({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'payments', uiPort: 8233 });
    expect(c.encryption.keys[0].key).toHaveLength(32);
    expect(c.encryption.activeKeyId).toBe(c.encryption.keys[0].id);
  });

  it('refuses a sandbox key on the production host, naming the variable', () => {
    const issues = issuesOf({ PAYMENTS_BASE_URL: 'https://api-d.squadco.com', PAYMENTS_ENVIRONMENT: 'production', PAYMENTS_SECRET_KEY: 'sandbox_sk_abc12345' });
    expect(issues).toEqual(expect.arrayContaining([expect.objectContaining({ variable: 'PAYMENTS_SECRET_KEY', message: expect.stringContaining('sandbox key') })]));
  });

  it('refuses a live key on the test host', () => {
    const issues = issuesOf({ PAYMENTS_SECRET_KEY: 'sk_live_0123456789' });
    expect(issues).toEqual([expect.objectContaining({ variable: 'PAYMENTS_SECRET_KEY', message: expect.stringContaining('live key is refused on the test host') })]);
  });

  it('refuses the production host unless the environment says production', () => {
    const issues = issuesOf({ PAYMENTS_BASE_URL: 'https://api-d.squadco.com', PAYMENTS_SECRET_KEY: 'sk_live_0123456789' });
    expect(issues.map((i) => i.variable)).toContain('PAYMENTS_ENVIRONMENT');
  });

  it('refuses the embedded encryption key and codec token in production', () => {
    const issues = issuesOf({ PAYMENTS_ENVIRONMENT: 'production', PAYMENTS_BASE_URL: 'https://api-d.squadco.com', PAYMENTS_SECRET_KEY: 'sk_live_0123456789' });
    expect(issues.map((i) => i.variable).sort()).toEqual(['CODEC_SERVER_TOKEN', 'PAYLOAD_ENCRYPTION_KEYS']);
  });

  it('accepts a complete production configuration', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const c = loadConfig({
      PAYMENTS_ENVIRONMENT: 'production',
      PAYMENTS_BASE_URL: 'https://api-d.squadco.com/',
      PAYMENTS_SECRET_KEY: 'sk_live_0123456789',
      PAYLOAD_ENCRYPTION_KEYS: `k2:${key},k1:${Buffer.alloc(32, 1).toString('base64')}`,
      PAYLOAD_ENCRYPTION_KEY_ID: 'k1',
      CODEC_SERVER_TOKEN: 'a-long-random-token',
    });
    expect(c.payments.baseUrl).toBe('https://api-d.squadco.com');
    expect(c.encryption.keys.map((k) => k.id)).toEqual(['k2', 'k1']);
    expect(c.encryption.activeKeyId).toBe('k1');
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
});

// The Temporal connection from an envconfig profile (TEMPORAL_CONFIG_FILE + TEMPORAL_PROFILE) and the
// TEMPORAL_* variables: the same worker against the dev server, a self-hosted cluster with mTLS, or
// Temporal Cloud with an API key. No server is needed: the connection options produced are asserted.
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config';
import { describeTemporalConnection, temporalConnectionOptions } from '../../src/temporal/connection';
import { configIssues as issuesOf, productionEnv, tempFiles } from '../support/config';

const { dir, file } = tempFiles('payflow-envconfig-');
const ca = file('ca.pem', '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n');
const cert = file('client.pem', '-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n');
const key = file('client.key', '-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n');
const missingKey = join(dir, 'hidden-location', 'client.key');

const PROFILES = file(
  'temporal.toml',
  `
[profile.default]
address = "127.0.0.1:7233"
namespace = "default"

[profile.selfhosted]
address = "temporal.internal:7233"
namespace = "payments-prod"
[profile.selfhosted.tls]
server_ca_cert_path = "${ca}"
client_cert_path = "${cert}"
client_key_path = "${key}"
server_name = "temporal.internal"

[profile.cloud]
address = "payments.a1b2c.tmprl.cloud:7233"
namespace = "payments.a1b2c"
api_key = "cloud-api-key-never-logged"
[profile.cloud.grpc_meta]
x-tenant = "merchant-1"

[profile.inline]
address = "temporal.internal:7233"
[profile.inline.tls]
client_cert_data = """
-----BEGIN CERTIFICATE-----
INLINE
-----END CERTIFICATE-----
"""
client_key_data = """
-----BEGIN PRIVATE KEY-----
INLINEKEY
-----END PRIVATE KEY-----
"""

[profile.half]
address = "temporal.internal:7233"
[profile.half.tls]
client_cert_path = "${cert}"

[profile.unreadable]
address = "temporal.internal:7233"
[profile.unreadable.tls]
client_cert_path = "${cert}"
client_key_path = "${missingKey}"

[profile.plain]
address = "temporal.internal:7233"

[profile.tlsoff]
address = "temporal.internal:7233"
[profile.tlsoff.tls]
disabled = true
`,
);

/** Production mode with every other setting valid: only the Temporal connection decides. */
const PROD = productionEnv();

describe('Temporal connection through envconfig profiles', () => {
  it('self-hosted with mTLS: the profile file gives address, namespace, CA, client certificate and server name', () => {
    const c = loadConfig({ TEMPORAL_CONFIG_FILE: PROFILES, TEMPORAL_PROFILE: 'selfhosted' });
    expect(c.temporal).toMatchObject({
      address: 'temporal.internal:7233',
      namespace: 'payments-prod',
      profile: 'selfhosted',
    });
    const options = temporalConnectionOptions(c.temporal);
    expect(options.address).toBe('temporal.internal:7233');
    expect(options.apiKey).toBeUndefined();
    expect(options.tls?.serverNameOverride).toBe('temporal.internal');
    expect(Buffer.from(options.tls!.serverRootCACertificate!).toString()).toContain('CA');
    expect(Buffer.from(options.tls!.clientCertPair!.crt).toString()).toContain('CLIENT');
    expect(Buffer.from(options.tls!.clientCertPair!.key).toString()).toContain('KEY');
    expect(describeTemporalConnection(c.temporal)).toEqual({
      address: 'temporal.internal:7233',
      tls: true,
      mtls: true,
      apiKey: false,
    });
    // and it satisfies production mode's "protected connection" rule
    expect(loadConfig({ ...PROD, TEMPORAL_CONFIG_FILE: PROFILES, TEMPORAL_PROFILE: 'selfhosted' }).production).toBe(
      true,
    );
  });

  it('Temporal Cloud with an API key: TLS on (system CAs), the key sent as a bearer token, grpc_meta passed on', () => {
    const c = loadConfig({ ...PROD, TEMPORAL_CONFIG_FILE: PROFILES, TEMPORAL_PROFILE: 'cloud' });
    expect(c.temporal.namespace).toBe('payments.a1b2c');
    expect(temporalConnectionOptions(c.temporal)).toEqual({
      address: 'payments.a1b2c.tmprl.cloud:7233',
      apiKey: 'cloud-api-key-never-logged',
      tls: {},
      metadata: { 'x-tenant': 'merchant-1' },
    });
    expect(JSON.stringify(describeTemporalConnection(c.temporal))).not.toContain('cloud-api-key-never-logged');
  });

  it('PEM data inline in the profile becomes the client certificate pair', () => {
    const options = temporalConnectionOptions(
      loadConfig({ TEMPORAL_CONFIG_FILE: PROFILES, TEMPORAL_PROFILE: 'inline' }).temporal,
    );
    expect(Buffer.from(options.tls!.clientCertPair!.crt).toString()).toContain('INLINE');
    expect(Buffer.from(options.tls!.clientCertPair!.key).toString()).toContain('INLINEKEY');
  });

  it('uses the "default" profile when TEMPORAL_PROFILE is unset, and the dev server without any file', () => {
    expect(temporalConnectionOptions(loadConfig({ TEMPORAL_CONFIG_FILE: PROFILES }).temporal)).toEqual({
      address: '127.0.0.1:7233',
    });
    expect(temporalConnectionOptions(loadConfig({}).temporal)).toEqual({ address: '127.0.0.1:7233' });
  });

  it('lets the TEMPORAL_* variables override the profile, field by field', () => {
    const c = loadConfig({
      TEMPORAL_CONFIG_FILE: PROFILES,
      TEMPORAL_PROFILE: 'cloud',
      TEMPORAL_ADDRESS: 'other.tmprl.cloud:7233',
      TEMPORAL_API_KEY: 'rotated-key',
    });
    expect(c.temporal).toMatchObject({
      address: 'other.tmprl.cloud:7233',
      namespace: 'payments.a1b2c',
      apiKey: 'rotated-key',
    });
  });

  it("keeps the project's variables and accepts envconfig's names for the same files", () => {
    const ours = temporalConnectionOptions(
      loadConfig({ TEMPORAL_ADDRESS: 'h:7233', TEMPORAL_TLS_CERT_PATH: cert, TEMPORAL_TLS_KEY_PATH: key }).temporal,
    );
    const standard = temporalConnectionOptions(
      loadConfig({ TEMPORAL_ADDRESS: 'h:7233', TEMPORAL_TLS_CLIENT_CERT_PATH: cert, TEMPORAL_TLS_CLIENT_KEY_PATH: key })
        .temporal,
    );
    expect(standard).toEqual(ours);
    expect(Buffer.from(ours.tls!.clientCertPair!.crt).toString()).toContain('CLIENT');
    expect(
      issuesOf({ TEMPORAL_TLS_CERT_PATH: cert, TEMPORAL_TLS_CLIENT_CERT_PATH: ca, TEMPORAL_TLS_KEY_PATH: key }),
    ).toEqual([
      { variable: 'TEMPORAL_TLS_CERT_PATH', message: expect.stringContaining('TEMPORAL_TLS_CLIENT_CERT_PATH') },
    ]);
  });

  describe('names what it refuses, never the value', () => {
    it('a certificate without its key in the profile names the missing profile key', () => {
      expect(issuesOf({ TEMPORAL_CONFIG_FILE: PROFILES, TEMPORAL_PROFILE: 'half' })).toEqual([
        {
          variable: 'TEMPORAL_CONFIG_FILE [profile.half] tls.client_key_path',
          message: expect.stringContaining('together'),
        },
      ]);
    });

    it('an unreadable key file in the profile names the key, not the path', () => {
      const issues = issuesOf({ TEMPORAL_CONFIG_FILE: PROFILES, TEMPORAL_PROFILE: 'unreadable' });
      expect(issues).toEqual([
        {
          variable: 'TEMPORAL_CONFIG_FILE [profile.unreadable] tls.client_key_path',
          message: 'must name a readable PEM file',
        },
      ]);
      expect(JSON.stringify(issues)).not.toContain('hidden-location');
    });

    it('a profile that is not in the file names TEMPORAL_PROFILE', () => {
      expect(issuesOf({ TEMPORAL_CONFIG_FILE: PROFILES, TEMPORAL_PROFILE: 'staging' }).map((i) => i.variable)).toEqual([
        'TEMPORAL_PROFILE',
      ]);
    });

    it('an unreadable config file names TEMPORAL_CONFIG_FILE', () => {
      expect(issuesOf({ TEMPORAL_CONFIG_FILE: join(dir, 'nope.toml') })).toEqual([
        { variable: 'TEMPORAL_CONFIG_FILE', message: 'must name a readable TOML file' },
      ]);
    });

    it('an unknown key is refused (strict), and broken TOML is reported by line without echoing it', () => {
      const unknown = file('unknown.toml', '[profile.default]\naddress = "h:7233"\napi_token = "x"\n');
      expect(issuesOf({ TEMPORAL_CONFIG_FILE: unknown })).toEqual([
        { variable: 'TEMPORAL_CONFIG_FILE', message: expect.stringContaining('api_token') },
      ]);
      const broken = file('broken.toml', '[profile.default]\naddress = "h:7233"\napi_key = "leaked-secret-value\n');
      const issues = issuesOf({ TEMPORAL_CONFIG_FILE: broken });
      expect(issues).toEqual([
        { variable: 'TEMPORAL_CONFIG_FILE', message: expect.stringMatching(/^is not valid TOML \(line \d+/) },
      ]);
      expect(JSON.stringify(issues)).not.toContain('leaked-secret-value');
    });

    it('a bad address from the profile names the profile key; from the variable, the variable', () => {
      const bad = file('bad-address.toml', '[profile.default]\naddress = "no-port"\n');
      expect(issuesOf({ TEMPORAL_CONFIG_FILE: bad })).toEqual([
        { variable: 'TEMPORAL_CONFIG_FILE [profile.default] address', message: 'must be host:port' },
      ]);
      expect(issuesOf({ TEMPORAL_CONFIG_FILE: bad, TEMPORAL_ADDRESS: 'also bad' })).toEqual([
        { variable: 'TEMPORAL_ADDRESS', message: 'must be host:port' },
      ]);
    });

    it('production refuses a plaintext profile and a profile with TLS disabled', () => {
      expect(issuesOf({ ...PROD, TEMPORAL_CONFIG_FILE: PROFILES, TEMPORAL_PROFILE: 'plain' })).toEqual([
        { variable: 'TEMPORAL_TLS', message: expect.stringContaining('TEMPORAL_CONFIG_FILE') },
      ]);
      expect(issuesOf({ ...PROD, TEMPORAL_CONFIG_FILE: PROFILES, TEMPORAL_PROFILE: 'tlsoff' })).toEqual([
        {
          variable: 'TEMPORAL_CONFIG_FILE [profile.tlsoff] tls.disabled',
          message: expect.stringContaining('production'),
        },
      ]);
    });

    it('refuses TEMPORAL_TLS_DISABLE_HOST_VERIFICATION=true (the SDK cannot honour it)', () => {
      expect(
        issuesOf({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' }).map((i) => i.variable),
      ).toEqual(['TEMPORAL_TLS_DISABLE_HOST_VERIFICATION']);
    });

    it('never echoes the API key in any error', () => {
      try {
        loadConfig({ ...PROD, TEMPORAL_CONFIG_FILE: PROFILES, TEMPORAL_PROFILE: 'cloud', TEMPORAL_TLS: 'false' });
        throw new Error('should fail');
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        expect((err as Error).message).not.toContain('cloud-api-key-never-logged');
      }
    });
  });
});

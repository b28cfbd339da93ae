// One config schema per process (src/config/processes.ts): each process validates and receives
// only the variables it reads, picked from the one definition in envSchema.
import { ConfigError, envSchema, loadConfig } from '../../src/config/config';
import {
  loadCodecConfig,
  loadProcessConfig,
  loadReceiverConfig,
  loadWorkerConfig,
  PROCESS_SECTIONS,
  processSecretVariables,
  processVariables,
  sectionOf,
  type ProcessKind,
} from '../../src/config/processes';
import { productionEnv, testKey } from '../support/config';

/** Production, with TLS to Temporal and every secret of every process set. */
const ALL = productionEnv({ TEMPORAL_TLS: 'true' });

/** `env` cut down to what `kind` reads. */
const onlyFor = (kind: ProcessKind, env: Record<string, string>) =>
  Object.fromEntries(Object.entries(env).filter(([k]) => processVariables(kind).includes(k)));

const issueVariables = (load: () => unknown): string[] => {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues.map((i) => i.variable);
  }
  throw new Error('expected a ConfigError');
};

describe('per-process configuration', () => {
  it('puts every variable of envSchema in exactly one section, so each process schema is a pick of it', () => {
    const unplaced = Object.keys(envSchema.shape).filter((v) => sectionOf(v) === undefined);
    expect(unplaced).toEqual([]);
  });

  it('gives each process only its own sections', () => {
    for (const kind of Object.keys(PROCESS_SECTIONS) as ProcessKind[]) {
      const config = loadProcessConfig(kind, onlyFor(kind, ALL));
      expect(Object.keys(config).sort()).toEqual(['production', ...PROCESS_SECTIONS[kind]].sort());
      expect(config.production).toBe(true);
    }
  });

  it('starts the receiver in production with its own secrets only (no claim-check, codec or worker secrets)', () => {
    const env = onlyFor('receiver', ALL);
    expect(Object.keys(env)).not.toEqual(expect.arrayContaining(['CLAIM_CHECK_KEYS']));
    expect(Object.keys(env)).not.toContain('CODEC_SERVER_TOKEN');
    const config = loadReceiverConfig(env);
    expect(config.payments.secretKey).toBe(ALL.PAYMENTS_SECRET_KEY);
    expect(config.returnLinks.key).toBe(ALL.RETURN_LINK_KEY);
    expect(config).not.toHaveProperty('claimCheck');
    expect(config).not.toHaveProperty('codec');
    // The same environment is refused by the all-in-one loader, which reads every process's variables.
    expect(() => loadConfig(env)).toThrow(ConfigError);
  });

  it("neither validates nor hands over another process's variables", () => {
    // A development codec token and no CORS origins would stop the codec server, not the receiver or the worker.
    const env = { ...ALL, CODEC_SERVER_TOKEN: 'dev-codec-token', CODEC_CORS_ORIGINS: '' };
    expect(issueVariables(() => loadCodecConfig(env)).sort()).toEqual(['CODEC_CORS_ORIGINS', 'CODEC_SERVER_TOKEN']);
    expect(() => loadReceiverConfig(env)).not.toThrow();
    expect(() => loadWorkerConfig(env)).not.toThrow();
    // And the codec server does not need the payments secret key, the claim-check store or Temporal's TLS.
    const codecOnly = {
      DEPLOYMENT: 'production',
      CODEC_SERVER_TOKEN: ALL.CODEC_SERVER_TOKEN,
      CODEC_CORS_ORIGINS: ALL.CODEC_CORS_ORIGINS,
      PAYLOAD_ENCRYPTION_KEYS: ALL.PAYLOAD_ENCRYPTION_KEYS,
    };
    const codec = loadCodecConfig(codecOnly);
    expect(codec.codec.corsOrigins).toEqual(['https://temporal-ui.example.com']);
    expect(codec).not.toHaveProperty('payments');
  });

  it("applies a process's production guards to it: the worker still refuses the development claim-check key", () => {
    const { CLAIM_CHECK_KEYS: _dropped, ...withoutClaimCheckKeys } = onlyFor('worker', ALL);
    expect(issueVariables(() => loadWorkerConfig(withoutClaimCheckKeys))).toEqual(['CLAIM_CHECK_KEYS']);
    expect(issueVariables(() => loadReceiverConfig({ ...onlyFor('receiver', ALL), TEMPORAL_TLS: 'false' }))).toContain(
      'TEMPORAL_TLS',
    );
  });

  it('keeps every variable name working: a process reads the same names loadConfig reads, with the same values', () => {
    const env = { PAYMENTS_TIMEOUT_MS: '12000', WEBHOOK_PORT: '4999', PAYLOAD_ENCRYPTION_KEYS: `p9:${testKey(9)}` };
    const receiver = loadReceiverConfig(env);
    const all = loadConfig(env);
    expect(receiver.payments).toEqual(all.payments);
    expect(receiver.webhooks).toEqual(all.webhooks);
    expect(receiver.encryption).toEqual(all.encryption);
  });

  it('lists the secrets each process reads', () => {
    expect(processSecretVariables('codec').sort()).toEqual(['CODEC_SERVER_TOKEN', 'PAYLOAD_ENCRYPTION_KEYS']);
    expect(processSecretVariables('receiver').sort()).toEqual([
      'PAYLOAD_ENCRYPTION_KEYS',
      'PAYMENTS_SECRET_KEY',
      'RETURN_LINK_KEY',
      'TEMPORAL_API_KEY',
    ]);
    expect(processSecretVariables('worker')).not.toContain('CODEC_SERVER_TOKEN');
    expect(processSecretVariables('admin')).toEqual(['TEMPORAL_API_KEY']);
  });
});

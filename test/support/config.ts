// Configuration as the tests of the settings read it: a complete production-mode environment,
// the issues a refused environment names, and files written for a test to point a setting at.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config';

export type ConfigIssue = ConfigError['issues'][number];

/** A 32-byte key (base64), every byte `fill`: distinct keys for distinct fills. */
export const testKey = (fill: number): string => Buffer.alloc(32, fill).toString('base64');

/**
 * A complete production-mode environment against the payments test host (a staging deployment)
 * that says nothing about the Temporal connection (production refuses it until `extra` does), with
 * `extra` on top.
 */
export function productionEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DEPLOYMENT: 'production',
    PAYMENTS_BASE_URL: 'https://sandbox-api-d.squadco.com',
    PAYMENTS_SECRET_KEY: 'sandbox_sk_staging_0123456789',
    PAYLOAD_ENCRYPTION_KEYS: `p1:${testKey(1)}`,
    CODEC_SERVER_TOKEN: 'a-long-random-codec-token-of-40-characters',
    CODEC_CORS_ORIGINS: 'https://temporal-ui.example.com',
    RETURN_LINK_KEY: 'a-long-random-return-link-key-of-40-chars',
    CLAIM_CHECK_KEYS: `c1:${testKey(2)}`,
    CLAIM_CHECK_DATABASE_URL: 'postgres://claimcheck:s3cret@db.internal:5432/claimcheck',
    ...extra,
  };
}

/** The issues `loadConfig(env)` refuses `env` with (it must refuse it, with a ConfigError). */
export function configIssues(env: Record<string, string>): ConfigIssue[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('expected loadConfig to fail');
}

/** The variables `loadConfig(env)` refuses `env` for, in its order. */
export const configIssueVariables = (env: Record<string, string>): string[] => configIssues(env).map((i) => i.variable);

/** A fresh temporary folder, and `file(name, text)` that writes a file there and returns its path. */
export function tempFiles(prefix: string): { dir: string; file: (name: string, text: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    file: (name, text) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
  };
}

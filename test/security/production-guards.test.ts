// Issue #27 section 6, production guards (src/config/production-guards.ts, wired in config.ts):
// a codec token of at least 32 characters, near-copies of development values refused after
// trimming and case-folding, CODEC_CORS_ORIGINS and RETURN_LINK_KEY required.
import { EMBEDDED_DEFAULTS, loadConfig } from '../../src/config/config';
import { configIssues, configIssueVariables, productionEnv } from '../support/config';

const PROD = productionEnv({ TEMPORAL_TLS: 'true' });

describe('production guards', () => {
  it('accept the complete production environment (the control)', () => {
    expect(loadConfig(PROD).production).toBe(true);
  });

  it('refuse a codec token shorter than 32 characters, naming the rule and not the value', () => {
    const short = 'x'.repeat(31);
    const issues = configIssues({ ...PROD, CODEC_SERVER_TOKEN: short });
    expect(issues).toEqual([{ variable: 'CODEC_SERVER_TOKEN', message: expect.stringContaining('at least 32') }]);
    expect(JSON.stringify(issues)).not.toContain(short);
    expect(loadConfig({ ...PROD, CODEC_SERVER_TOKEN: 'x'.repeat(32) }).codec.token).toHaveLength(32);
  });

  it('keep development free of the 32-character rule', () => {
    expect(loadConfig({ CODEC_SERVER_TOKEN: 'short-dev-token' }).codec.token).toBe('short-dev-token');
  });

  it.each([
    ['padded', (v: string) => `  ${v}\t`],
    ['upper case', (v: string) => v.toUpperCase()],
    ['quoted', (v: string) => `"${v}"`],
    ['mixed', (v: string) => ` '${v.replace(/^./, (c) => c.toUpperCase())}' `],
  ])('refuse a near-copy of a development value (%s)', (_label, nearCopy) => {
    for (const [variable, value] of [
      ['PAYMENTS_SECRET_KEY', EMBEDDED_DEFAULTS.secretKey],
      ['CLAIM_CHECK_DATABASE_URL', EMBEDDED_DEFAULTS.claimCheckDatabaseUrl],
      ['RETURN_LINK_KEY', EMBEDDED_DEFAULTS.returnLinkKey],
    ] as const) {
      const issues = configIssues({ ...PROD, [variable]: nearCopy(value) });
      expect(issues).toContainEqual({
        variable,
        message: expect.stringContaining('embedded development value is refused'),
      });
    }
  });

  it('refuse the development codec token padded to 32 characters with spaces as the development value (one issue)', () => {
    expect(
      configIssues({ ...PROD, CODEC_SERVER_TOKEN: ` ${EMBEDDED_DEFAULTS.codecToken.toUpperCase()}`.padEnd(40) }),
    ).toEqual([{ variable: 'CODEC_SERVER_TOKEN', message: expect.stringContaining('embedded development value') }]);
  });

  it('refuse a development key listed under a case-folded copy of its id', () => {
    const [id, key] = EMBEDDED_DEFAULTS.encryptionKeys.split(':');
    const otherKey = Buffer.alloc(32, 5).toString('base64');
    expect(key).not.toBe(otherKey);
    expect(configIssueVariables({ ...PROD, PAYLOAD_ENCRYPTION_KEYS: `${id.toUpperCase()}:${otherKey}` })).toEqual([
      'PAYLOAD_ENCRYPTION_KEYS',
    ]);
  });

  it.each(['CODEC_CORS_ORIGINS', 'RETURN_LINK_KEY'])('require %s', (variable) => {
    const { [variable]: _dropped, ...without } = PROD;
    expect(configIssueVariables(without)).toEqual([variable]);
    expect(configIssueVariables({ ...without, [variable]: '' })).toEqual([variable]);
  });

  it('refuse CODEC_CORS_ORIGINS made only of separators', () => {
    expect(configIssueVariables({ ...PROD, CODEC_CORS_ORIGINS: ' , ,' })).toEqual(['CODEC_CORS_ORIGINS']);
  });
});

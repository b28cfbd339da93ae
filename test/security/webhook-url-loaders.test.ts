// Production's https rule on every `*WEBHOOK*_URL` (docs/security.md, issue #42 §5) runs in the loader
// each shipped process uses: the worker, the webhook receiver, the codec server, the CLI and the
// starters, the search-attribute Job (src/config/processes.ts), `npm start` (loadConfig); the
// sandbox refuses production mode as a whole. A test per loader, and each main uses its loader.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config';
import {
  loadAdminConfig,
  loadCliConfig,
  loadCodecConfig,
  loadReceiverConfig,
  loadSandboxConfig,
  loadWorkerConfig,
} from '../../src/config/processes';
import { productionEnv } from '../support/config';

const RULE = { variable: 'SANDBOX_WEBHOOK_URL', message: 'webhook URLs must be https:// in production' };

const LOADERS: [string, (env: NodeJS.ProcessEnv) => unknown][] = [
  ['worker (loadWorkerConfig)', loadWorkerConfig],
  ['webhook receiver (loadReceiverConfig)', loadReceiverConfig],
  ['codec server (loadCodecConfig)', loadCodecConfig],
  ['CLI and starters (loadCliConfig)', loadCliConfig],
  ['search-attribute Job (loadAdminConfig)', loadAdminConfig],
  ['sandbox (loadSandboxConfig)', loadSandboxConfig],
  ['npm start (loadConfig)', loadConfig],
];

function issues(load: (env: NodeJS.ProcessEnv) => unknown, env: Record<string, string>) {
  try {
    load(env);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
}

const production = (url: string) =>
  productionEnv({ TEMPORAL_TLS: 'true', SANDBOX_WEBHOOK_URL: url, PARTNER_WEBHOOK_CALLBACK_URL: url });

describe('a *WEBHOOK*_URL that is not https in production', () => {
  it.each(LOADERS)('is refused by the %s, naming each variable', (_name, load) => {
    const found = issues(load, production('http://hooks.example.com/webhooks'));
    expect(found).toContainEqual(RULE);
    expect(found).toContainEqual({ ...RULE, variable: 'PARTNER_WEBHOOK_CALLBACK_URL' });
  });

  it.each(LOADERS)('is not refused by the %s when https, or "none"', (_name, load) => {
    for (const url of ['https://hooks.example.com/webhooks', 'none'])
      expect(issues(load, production(url)).map((i) => i.variable)).not.toContain('SANDBOX_WEBHOOK_URL');
  });

  it.each(LOADERS)('is allowed by the %s outside production', (_name, load) => {
    expect(() => load({ SANDBOX_WEBHOOK_URL: 'http://127.0.0.1:4020/webhooks' })).not.toThrow();
  });
});

describe('the loader each shipped process uses', () => {
  const source = (path: string) => readFileSync(join(__dirname, '../..', path), 'utf8');

  it.each([
    ['src/workers/main.ts', 'loadWorkerConfig'],
    ['src/webhooks/main.ts', 'loadReceiverConfig'],
    ['src/codec/main.ts', 'loadCodecConfig'],
    ['src/workers/register-search-attributes.ts', 'loadAdminConfig'],
    ['src/starters/commands/index.ts', 'loadCliConfig'],
    ['src/stack/start.ts', 'loadConfig'],
  ])('%s loads its configuration with %s', (path, loader) => {
    expect(source(path)).toMatch(new RegExp(`\\b${loader}\\(`));
  });

  it('the sandbox process refuses production mode before reading anything else', () => {
    expect(source('src/sandbox/main.ts')).toMatch(
      /if \(productionModeOf\(process\.env\)\)\s*throw new Error\(\s*'the payments sandbox does not run in production mode/,
    );
  });
});

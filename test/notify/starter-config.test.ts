// NOTIFY_URL and NOTIFY_SECRET are the worker's (issue #39 §1): a process that only starts flows
// (the CLI, a backend's starters) neither reads nor requires them, and is never asked for the
// signing secret; the worker still refuses NOTIFY_URL without NOTIFY_SECRET, naming the variable.
import { ConfigError } from '../../src/config/config';
import { loadCliConfig, loadWorkerConfig, processVariables } from '../../src/config/processes';

const onlyUrl = { NOTIFY_URL: 'http://127.0.0.1:4100/events' };

describe("NOTIFY_* are the worker's settings", () => {
  it('the CLI and starters run with NOTIFY_URL alone, and read nothing of it', () => {
    const config = loadCliConfig(onlyUrl);
    expect(config).not.toHaveProperty('notify');
    expect(processVariables('cli').filter((v) => v.startsWith('NOTIFY_'))).toEqual([]);
  });

  it('the worker refuses NOTIFY_URL without NOTIFY_SECRET, naming it', () => {
    expect(() => loadWorkerConfig(onlyUrl)).toThrow(ConfigError);
    expect(() => loadWorkerConfig(onlyUrl)).toThrow(/NOTIFY_SECRET: is required when NOTIFY_URL is set/);
  });
});

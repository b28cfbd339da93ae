// Development logs a person reads (src/logging/logger.ts): at a terminal outside production mode the
// redacted log lines print as `time LEVEL name[component] message  key=value`, an error's stack below;
// production, and any output that is not a terminal (log collectors, pipes, tests), stays JSON.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, defaultLogFormat, formatHumanLine, REDACTED } from '../../src/logging/logger';
import { freePort } from '../../src/http/free-port';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { freeStackPorts, stackEnvironment } from '../support/npm-start';
import { eventually } from '../support/polling';

/** A destination that keeps what the logger wrote. */
function capture(): { write(text: string): void; text: () => string } {
  let out = '';
  return { write: (t: string) => void (out += t), text: () => out };
}

describe('the log format', () => {
  it('is human at a terminal outside production, JSON in production or when the output is not a terminal', () => {
    expect(defaultLogFormat({}, { isTTY: true })).toBe('human');
    expect(defaultLogFormat({ NODE_ENV: 'production' }, { isTTY: true })).toBe('json');
    expect(defaultLogFormat({ DEPLOYMENT: 'production' }, { isTTY: true })).toBe('json');
    expect(defaultLogFormat({}, { isTTY: false })).toBe('json');
    expect(defaultLogFormat({}, {})).toBe('json');
  });

  it('prints a line as time, level, process and component, message, then its fields', () => {
    const line = formatHumanLine(
      JSON.stringify({
        level: 'info',
        time: '2026-11-29T08:25:01.123Z',
        pid: 42,
        name: 'worker',
        component: 'activities',
        reference: 'ord-1',
        attempt: 2,
        note: 'two words',
        tuning: { cache: 'auto' },
        msg: 'card charge sent',
      }),
    );
    expect(line).toBe(
      '08:25:01.123 INFO  worker[activities] card charge sent  reference=ord-1 attempt=2 note="two words" tuning={"cache":"auto"}\n',
    );
  });

  it("puts an error's stack and a multi-line message's lines below, indented; a line that is not JSON stays as it is", () => {
    const line = formatHumanLine(
      JSON.stringify({
        level: 'error',
        time: '2026-11-29T08:25:01.123Z',
        name: 'stack',
        err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at main (start.ts:1:1)' },
        msg: 'first\nsecond',
      }),
    );
    expect(line).toBe('08:25:01.123 ERROR stack first\n    second\n    Error: boom\n        at main (start.ts:1:1)\n');
    expect(formatHumanLine('not json')).toBe('not json');
  });

  it('a human logger redacts as the JSON one does', () => {
    const out = capture();
    const logger = createLogger({ name: 'worker', format: 'human', destination: out });
    logger.info({ cvv: '123', pin: '0000', reference: 'ord-9' }, 'card 5399 8312 3456 7890 charged');
    expect(out.text()).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}worker card \S+ charged {2}cvv=\S+ pin=\S+ reference=ord-9\n$/,
    );
    expect(out.text()).toContain(`cvv=${REDACTED.includes(' ') ? JSON.stringify(REDACTED) : REDACTED}`);
    expect(out.text()).not.toContain('5399 8312 3456 7890');
    expect(out.text()).not.toContain('0000');
  });

  it('a logger given a destination and no format writes JSON (what tests and collectors read)', () => {
    const out = capture();
    createLogger({ name: 'worker', destination: out }).info({ reference: 'ord-1' }, 'hello');
    expect(JSON.parse(out.text())).toMatchObject({ level: 'info', name: 'worker', reference: 'ord-1', msg: 'hello' });
  });
});

describe('`npm start` at a terminal', () => {
  jest.setTimeout(180_000);

  it('prints human lines before its banner (the workflow bundle in one line, no build statistics), and Ctrl-C at the terminal stops it', async () => {
    const ports = { ...(await freeStackPorts()), pg: await freePort() };
    const dataDir = mkdtempSync(join(tmpdir(), 'payflow-human-logs-'));
    const env = stackEnvironment(ports, dataDir, {
      CLAIM_CHECK_DATABASE_URL: `postgres://postgres:dev-claim-check@127.0.0.1:${ports.pg}/claimcheck`,
      LOG_LEVEL: 'info',
      // The metrics endpoints on ports the system picks: a free port found earlier can be taken by a
      // parallel test before the worker binds it (seen in a fresh-clone CI run), and this test reads neither.
      METRICS_PORT: '0',
      WORKER_METRICS_PORT: '0',
    });
    // script(1) runs it on a pseudo-terminal, as a person's shell does; a Ctrl-C typed there is \x03.
    // `exec`: script runs the command through $SHELL -c, and where that is dash (SHELL unset in CI)
    // the shell stays as node's parent and dies of the Ctrl-C itself (exit 130) while node stops.
    const child = spawn('script', ['-qfec', 'exec node --import tsx src/stack/start.ts', '/dev/null'], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await eventually(() => out.includes('Press Ctrl-C to stop.') || child.exitCode !== null, {
        timeoutMs: 150_000,
        intervalMs: 200,
        description: 'the banner',
      });
      const beforeBanner = out.slice(0, out.indexOf('Payments stack is up:'));
      expect(beforeBanner).toMatch(/\d\d:\d\d:\d\d\.\d{3} INFO {2}worker workflow bundle built at start {2}sizeMb=/);
      expect(beforeBanner).toMatch(/\d\d:\d\d:\d\d\.\d{3} INFO {2}worker worker started/);
      expect(beforeBanner).not.toMatch(/^\{"level"/m);
      expect(beforeBanner).not.toContain('webpack');
      child.stdin.write('\x03');
      expect(await exited).toBe(0);
      expect(out).toContain('SIGINT: stopping');
      expect(out).toContain('stopped.');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

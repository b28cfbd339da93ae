// The dev server on ports we picked ourselves: another process can take a free port between our
// pick and the server's bind, and the server then exits before it answers. A start on picked ports
// tries again on new ones; a start on a fixed port does not (another server is there), and the
// error carries what the server printed.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/http/free-port';
import { startDevServer } from '../../src/stack/temporal-dev-server';
import { temporalBinaries } from '../../src/stack/temporal-binaries';

let dir: string;
const realCli = temporalBinaries().cli!;

/** A CLI that fails like a taken port for its first `failures` starts, then runs the real one. */
function flakyCli(failures: number): { path: string; starts: () => number } {
  const count = join(dir, `starts-${failures}`);
  writeFileSync(count, '');
  const path = join(dir, `temporal-${failures}`);
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      `echo x >> '${count}'`,
      `if [ "$(wc -l < '${count}')" -le ${failures} ]; then`,
      "  echo 'listen tcp 127.0.0.1: bind: address already in use' >&2",
      '  exit 2',
      'fi',
      `exec '${realCli}' "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
  return { path, starts: () => readFileSync(count, 'utf8').split('\n').filter(Boolean).length };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dev-server-ports-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  delete process.env.TEMPORAL_CLI_PATH;
});

describe('starting the dev server when a port is taken first', () => {
  it('on ports it picked: tries again on new ones and answers', async () => {
    const cli = flakyCli(1);
    process.env.TEMPORAL_CLI_PATH = cli.path;
    const lines: string[] = [];
    const server = await startDevServer({ uiPort: null, log: (l) => lines.push(l) });
    try {
      expect(cli.starts()).toBe(2);
      expect(lines.join('')).toMatch(/exited with code 2 before it was ready: .*address already in use.*retrying/s);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('on ports it picked: gives up after three starts, with what the server printed', async () => {
    const cli = flakyCli(5);
    process.env.TEMPORAL_CLI_PATH = cli.path;
    await expect(startDevServer({ uiPort: null })).rejects.toThrow(
      /exited with code 2 before it was ready: listen tcp 127\.0\.0\.1: bind: address already in use/,
    );
    expect(cli.starts()).toBe(3);
  });

  it('on a fixed port: one start, and the error says why', async () => {
    const cli = flakyCli(5);
    process.env.TEMPORAL_CLI_PATH = cli.path;
    await expect(startDevServer({ port: await freePort(), uiPort: null })).rejects.toThrow(/address already in use/);
    expect(cli.starts()).toBe(1);
  });
});

// A client call waiting to be retried when its Connection closes (Temporal unreachable while the
// process shuts down): with the SDK's plain retry the next attempt throws "Channel has been shut
// down" out of a timer, and the call never settles; with our connection options
// (src/temporal/closed-connection-guard.ts) it fails as a ServiceError and nothing escapes. Each
// case runs in a child process, where an escaped error is a real uncaught exception.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../src/http/free-port';

const FIXTURE = join(__dirname, '..', 'fixtures', 'closed-connection-call.ts');

async function callWhileClosing(
  mode: 'ours' | 'sdk-default' | 'after-close',
): Promise<{ settled: string; uncaught: string[] }> {
  const address = `127.0.0.1:${await freePort()}`; // nothing listens there
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', FIXTURE, mode, address], {
    timeout: 30_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as { settled: string; uncaught: string[] };
}

describe('a Temporal client connection closed while a call waits for its retry', () => {
  it('the SDK default (the control): the retry throws out of a timer and the call never settles', async () => {
    expect(await callWhileClosing('sdk-default')).toEqual({
      settled: 'never settled',
      uncaught: ['Channel has been shut down'],
    });
  }, 40_000);

  it('our client connection: the call fails with a ServiceError and nothing is thrown out of a timer', async () => {
    expect(await callWhileClosing('ours')).toEqual({ settled: 'rejected: ServiceError', uncaught: [] });
  }, 40_000);

  it('our client connection: a call made after the close is rejected, as without the guard', async () => {
    expect(await callWhileClosing('after-close')).toEqual({ settled: 'rejected: ServiceError', uncaught: [] });
  }, 40_000);
});

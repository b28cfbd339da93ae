// heartbeatWhile (src/activities/heartbeat.ts): beats while the wrapped call is open, stops after;
// outside an activity it just awaits the call.
import { MockActivityEnvironment } from '@temporalio/testing';
import { currentActivityContext, heartbeatWhile } from '../../src/activities/heartbeat';

const later = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));

describe('heartbeatWhile: a long call keeps its activity alive', () => {
  it('heartbeats every third of the heartbeat timeout while the call is open, then stops', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 300 });
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const result = await env.run(() => heartbeatWhile(() => later(450, 'answered'), { call: 'D3' }));
    expect(result).toBe('answered');
    expect(beats.length).toBeGreaterThanOrEqual(3); // about every 100 ms for 450 ms
    expect(beats.every((b) => (b as { call: string }).call === 'D3')).toBe(true);
    const after = beats.length;
    await later(250, undefined);
    expect(beats.length).toBe(after);
  });

  it('a call that answers within the first third of the heartbeat timeout costs no heartbeat', async () => {
    // The server counts the heartbeat timeout from the attempt's start: no beat is needed before the first third.
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 300 });
    let beats = 0;
    env.on('heartbeat', () => (beats += 1));
    await expect(env.run(() => heartbeatWhile(() => later(40, 'answered')))).resolves.toBe('answered');
    await later(150, undefined);
    expect(beats).toBe(0);
  });

  it('propagates the call failure and stops beating', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 300 });
    let beats = 0;
    env.on('heartbeat', () => (beats += 1));
    await expect(
      env.run(() =>
        heartbeatWhile(async () => {
          await later(150, undefined);
          throw new Error('socket hang up');
        }),
      ),
    ).rejects.toThrow('socket hang up');
    const after = beats;
    await later(250, undefined);
    expect(beats).toBe(after);
  });

  it('outside an activity there is no Context: the call is awaited without heartbeats', async () => {
    expect(currentActivityContext()).toBeUndefined();
    await expect(heartbeatWhile(later(10, 7))).resolves.toBe(7);
  });
});

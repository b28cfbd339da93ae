// heartbeatWhile (src/activities/heartbeat.ts): heartbeats while the call is open, stops when it
// settles, passes its result or failure through, and works outside an activity.
import { MockActivityEnvironment } from '@temporalio/testing';
import { heartbeatWhile } from '../../src/activities/heartbeat';

const after = <T>(ms: number, value: T, fail = false) => new Promise<T>((resolve, reject) => setTimeout(() => (fail ? reject(new Error(String(value))) : resolve(value)), ms));

it('heartbeats every N ms while the work is pending, then stops', async () => {
  const env = new MockActivityEnvironment();
  let beats = 0;
  env.on('heartbeat', () => (beats += 1));
  await expect(env.run(() => heartbeatWhile(after(260, 'answer'), 50))).resolves.toBe('answer');
  expect(beats).toBeGreaterThanOrEqual(4);
  const settled = beats;
  await after(150, null);
  expect(beats).toBe(settled);
});

it('passes a failure through', async () => {
  const env = new MockActivityEnvironment();
  await expect(env.run(() => heartbeatWhile(after(20, 'lost', true), 5))).rejects.toThrow('lost');
});

it('outside an activity the work is just awaited', async () => {
  await expect(heartbeatWhile(after(10, 7))).resolves.toBe(7);
});

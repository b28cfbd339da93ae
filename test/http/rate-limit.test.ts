// The one request budget per client (src/http/rate-limit.ts) that the codec server and
// GET /payments/return both use: a fixed window per key, the seconds to wait past the budget, and a
// memory bound that holds even when every remembered window is still running.
import { RateLimiter } from '../../src/http/rate-limit';

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('RateLimiter', () => {
  it('lets `limit` requests of a client through in a window and refuses the next ones, each counted', () => {
    const c = clock();
    const limiter = new RateLimiter({ limit: 3, now: c.now });
    expect([1, 2, 3, 4, 5].map(() => limiter.take('a'))).toEqual([0, 0, 0, 60, 60]);
  });

  it('answers the seconds until the window ends, rounded up and never 0', () => {
    const c = clock();
    const limiter = new RateLimiter({ limit: 1, windowMs: 60_000, now: c.now });
    expect(limiter.take('a')).toBe(0);
    c.advance(10_500);
    expect(limiter.take('a')).toBe(50); // 49.5 s left
    c.advance(49_400);
    expect(limiter.take('a')).toBe(1); // 0.1 s left
  });

  it('starts a fresh budget when the window has ended (a fixed window, not a sliding one)', () => {
    const c = clock();
    const limiter = new RateLimiter({ limit: 2, windowMs: 1_000, now: c.now });
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 1]);
    c.advance(999);
    expect(limiter.take('a')).toBe(1);
    c.advance(1);
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 1]);
  });

  it('keeps a budget per client: one spent budget does not limit another', () => {
    const c = clock();
    const limiter = new RateLimiter({ limit: 1, now: c.now });
    expect(limiter.take('user:ada')).toBe(0);
    expect(limiter.take('user:ada')).toBeGreaterThan(0);
    expect(limiter.take('user:bob')).toBe(0);
    expect(limiter.take('ip:127.0.0.1')).toBe(0);
  });

  it('defaults to one-minute windows and the wall clock', () => {
    const limiter = new RateLimiter({ limit: 0 });
    const wait = limiter.take('a');
    expect(wait).toBeGreaterThanOrEqual(59);
    expect(wait).toBeLessThanOrEqual(60);
  });

  it('never remembers more than maxClients, even when every window is still running', () => {
    const c = clock();
    const limiter = new RateLimiter({ limit: 1, maxClients: 100, now: c.now });
    for (let i = 0; i < 10_000; i++) {
      limiter.take(`ip:${i}`);
      c.advance(1); // all within one window: none has ended
      expect(limiter.clients).toBeLessThanOrEqual(100);
    }
    expect(limiter.clients).toBe(100);
  });

  it('holds the default bound of 10,000 clients', () => {
    const c = clock();
    const limiter = new RateLimiter({ limit: 1, now: c.now });
    for (let i = 0; i < 25_000; i++) limiter.take(`ip:${i}`);
    expect(limiter.clients).toBe(10_000);
  });

  it('drops the oldest window first: recent clients keep their spent budget', () => {
    const c = clock();
    const limiter = new RateLimiter({ limit: 1, maxClients: 3, now: c.now });
    for (const client of ['a', 'b', 'c']) {
      limiter.take(client);
      c.advance(1);
    }
    limiter.take('d'); // past the bound: 'a' (the oldest window) goes
    expect(limiter.take('c')).toBeGreaterThan(0);
    expect(limiter.take('b')).toBeGreaterThan(0);
    expect(limiter.take('a')).toBe(0); // forgotten: a fresh window (and now 'b' is the oldest)
    expect(limiter.clients).toBe(3);
  });

  it('moves a restarted window to the back of the line', () => {
    const c = clock();
    const limiter = new RateLimiter({ limit: 1, windowMs: 1_000, maxClients: 2, now: c.now });
    limiter.take('a');
    limiter.take('b');
    c.advance(1_000);
    expect(limiter.take('a')).toBe(0); // a's window restarts: now newer than b's
    limiter.take('c'); // past the bound: 'b' goes, not 'a'
    expect(limiter.take('a')).toBeGreaterThan(0);
    expect(limiter.take('b')).toBe(0);
  });
});

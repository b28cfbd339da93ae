// src/shared/lazy.ts: a shared schema is built on first use, once per process. In the workflow
// sandbox the module is preloaded, so "once per process" means once per worker, for every execution
// (src/workers/worker.ts PRELOADED_WORKFLOW_MODULES); here each `make()` stands for one execution's
// own copy of a shared module, which calls `lazy` again with the same key and builder.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lazy } from '../../src/shared/lazy';

describe('lazy: a value built once, on first use', () => {
  it('builds nothing until used, then once, however often it is read', () => {
    let builds = 0;
    const value = lazy('test.first-use', () => ({ id: ++builds }));
    expect(builds).toBe(0);
    expect(value.id).toBe(1);
    expect(value.id).toBe(1);
    expect(Object.keys(value)).toEqual(['id']);
    expect(builds).toBe(1);
  });

  it('shares one value among every copy of the module that asks for the same key', () => {
    let builds = 0;
    const make = () => lazy('test.shared', () => ({ id: ++builds }));
    const [a, b, c] = [make(), make(), make()];
    expect([a.id, b.id, c.id]).toEqual([1, 1, 1]);
    expect(builds).toBe(1);
  });

  it('refuses a different builder under a key that is taken, naming the key', () => {
    const first = lazy('test.taken', () => ({ kind: 'first' }));
    expect(first.kind).toBe('first');
    const second = lazy('test.taken', () => ({ kind: 'second' }));
    expect(() => second.kind).toThrow('two different values are built under the key test.taken');
  });

  it('hands the builder zod, so a schema module imports zod for its types only', () => {
    const schema = lazy('test.zod', (z) => z.strictObject({ amount: z.number().int() }));
    expect(schema.safeParse({ amount: 5 }).success).toBe(true);
    expect(schema.safeParse({ amount: 5.5 }).success).toBe(false);
  });

  it('every key in src/shared is used once', () => {
    const dir = join(__dirname, '../../src/shared');
    const keys = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/\blazy\(\s*'([^']+)'/g)].map((m) => m[1]));
    expect(keys.length).toBeGreaterThan(30);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
  });
});

// A value built on its first use, once per process (once per worker for workflows).
//
// The workflow sandbox evaluates the modules a workflow requires once per execution, so a zod schema
// built at module level was built for every flow, whether the flow used it or not, and zod compiles
// each new object schema's parser on its first parse. That was most of the sandbox's CPU per flow
// (docs/performance.md). So:
//  - a shared schema is wrapped in `lazy`: a flow builds only the schemas it uses;
//  - this module is preloaded into the workflow sandbox (src/workers/worker.ts
//    PRELOADED_WORKFLOW_MODULES): its `built` map is evaluated once per worker and shared by every
//    execution, so each schema is built (and compiled) once per worker, not once per flow.
// What is shared is only what `build` returns: a pure value (a zod schema, a table of them) whose
// use depends on its input alone, so sharing it cannot carry one flow's state into another. The key
// names the value; the same key must always build the same thing (`lazy` refuses two builders under
// one key).
const built = new Map<string, { source: string; value: object }>();

export type Zod = typeof import('zod').z;
/**
 * zod itself, loaded on the first build and kept: a module that builds its schemas through `lazy`
 * imports zod for its types only, so a flow whose schemas are all built does not evaluate zod's
 * hundred modules again (the sandbox would, once per execution).
 */
let zod: Zod | undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadZod = (): Zod => (zod ??= (require('zod') as typeof import('zod')).z);

export function lazy<T extends object>(key: string, build: (z: Zod) => T): T {
  let value: T | undefined;
  const real = (): T => (value ??= shared(key, build));
  return new Proxy({} as T, {
    get: (_target, p) => Reflect.get(real(), p),
    set: (_target, p, v) => Reflect.set(real(), p, v),
    has: (_target, p) => Reflect.has(real(), p),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_target, p) => {
      const d = Reflect.getOwnPropertyDescriptor(real(), p);
      // A proxy may not report a non-configurable property its (empty) target lacks.
      return d && { ...d, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
}

function shared<T extends object>(key: string, build: (z: Zod) => T): T {
  const source = build.toString();
  const known = built.get(key);
  if (known) {
    if (known.source !== source) throw new TypeError(`lazy: two different values are built under the key ${key}`);
    return known.value as T;
  }
  const value = build(loadZod());
  built.set(key, { source, value });
  return value;
}

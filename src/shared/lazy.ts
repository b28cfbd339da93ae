// A value built on its first use. The workflow sandbox evaluates every module of the workflow
// bundle once per workflow execution, so a zod schema built at module level was built for every
// flow, whether the flow used it or not: zod construction was most of the sandbox's CPU per flow
// (docs/performance.md). Shared schemas are wrapped in `lazy`, so each flow (and each starter
// process) builds only the schemas it uses, once.
export function lazy<T extends object>(build: () => T): T {
  let value: T | undefined;
  const real = (): T => (value ??= build());
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

// Activities are module-level functions over their deps (samples-typescript style); each factory
// binds them into the object the worker registers. Its keys are the activity type names that
// workflows call and recorded histories carry, so a key is never renamed.

/** Any activity written over deps `D`. */
type Activity<D> = (deps: D, ...args: never[]) => Promise<unknown>;

/** The activities as the worker sees them: the same names and signatures, deps already given. */
export type Bound<D, T> = {
  [K in keyof T]: T[K] extends (deps: D, ...args: infer A) => infer R ? (...args: A) => R : never;
};

/** Binds `deps` into each activity of `activities`, keeping their names. */
export function bindActivities<D, T extends Record<string, Activity<D>>>(deps: D, activities: T): Bound<D, T> {
  const bound = Object.entries(activities).map(([name, run]) => [name, (...args: never[]) => run(deps, ...args)]);
  return Object.fromEntries(bound) as Bound<D, T>;
}

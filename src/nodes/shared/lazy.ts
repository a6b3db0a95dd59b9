/**
 * Functions of a module that is loaded on their first call rather than when Node-RED requires the
 * node's file: a node whose flow never uses it does not pay for loading it at start-up. The
 * module is the same one (Node's module cache), so nothing else changes.
 */
export function lazyFunctions<M extends object>(load: () => M): <K extends keyof M>(name: K) => M[K] {
  let loaded: M | undefined;
  return (name) =>
    ((...args: unknown[]) => ((loaded ??= load())[name] as (...a: unknown[]) => unknown)(...args)) as M[typeof name];
}

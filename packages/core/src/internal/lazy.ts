/**
 * A module loaded on first use: what only some programs need (the HTTP
 * client of webService actions, the SQL client of the SQL approval store,
 * the search library of the knowledge base, `effect/Config`) is imported
 * when an Effect first needs it, not when `@rolecraft/core` is imported.
 * The `import()` runs once; afterwards the module is handed over without
 * suspending the fiber.
 */
import * as Effect from "effect/Effect"

/** A module to be loaded once, and the Effects that use it. */
export interface Lazy<M> {
  /** Runs `f` with the module, loading it first if no Effect has yet. */
  readonly use: <A, E, R>(f: (module: M) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * `load` is called at most once (a failure to load is a defect: a broken
 * installation, not bad input).
 */
export const make = <M>(load: () => Promise<M>): Lazy<M> => {
  let loaded: M | undefined
  let loading: Promise<M> | undefined
  const first = Effect.promise(() => {
    loading ??= load().then((module) => {
      loaded = module
      return module
    })
    return loading
  })
  return {
    use: (f) => Effect.suspend(() => (loaded === undefined ? Effect.flatMap(first, f) : f(loaded)))
  }
}

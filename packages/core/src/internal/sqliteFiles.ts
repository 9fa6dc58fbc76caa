/**
 * Which store holds which SQLite file in this process. A thread store and an approval store on one file would
 * deadlock a gated call: the turn holds the file's write lock while the approval store waits for it. So a file
 * belongs to one kind of store: opening it for another kind is refused when the layer is built, naming the
 * file. Stores of one kind may share a file (they take turns on its lock). `:memory:` and `""` are databases of
 * their own, never shared.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as StoreBoundary from "../StoreBoundary.ts"

const held = new Map<string, { readonly kind: string; count: number }>()

const keyOf = (filename: string): string | undefined => {
  if (filename === "" || filename === ":memory:" || filename.startsWith("file:")) return undefined
  const { resolve } = process.getBuiltinModule("node:path")
  return resolve(filename)
}

/**
 * Claims `filename` for a store of `kind` until the scope closes; fails VALIDATION naming the file when a
 * store of another kind holds it.
 */
export const claim = (
  store: string,
  kind: string,
  filename: string
): Effect.Effect<void, StoreBoundary.StoreError, Scope.Scope> => {
  const key = keyOf(filename)
  if (key === undefined) return Effect.void
  return Effect.acquireRelease(
    Effect.suspend(() => {
      const holder = held.get(key)
      if (holder !== undefined && holder.kind !== kind) {
        return Effect.fail(
          new StoreBoundary.StoreError({
            store,
            category: "VALIDATION",
            field: "filename",
            message: `${store}: ${filename} is the ${holder.kind}'s SQLite file in this process; give the ${kind} a file of its own (one file for both deadlocks a gated call)`
          })
        )
      }
      if (holder === undefined) held.set(key, { kind, count: 1 })
      else holder.count++
      return Effect.void
    }),
    () =>
      Effect.sync(() => {
        const holder = held.get(key)
        if (holder !== undefined && --holder.count === 0) held.delete(key)
      })
  )
}

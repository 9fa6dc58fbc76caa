/**
 * A store opened from a URL: `memory`, `sqlite:PATH` (or a path ending
 * `.db`/`.sqlite`), or `postgres://…` over `@effect/sql-pg` (an optional
 * peer, loaded only then). The same for the approval store and the thread
 * store; anything else is VALIDATION naming the field `url`, and a
 * connection failure never quotes the URL (it may hold a password).
 */
import { StoreBoundary } from "@rolecraft/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as SqlClient from "effect/sql/SqlClient"

/** How one kind of store is made on each kind of URL. */
export interface Kind<I> {
  readonly name: string
  readonly memory: Layer.Layer<I>
  readonly sqlite: (filename: string) => Layer.Layer<I, StoreBoundary.StoreError>
  readonly sql: Layer.Layer<I, StoreBoundary.StoreError, SqlClient.SqlClient>
  readonly failed: (error: StoreBoundary.StoreError) => Layer.Layer<I, StoreBoundary.StoreError>
}

const invalidUrl = (name: string, message: string) =>
  new StoreBoundary.StoreError({ store: name, category: "VALIDATION", field: "url", message: `${name}: ${message}` })

export const fromUrl = <I>(kind: Kind<I>, url: string): Layer.Layer<I, StoreBoundary.StoreError> => {
  if (url === "memory") return kind.memory
  if (url.startsWith("sqlite:")) return kind.sqlite(url.slice("sqlite:".length))
  if (/\.(db|sqlite3?)$/i.test(url) && !url.includes("://")) return kind.sqlite(url)
  if (/^postgres(ql)?:\/\//i.test(url)) {
    const unreachable = new StoreBoundary.StoreError({
      store: `${kind.name} (postgres)`,
      category: "TRANSIENT",
      message: `${kind.name} (postgres): cannot connect`
    })
    return Layer.unwrap(
      Effect.map(
        Effect.tryPromise({
          try: () => import("@effect/sql-pg/PgClient"),
          catch: () =>
            invalidUrl(kind.name, "a postgres:// URL needs @effect/sql-pg installed beside @rolecraft/inspector")
        }),
        (PgClient) =>
          kind.sql.pipe(
            Layer.provide(PgClient.layer({ url: Redacted.make(url) })),
            // The driver's error may quote the URL: it is replaced by one that names the store only.
            Layer.catchTag("SqlError", () => kind.failed(unreachable))
          )
      )
    )
  }
  return kind.failed(invalidUrl(kind.name, "a store URL is memory, sqlite:PATH, a .db file or postgres://…"))
}

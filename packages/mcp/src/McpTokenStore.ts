/**
 * Where an MCP client keeps what OAuth gave it for each server: the tokens
 * (access and refresh), the client's registration, the PKCE code verifier of
 * an authorization in progress and what discovery found (the protected
 * resource's and the authorization server's metadata). `McpClientSdk`'s
 * OAuth reads and writes it; a store that outlives the process (the SQL
 * layer) spares the user a new browser step on every start.
 *
 * Tokens are secrets: the store keeps them as the authorization server sent
 * them (a store is the one place they must be readable), and the client
 * hides them from every error and log line it writes, and adds them to the
 * agent's known secrets.
 *
 * @example
 * ```ts
 * import { McpClientSdk, McpOAuth, McpTokenStore } from "@rolecraft/mcp"
 * import { Layer } from "effect"
 *
 * // In memory; `McpTokenStore.layerSql` keeps them in a database.
 * const client = McpClientSdk.layerOAuth({}).pipe(
 *   Layer.provide([McpTokenStore.layerMemory, McpOAuth.layerFollowRedirects])
 * )
 * ```
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as SqlClient from "effect/sql/SqlClient"
import * as StoreBoundary from "@rolecraft/core/StoreBoundary"

/**
 * What is kept for one server, as the MCP SDK's OAuth gives it (JSON
 * objects, kept verbatim: the SDK checks fields such as the issuer it stamps
 * on them when it reads them back).
 *
 * - `tokens`: `access_token`, `token_type`, `expires_in`, `refresh_token`, `scope`, …
 * - `clientInformation`: `client_id`, `client_secret`, … from registration.
 * - `codeVerifier`: the PKCE verifier of an authorization in progress (kept by
 *   0.2 clients; read for one started before an upgrade).
 * - `codeVerifiers`: the PKCE verifier of each authorization in progress, by
 *   its `state`: overlapping attempts never use each other's.
 * - `discoveryState`: the metadata discovery found.
 * - `refreshing`: who is refreshing the tokens and until when (epoch
 *   milliseconds): another process that meets it waits for that refresh
 *   instead of spending the same refresh token.
 *
 * @category models
 * @since 0.2.0
 */
export interface Entry {
  readonly tokens?: Readonly<Record<string, unknown>> | undefined
  readonly clientInformation?: Readonly<Record<string, unknown>> | undefined
  readonly codeVerifier?: string | undefined
  readonly codeVerifiers?: Readonly<Record<string, string>> | undefined
  readonly discoveryState?: Readonly<Record<string, unknown>> | undefined
  readonly refreshing?: { readonly by: string; readonly until: number } | undefined
}

/**
 * The service: `get(server)` reads the entry of a server (its URL; `{}` when
 * there is none), `set(server, entry)` replaces it, `remove(server)` forgets
 * it, and `compareAndSet(server, expected, entry)` replaces it only while it
 * still equals `expected` (as `get` returned it; `{}` for none), in one
 * atomic step of the store, answering whether it did: the client writes
 * every change this way, so two processes sharing a store never lose each
 * other's writes and only one of them spends a refresh token. Fails with
 * `StoreError` (TRANSIENT when the store cannot be reached).
 *
 * @category services
 * @since 0.2.0
 */
export class McpTokenStore extends Context.Service<
  McpTokenStore,
  {
    readonly get: (server: string) => Effect.Effect<Entry, StoreBoundary.StoreError>
    readonly set: (server: string, entry: Entry) => Effect.Effect<void, StoreBoundary.StoreError>
    readonly remove: (server: string) => Effect.Effect<void, StoreBoundary.StoreError>
    readonly compareAndSet: (
      server: string,
      expected: Entry,
      entry: Entry
    ) => Effect.Effect<boolean, StoreBoundary.StoreError>
  }
>()("@rolecraft/mcp/McpTokenStore") {}

/**
 * A store in this process's memory: what it holds is gone when the process
 * ends (each start authorizes again).
 *
 * @category layers
 * @since 0.2.0
 */
export const layerMemory: Layer.Layer<McpTokenStore> = Layer.sync(McpTokenStore, () => {
  const entries = new Map<string, Entry>()
  return McpTokenStore.of({
    get: (server) => Effect.sync(() => entries.get(server) ?? {}),
    set: (server, entry) => Effect.sync(() => void entries.set(server, entry)),
    remove: (server) => Effect.sync(() => void entries.delete(server)),
    compareAndSet: (server, expected, entry) =>
      Effect.sync(() => {
        if (JSON.stringify(entries.get(server) ?? {}) !== JSON.stringify(expected)) return false
        entries.set(server, entry)
        return true
      })
  })
})

/**
 * The table of the SQL layer: `rolecraft_mcp_oauth`.
 *
 * @category constants
 * @since 0.2.0
 */
export const table = "rolecraft_mcp_oauth"

const storeName = "the MCP token store (SQL)"

/**
 * A store in any database behind `effect/sql`'s `SqlClient` (Postgres,
 * SQLite, …): one row per server in the table `rolecraft_mcp_oauth`
 * (`server TEXT PRIMARY KEY, entry TEXT`, created if missing), the entry as
 * JSON. A database that cannot be reached is a TRANSIENT `StoreError`
 * naming the store. Needs a `SqlClient`.
 *
 * @example
 * ```ts
 * import { McpClientSdk, McpTokenStore } from "@rolecraft/mcp"
 * import { Layer } from "effect"
 *
 * // with a SqlClient layer (e.g. @effect/sql-pg's PgClient.layer) provided below it
 * const client = McpClientSdk.layerOAuth({ redirectUrl: "http://127.0.0.1:8976/callback" }).pipe(
 *   Layer.provide(McpTokenStore.layerSql)
 * )
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layerSql: Layer.Layer<McpTokenStore, StoreBoundary.StoreError, SqlClient.SqlClient> = Layer.effect(
  McpTokenStore,
  Effect.gen(function* () {
    const { SqlClient } = yield* Effect.promise(() => import("effect/sql/SqlClient"))
    const sql = (yield* Effect.service(SqlClient)).withoutTransforms()
    yield* StoreBoundary.guard(
      storeName,
      `create the table ${table}`,
      Effect.retry(sql.unsafe(`CREATE TABLE IF NOT EXISTS ${table} (server TEXT PRIMARY KEY, entry TEXT NOT NULL)`), {
        times: 2
      })
    )
    const t = sql(table)
    const parse = (text: string): Entry => {
      const value: unknown = JSON.parse(text)
      return typeof value === "object" && value !== null ? (value as Entry) : {}
    }
    return McpTokenStore.of({
      get: (server) =>
        StoreBoundary.guard(
          storeName,
          "read an entry",
          Effect.map(sql<{ readonly entry: string }>`SELECT entry FROM ${t} WHERE server = ${server}`, (rows) =>
            rows[0] === undefined ? {} : parse(rows[0].entry)
          )
        ),
      set: (server, entry) =>
        StoreBoundary.guard(
          storeName,
          "write an entry",
          Effect.asVoid(
            sql`INSERT INTO ${t} (server, entry) VALUES (${server}, ${JSON.stringify(entry)})
              ON CONFLICT (server) DO UPDATE SET entry = excluded.entry`
          )
        ),
      remove: (server) =>
        StoreBoundary.guard(
          storeName,
          "remove an entry",
          Effect.asVoid(sql`DELETE FROM ${t} WHERE server = ${server}`)
        ),
      // The row's text is what JSON.stringify wrote, so the expected entry compares as text; no row is `{}`.
      compareAndSet: (server, expected, entry) =>
        StoreBoundary.guard(
          storeName,
          "write an entry",
          Effect.gen(function* () {
            const before = JSON.stringify(expected)
            const after = JSON.stringify(entry)
            const updated = yield* sql<{ readonly server: string }>`UPDATE ${t} SET entry = ${after}
              WHERE server = ${server} AND entry = ${before} RETURNING server`
            if (updated.length > 0 || before !== "{}") return updated.length > 0
            const inserted = yield* sql<{ readonly server: string }>`INSERT INTO ${t} (server, entry)
              VALUES (${server}, ${after}) ON CONFLICT (server) DO NOTHING RETURNING server`
            return inserted.length > 0
          })
        )
    })
  })
)

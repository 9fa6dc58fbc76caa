/**
 * The approval store's storage in any database behind `effect/sql`'s
 * `SqlClient` (loaded by the first store, not at import), shared by every
 * process that reaches it: the table is created if missing with portable
 * SQL, and a `transition` is one conditional `UPDATE … RETURNING key`,
 * atomic across processes. The client's name transforms are bypassed. Every
 * statement is guarded at the store boundary: a database that cannot be
 * reached, or a connection that closes (the driver's failure or its defect),
 * is TRANSIENT naming the store.
 */
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import * as Lazy from "../lazy.ts"
import * as StoreBoundary from "../../StoreBoundary.ts"
import { fromRow, keyOf, type Row, table, usedKeyColumn } from "./row.ts"
import type { Storage } from "./storage.ts"

/** How the store names itself in messages. */
export const name = "the approval store (SQL)"

const portableSchemaSql = `CREATE TABLE IF NOT EXISTS ${table} (
  key VARCHAR(64) PRIMARY KEY,
  agent_id TEXT NOT NULL,
  action TEXT NOT NULL,
  tool TEXT,
  arguments_digest TEXT NOT NULL,
  reason TEXT NOT NULL,
  status VARCHAR(16) NOT NULL,
  requested_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  approver TEXT,
  decided_at BIGINT,
  rejection TEXT,
  used_at BIGINT,
  used_key VARCHAR(64)
)`

// Effect's SQL client is loaded by the first SQL store, not at import.
const SqlClientModule = Lazy.make((): Promise<typeof SqlClient> => import("effect/sql/SqlClient"))

/** The storage over the `SqlClient` of the context (see `ApprovalStore.sqlStorage`). */
export const storage: Effect.Effect<Storage, StoreBoundary.StoreError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = (yield* SqlClientModule.use((module) => Effect.service(module.SqlClient))).withoutTransforms()
  yield* StoreBoundary.guard(
    name,
    `create the approval table ${table}`,
    // Two processes creating the table at once may collide in the catalog: the second try sees the table.
    Effect.retry(sql.unsafe(portableSchemaSql), { times: 2 })
  )
  // A table made by an earlier version lacks the used key's column: it is added once (a second process
  // adding it at the same time fails, and the column is then there).
  yield* StoreBoundary.guard(
    name,
    `add the column ${usedKeyColumn} to ${table}`,
    Effect.catch(sql.unsafe(`SELECT ${usedKeyColumn} FROM ${table} WHERE 1 = 0`), () =>
      Effect.catch(sql.unsafe(`ALTER TABLE ${table} ADD COLUMN ${usedKeyColumn} VARCHAR(64)`), () =>
        sql.unsafe(`SELECT ${usedKeyColumn} FROM ${table} WHERE 1 = 0`)
      )
    )
  )
  const t = sql(table)
  return {
    name,
    insert: (token) =>
      StoreBoundary.guard(
        name,
        "write a token",
        sql`INSERT INTO ${t} (key, agent_id, action, tool, arguments_digest, reason, status,
          requested_at, expires_at, approver, decided_at, rejection, used_at, used_key)
        VALUES (${keyOf(token.id)}, ${token.binding.agentId}, ${token.binding.action}, ${token.binding.tool ?? null},
          ${token.binding.argumentsDigest}, ${token.reason}, ${token.status}, ${token.requestedAt}, ${token.expiresAt},
          ${token.approver ?? null}, ${token.decidedAt ?? null}, ${token.rejection ?? null}, ${token.usedAt ?? null},
          ${token.usedKey ?? null})`
      ),
    find: (tokenId) =>
      Effect.flatMap(
        StoreBoundary.guard(name, "read a token", sql<Row>`SELECT * FROM ${t} WHERE key = ${keyOf(tokenId)}`),
        (rows) => (rows[0] === undefined ? Effect.succeed(undefined) : fromRow(name, tokenId, rows[0]))
      ),
    transition: (tokenId, from, next) =>
      StoreBoundary.guard(
        name,
        "update a token",
        Effect.map(
          sql<Row>`UPDATE ${t} SET status = ${next.status}, approver = ${next.approver ?? null},
              decided_at = ${next.decidedAt ?? null}, rejection = ${next.rejection ?? null}, used_at = ${next.usedAt ?? null},
              used_key = ${next.usedKey ?? null}
            WHERE key = ${keyOf(tokenId)} AND status = ${from} RETURNING key`,
          (rows) => rows.length === 1
        )
      )
  }
})

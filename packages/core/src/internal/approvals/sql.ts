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
import {
  addedColumns,
  addedValues,
  fromKeyedRow,
  fromRow,
  keyOf,
  listedRow,
  pendingIndex,
  type Row,
  table
} from "./row.ts"
import type { Storage, Token } from "./storage.ts"

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
  used_key VARCHAR(64),
  scope_turn TEXT,
  scope_call TEXT,
  agents TEXT,
  arguments TEXT,
  definition_digest TEXT
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
  // A table made by an earlier version lacks the columns added since: each is added once (a second process
  // adding it at the same time fails, and the column is then there).
  for (const added of addedColumns) {
    const probe = sql.unsafe(`SELECT ${added.name} FROM ${table} WHERE 1 = 0`)
    yield* StoreBoundary.guard(
      name,
      `add the column ${added.name} to ${table}`,
      Effect.catch(probe, () =>
        Effect.catch(sql.unsafe(`ALTER TABLE ${table} ADD COLUMN ${added.name} ${added.type}`), () => probe)
      )
    )
  }
  // The listing's index: a database that cannot make it (no `IF NOT EXISTS` for indexes) lists without it.
  yield* Effect.ignore(Effect.retry(sql.unsafe(pendingIndex), { times: 2 }))
  const t = sql(table)
  const row = (key: string) =>
    Effect.map(
      StoreBoundary.guard(name, "read a token", sql<Row>`SELECT * FROM ${t} WHERE key = ${key}`),
      (rows): Row | undefined => rows[0]
    )
  const transition = (key: string, from: Token["status"], next: Token) =>
    StoreBoundary.guard(
      name,
      "update a token",
      Effect.map(
        sql<Row>`UPDATE ${t} SET status = ${next.status}, approver = ${next.approver ?? null},
            decided_at = ${next.decidedAt ?? null}, rejection = ${next.rejection ?? null}, used_at = ${next.usedAt ?? null},
            used_key = ${next.usedKey ?? null}
          WHERE key = ${key} AND status = ${from} RETURNING key`,
        (rows) => rows.length === 1
      )
    )
  return {
    name,
    insert: (token) =>
      StoreBoundary.guard(
        name,
        "write a token",
        sql`INSERT INTO ${t} (key, agent_id, action, tool, arguments_digest, reason, status,
          requested_at, expires_at, approver, decided_at, rejection, used_at, ${sql.literal(
            addedColumns.map((column) => column.name).join(", ")
          )})
        VALUES (${keyOf(token.id)}, ${token.binding.agentId}, ${token.binding.action}, ${token.binding.tool ?? null},
          ${token.binding.argumentsDigest}, ${token.reason}, ${token.status}, ${token.requestedAt}, ${token.expiresAt},
          ${token.approver ?? null}, ${token.decidedAt ?? null}, ${token.rejection ?? null}, ${token.usedAt ?? null},
          ${sql.join(", ", false)(addedValues(token).map((value) => sql`${value}`))})`
      ),
    find: (tokenId) =>
      Effect.flatMap(row(keyOf(tokenId)), (found) =>
        found === undefined ? Effect.succeed(undefined) : fromRow(name, tokenId, found)
      ),
    transition: (tokenId, from, next) => transition(keyOf(tokenId), from, next),
    findListed: (key) =>
      Effect.flatMap(row(key), (found) =>
        found === undefined ? Effect.succeed(undefined) : fromKeyedRow(name, key, found)
      ),
    transitionListed: transition,
    list: (query) =>
      Effect.flatMap(
        StoreBoundary.guard(
          name,
          "list the pending tokens",
          sql<Row>`SELECT * FROM ${t} WHERE ${sql.and([
            sql`status = 'pending'`,
            sql`expires_at > ${query.now}`,
            ...(query.agentId === undefined ? [] : [sql`agent_id = ${query.agentId}`]),
            ...(query.scope === undefined ? [] : [sql`scope_turn = ${query.scope.turn}`]),
            ...(query.scope?.call === undefined ? [] : [sql`scope_call = ${query.scope.call}`])
          ])} ORDER BY requested_at, key LIMIT ${query.limit}`
        ),
        (rows) => Effect.forEach(rows, (row) => listedRow(name, row))
      )
  }
})

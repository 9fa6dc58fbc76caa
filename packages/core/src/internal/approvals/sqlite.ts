/**
 * The approval store's storage in a SQLite file through Node's built-in
 * `node:sqlite` (loaded by the first store, not at import): a `transition` is
 * one conditional `UPDATE`, atomic across the processes sharing the file.
 * While another connection holds the database locked, an operation retries
 * on Effect's scheduler — the driver's own blocking wait is kept to 10 ms per
 * try — until its busy timeout has passed, then fails TRANSIENT (a
 * `StoreBoundary.StoreError`), as does any other failure of the driver (a
 * closed database). A row that does not decode is EXECUTION.
 */
import type { DatabaseSync } from "node:sqlite"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as StoreBoundary from "../../StoreBoundary.ts"
import * as SqliteFiles from "../sqliteFiles.ts"
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
import { isBusy, openDatabase, whileBusy } from "../sqliteBusy.ts"
import type { Storage, Token } from "./storage.ts"

/** How the store names itself in messages. */
export const name = "the approval store (SQLite)"

const schemaSql = `CREATE TABLE IF NOT EXISTS ${table} (
  key TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  action TEXT NOT NULL,
  tool TEXT,
  arguments_digest TEXT NOT NULL,
  reason TEXT NOT NULL,
  status TEXT NOT NULL,
  requested_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  approver TEXT,
  decided_at INTEGER,
  rejection TEXT,
  used_at INTEGER,
  used_key TEXT,
  scope_turn TEXT,
  scope_call TEXT,
  agents TEXT,
  arguments TEXT,
  definition_digest TEXT
) STRICT`

/** How long an operation waits for a lock in all (on Effect's scheduler) before it fails: 5000 milliseconds. */
export const defaultBusyTimeout = 5000

/**
 * Runs one statement; while the database is locked, tries again (see `sqliteBusy.ts`) until `budget`
 * milliseconds have passed on Effect's clock, then fails.
 */
const guard =
  (budget: number) =>
  <A>(what: string, run: () => A): Effect.Effect<A, StoreBoundary.StoreError> =>
    whileBusy(budget, run).pipe(
      Effect.mapError((cause) =>
        StoreBoundary.unavailable(
          name,
          what,
          isBusy(cause)
            ? new Error(`the database stayed locked by another connection for ${budget} ms`, { cause })
            : cause
        )
      )
    )

/** A storage on an open database (see the module doc and `ApprovalStore.sqliteStorage`). */
export const storage = (
  database: DatabaseSync,
  options?: { readonly busyTimeout?: number | undefined; readonly journal?: "wal" | undefined }
): Storage => {
  // Write-ahead logging lets readers go on while one process writes, so several processes contend far less.
  if (options?.journal === "wal") database.exec("PRAGMA journal_mode = WAL")
  database.exec(schemaSql)
  // A table made by an earlier version lacks the columns added since: each is added once (its rows have none).
  const columns = database.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as Array<{ name: string }>
  for (const added of addedColumns) {
    if (!columns.some((column) => column.name === added.name)) {
      database.exec(`ALTER TABLE ${table} ADD COLUMN ${added.name} TEXT`)
    }
  }
  database.exec(pendingIndex)
  const guarded = guard(options?.busyTimeout ?? defaultBusyTimeout)
  const insert = database.prepare(
    `INSERT INTO ${table} (key, agent_id, action, tool, arguments_digest, reason, status, requested_at, expires_at,
       approver, decided_at, rejection, used_at, ${addedColumns.map((column) => column.name).join(", ")})
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${addedColumns.map(() => "?").join(", ")})`
  )
  const find = database.prepare(`SELECT * FROM ${table} WHERE key = ?`)
  const transition = database.prepare(
    `UPDATE ${table} SET status = ?, approver = ?, decided_at = ?, rejection = ?, used_at = ?, used_key = ?
     WHERE key = ? AND status = ?`
  )
  const rowOf = (key: string) => guarded("read a token", () => find.get(key) as Row | undefined)
  const transitionOf = (key: string, from: Token["status"], next: Token) =>
    guarded(
      "update a token",
      () =>
        transition.run(
          next.status,
          next.approver ?? null,
          next.decidedAt ?? null,
          next.rejection ?? null,
          next.usedAt ?? null,
          next.usedKey ?? null,
          key,
          from
        ).changes === 1
    )
  return {
    name,
    insert: (token) =>
      guarded("write a token", () => {
        insert.run(
          keyOf(token.id),
          token.binding.agentId,
          token.binding.action,
          token.binding.tool ?? null,
          token.binding.argumentsDigest,
          token.reason,
          token.status,
          token.requestedAt,
          token.expiresAt,
          token.approver ?? null,
          token.decidedAt ?? null,
          token.rejection ?? null,
          token.usedAt ?? null,
          ...addedValues(token)
        )
      }),
    find: (tokenId) =>
      Effect.flatMap(rowOf(keyOf(tokenId)), (row) =>
        row === undefined ? Effect.succeed(undefined) : fromRow(name, tokenId, row)
      ),
    transition: (tokenId, from, next) => transitionOf(keyOf(tokenId), from, next),
    findListed: (key) =>
      Effect.flatMap(rowOf(key), (row) =>
        row === undefined ? Effect.succeed(undefined) : fromKeyedRow(name, key, row)
      ),
    transitionListed: (key, from, next) => transitionOf(key, from, next),
    list: (query) =>
      Effect.flatMap(
        guarded("list the pending tokens", () => {
          const where = ["status = 'pending'", "expires_at > ?"]
          const values: Array<string | number> = [query.now]
          if (query.agentId !== undefined) where.push("agent_id = ?") && values.push(query.agentId)
          if (query.scope !== undefined) where.push("scope_turn = ?") && values.push(query.scope.turn)
          if (query.scope?.call !== undefined) where.push("scope_call = ?") && values.push(query.scope.call)
          return database
            .prepare(`SELECT * FROM ${table} WHERE ${where.join(" AND ")} ORDER BY requested_at, key LIMIT ?`)
            .all(...values, query.limit) as unknown as ReadonlyArray<Row>
        }),
        (rows) => Effect.forEach(rows, (row) => listedRow(name, row))
      )
  }
}

/**
 * The storage of a database file opened now and closed with the scope
 * (see `ApprovalStore.layerSqlite`).
 */
export const open = (options: {
  readonly filename: string
  readonly busyTimeout?: number | undefined
}): Effect.Effect<Storage, StoreBoundary.StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const failed = (cause: unknown) => StoreBoundary.unavailable(name, `open ${options.filename}`, cause)
    yield* SqliteFiles.claim(name, "approval store", options.filename)
    const database = yield* openDatabase(options.filename).pipe(Effect.mapError(failed))
    const busyTimeout = options.busyTimeout ?? defaultBusyTimeout
    // Creating the table and preparing statements read the schema, which another process may hold locked too.
    const opened = yield* guard(busyTimeout)("open its table", () =>
      storage(database, { busyTimeout, journal: "wal" })
    ).pipe(Effect.mapError((error) => failed(error.cause ?? error)))
    return opened
  })

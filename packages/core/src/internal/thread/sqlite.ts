/**
 * The thread store's storage in a SQLite file through Node's built-in `node:sqlite` (loaded by the first store,
 * not at import). A turn holds its thread with SQLite's own lock: `BEGIN IMMEDIATE` takes the database's write lock
 * for the whole turn, and `COMMIT` (the turn succeeded) or `ROLLBACK` (it failed or was interrupted) lets it go —
 * also when the process dies, since the lock is the file's. SQLite locks a whole database, not a row: while a turn
 * runs, every other turn on the same file waits, on any thread, in this process (for the store's one connection,
 * through Effect's `Semaphore`) or another (retrying `BEGIN IMMEDIATE` on Effect's scheduler, the driver's own
 * blocking wait kept to 10 ms a try). A turn that waited its `wait` in vain fails TRANSIENT naming the thread; any
 * other failure of the driver is TRANSIENT naming the store. Reads go on meanwhile (write-ahead logging).
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as StoreBoundary from "../../StoreBoundary.ts"
import * as SqliteFiles from "../sqliteFiles.ts"
import { isBusy, openDatabase, whileBusy } from "../sqliteBusy.ts"
import { busyMessage, exchangeTable, type Reader, type Storage, threadTable, type Writer } from "./storage.ts"

/** How the store names itself in messages. */
export const name = "the thread store (SQLite)"

const schemaSql = `CREATE TABLE IF NOT EXISTS ${threadTable} (
  id TEXT PRIMARY KEY,
  exchanges INTEGER NOT NULL,
  summary TEXT,
  summary_through INTEGER NOT NULL,
  paused TEXT
) STRICT;
CREATE TABLE IF NOT EXISTS ${exchangeTable} (
  thread_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  messages TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  call_ids TEXT NOT NULL,
  PRIMARY KEY (thread_id, seq)
) STRICT`

/** How long opening the file waits for another process's lock on its schema. */
const openBudget = 5000

const busy = (threadId: string, wait: Duration.Duration) =>
  new StoreBoundary.StoreError({ store: name, category: "TRANSIENT", message: busyMessage(name, threadId, wait) })

/** One statement run now: a failure of the driver is TRANSIENT naming what could not be done. */
const run = <A>(what: string, statement: () => A): Effect.Effect<A, StoreBoundary.StoreError> =>
  Effect.try({ try: statement, catch: (cause) => StoreBoundary.unavailable(name, what, cause) })

interface Statements {
  readonly head: StatementSync
  readonly index: StatementSync
  readonly exchanges: StatementSync
  readonly putExchange: StatementSync
  readonly putHead: StatementSync
  readonly clearExchanges: StatementSync
  readonly clearHead: StatementSync
}

const prepare = (database: DatabaseSync): Statements => ({
  head: database.prepare(`SELECT exchanges, summary, summary_through, paused FROM ${threadTable} WHERE id = ?`),
  index: database.prepare(`SELECT seq, tokens, call_ids FROM ${exchangeTable} WHERE thread_id = ? ORDER BY seq`),
  exchanges: database.prepare(
    `SELECT seq, messages, tokens, call_ids FROM ${exchangeTable} WHERE thread_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`
  ),
  putExchange: database.prepare(
    `INSERT INTO ${exchangeTable} (thread_id, seq, messages, tokens, call_ids) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (thread_id, seq) DO UPDATE SET messages = excluded.messages, tokens = excluded.tokens,
       call_ids = excluded.call_ids`
  ),
  putHead: database.prepare(
    `INSERT INTO ${threadTable} (id, exchanges, summary, summary_through, paused) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET exchanges = excluded.exchanges, summary = excluded.summary,
       summary_through = excluded.summary_through, paused = excluded.paused`
  ),
  clearExchanges: database.prepare(`DELETE FROM ${exchangeTable} WHERE thread_id = ?`),
  clearHead: database.prepare(`DELETE FROM ${threadTable} WHERE id = ?`)
})

const readerOf = (statements: Statements, threadId: string): Reader => ({
  head: run("read a thread", () => statements.head.get(threadId)),
  index: run("read a thread's exchanges", () => statements.index.all(threadId)),
  exchanges: (from, to) => run("read a thread's exchanges", () => statements.exchanges.all(threadId, from, to))
})

const writerOf = (statements: Statements, threadId: string): Writer => ({
  ...readerOf(statements, threadId),
  putExchange: (row) =>
    run("write an exchange", () => {
      statements.putExchange.run(threadId, row.seq, row.messages, row.tokens, row.call_ids)
    }),
  putHead: (row) =>
    run("write a thread", () => {
      const values: ReadonlyArray<SQLInputValue> = [
        threadId,
        row.exchanges,
        row.summary,
        row.summary_through,
        row.paused
      ]
      statements.putHead.run(...values)
    }),
  clear: run("delete a thread", () => {
    statements.clearExchanges.run(threadId)
    statements.clearHead.run(threadId)
  })
})

/** A storage on an open database (see the module doc). */
export const storage = (database: DatabaseSync): Storage => {
  database.exec("PRAGMA journal_mode = WAL")
  database.exec(schemaSql)
  const statements = prepare(database)
  // The one connection runs one transaction at a time: turns of this process take turns on it.
  const connection = Semaphore.makeUnsafe(1)

  /** `BEGIN IMMEDIATE`, waiting out another process's turn until `deadline` (Clock millis). */
  const begin = (threadId: string, wait: Duration.Duration, deadline: number) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      whileBusy(deadline - now, () => database.exec("BEGIN IMMEDIATE")).pipe(
        Effect.mapError((cause) =>
          isBusy(cause) ? busy(threadId, wait) : StoreBoundary.unavailable(name, "begin a turn", cause)
        )
      )
    )

  const rollback = Effect.sync(() => {
    if (database.isOpen && database.isTransaction) database.exec("ROLLBACK")
  })

  // Waiting (for this process's connection, then for another process's turn) can be interrupted; once the
  // transaction is open, it is committed when the body succeeds and rolled back in every other case.
  const hold: Storage["hold"] = (threadId, wait, body) =>
    Effect.flatMap(Clock.currentTimeMillis, (start) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(
          restore(
            connection
              .take(1)
              .pipe(Effect.timeoutOrElse({ duration: wait, orElse: () => Effect.fail(busy(threadId, wait)) }))
          ),
          () =>
            restore(
              Effect.andThen(
                begin(threadId, wait, start + Math.min(Duration.toMillis(wait), 2_147_483_647)),
                Effect.tap(body(writerOf(statements, threadId)), () =>
                  run("commit a turn", () => database.exec("COMMIT"))
                )
              )
            ).pipe(
              Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : rollback)),
              Effect.ensuring(connection.release(1))
            )
        )
      )
    )

  return {
    name,
    hold,
    read: (threadId, body) => body(readerOf(statements, threadId))
  }
}

/** The storage of a database file opened now and closed with the scope (see `ThreadStore.layerSqlite`). */
export const open = (options: {
  readonly filename: string
}): Effect.Effect<Storage, StoreBoundary.StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const failed = (cause: unknown) => StoreBoundary.unavailable(name, `open ${options.filename}`, cause)
    yield* SqliteFiles.claim(name, "thread store", options.filename)
    const database = yield* openDatabase(options.filename).pipe(Effect.mapError(failed))
    // Creating the tables reads the schema, which another process may hold locked.
    return yield* whileBusy(openBudget, () => storage(database)).pipe(Effect.mapError(failed))
  })

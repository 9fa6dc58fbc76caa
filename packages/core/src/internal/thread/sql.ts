/**
 * The thread store's storage in any database behind `effect/sql`'s `SqlClient` (loaded by the first store, not at
 * import), shared by every process that reaches it. A turn holds its thread with the database's own row lock: a
 * transaction of its own (never joined to one of the caller's) takes the thread's row with `SELECT … FOR UPDATE`
 * (the row inserted first if the thread is new) and keeps it until `COMMIT` (the turn succeeded) or `ROLLBACK` (it
 * failed or was interrupted; the database rolls back by itself when the process or its connection dies). A second
 * turn on the same thread waits in the database, up to its `wait` (`lock_timeout`), then fails TRANSIENT naming the
 * thread; turns on other threads never wait. Each running turn keeps one connection of the client's pool. The turn
 * itself runs outside that transaction: SQL the turn's actions run goes through the pool as usual. Every statement
 * is guarded at the store boundary: a database that cannot be reached is TRANSIENT naming the store.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as SqlClient from "effect/sql/SqlClient"
import * as StoreBoundary from "../../StoreBoundary.ts"
import * as Lazy from "../lazy.ts"
import { busyMessage, exchangeTable, type Reader, type Storage, threadTable, type Writer } from "./storage.ts"

/** How the store names itself in messages. */
export const name = "the thread store (SQL)"

const schemaSql = [
  `CREATE TABLE IF NOT EXISTS ${threadTable} (
  id TEXT PRIMARY KEY,
  exchanges INTEGER NOT NULL,
  summary TEXT,
  summary_through INTEGER NOT NULL,
  paused TEXT
)`,
  `CREATE TABLE IF NOT EXISTS ${exchangeTable} (
  thread_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  messages TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  call_ids TEXT NOT NULL,
  PRIMARY KEY (thread_id, seq)
)`
]

// Effect's SQL client is loaded by the first SQL store, not at import.
const SqlClientModule = Lazy.make((): Promise<typeof SqlClient> => import("effect/sql/SqlClient"))

/** Whether a failure is the database giving up waiting for a lock (`lock_timeout`). */
const isLockTimeout = (error: unknown): boolean =>
  (error as { readonly reason?: { readonly _tag?: unknown } } | undefined)?.reason?._tag === "LockTimeoutError"

/** The body of a held thread failed: the transaction rolls back, and the failure goes on as it was. */
class Aborted {
  readonly cause: Cause.Cause<unknown>
  constructor(cause: Cause.Cause<unknown>) {
    this.cause = cause
  }
}

/** The storage over the `SqlClient` of the context (see `ThreadStore.sqlStorage`). */
export const storage: Effect.Effect<Storage, StoreBoundary.StoreError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = (yield* SqlClientModule.use((module) => Effect.service(module.SqlClient))).withoutTransforms()
  // Two processes creating the tables at once may collide in the catalog: the second try sees the table.
  for (const statement of schemaSql) {
    yield* StoreBoundary.guard(name, "create the thread tables", Effect.retry(sql.unsafe(statement), { times: 2 }))
  }
  const threads = sql(threadTable)
  const exchanges = sql(exchangeTable)
  const guard = <A, E, R>(what: string, statement: Effect.Effect<A, E, R>) => StoreBoundary.guard(name, what, statement)
  // Runs an effect without this client's transaction in its context (its SQL then goes through the pool).
  const outside = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.updateContext(effect, (context: Context.Context<R>) =>
      Context.omit(sql.transactionService)(context as Context.Context<unknown>)
    ) as Effect.Effect<A, E, R>

  const readerOf = (threadId: string): Reader => ({
    head: Effect.map(
      guard(
        "read a thread",
        sql`SELECT exchanges, summary, summary_through, paused FROM ${threads} WHERE id = ${threadId}`
      ),
      (rows) => rows[0]
    ),
    index: guard(
      "read a thread's exchanges",
      sql`SELECT seq, tokens, call_ids FROM ${exchanges} WHERE thread_id = ${threadId} ORDER BY seq`
    ),
    exchanges: (from, to) =>
      guard(
        "read a thread's exchanges",
        sql`SELECT seq, messages, tokens, call_ids FROM ${exchanges}
          WHERE thread_id = ${threadId} AND seq BETWEEN ${from} AND ${to} ORDER BY seq`
      )
  })

  /** The writer of a held thread: its statements run on the transaction's connection `tx`. */
  const writerOf = (threadId: string, tx: SqlClient.TransactionConnection.Service): Writer => {
    const inTx = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, sql.transactionService, tx)
    const reader = readerOf(threadId)
    return {
      head: inTx(reader.head),
      index: inTx(reader.index),
      exchanges: (from, to) => inTx(reader.exchanges(from, to)),
      putExchange: (row) =>
        inTx(
          guard(
            "write an exchange",
            sql`INSERT INTO ${exchanges} (thread_id, seq, messages, tokens, call_ids)
              VALUES (${threadId}, ${row.seq}, ${row.messages}, ${row.tokens}, ${row.call_ids})
              ON CONFLICT (thread_id, seq) DO UPDATE SET messages = excluded.messages, tokens = excluded.tokens,
                call_ids = excluded.call_ids`
          )
        ),
      putHead: (row) =>
        inTx(
          guard(
            "write a thread",
            sql`UPDATE ${threads} SET exchanges = ${row.exchanges}, summary = ${row.summary},
              summary_through = ${row.summary_through}, paused = ${row.paused} WHERE id = ${threadId}`
          )
        ),
      clear: inTx(
        guard(
          "delete a thread",
          Effect.andThen(
            sql`DELETE FROM ${exchanges} WHERE thread_id = ${threadId}`,
            sql`DELETE FROM ${threads} WHERE id = ${threadId}`
          )
        )
      )
    }
  }

  const hold: Storage["hold"] = <A, E, R>(
    threadId: string,
    wait: Duration.Duration,
    body: (writer: Writer) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | StoreBoundary.StoreError, R> => {
    // `lock_timeout` 0 would mean no limit: a wait of 0 is the shortest the database knows, 1 ms.
    const timeout = `${Math.max(1, Math.min(Math.round(Duration.toMillis(wait)), 2_147_483_647))}ms`
    const locked = Effect.gen(function* () {
      yield* sql`SELECT set_config('lock_timeout', ${timeout}, true)`
      // A new thread's row is inserted in the turn's transaction: a second turn waits on it like on a row lock.
      yield* sql`INSERT INTO ${threads} (id, exchanges, summary_through) VALUES (${threadId}, 0, 0)
        ON CONFLICT (id) DO NOTHING`
      yield* sql`SELECT id FROM ${threads} WHERE id = ${threadId} FOR UPDATE`
      const tx = yield* sql.transactionService
      // The turn runs outside the transaction (its own SQL goes through the pool); its failure rolls it back.
      const exit = yield* Effect.exit(outside(body(writerOf(threadId, tx))))
      if (Exit.isFailure(exit)) return yield* Effect.fail(new Aborted(exit.cause))
      return exit.value
    })
    return sql.withTransaction(locked).pipe(
      Effect.catchCause((cause): Effect.Effect<never, E | StoreBoundary.StoreError> => {
        const aborted = Cause.findErrorOption(cause)
        if (aborted._tag === "Some" && aborted.value instanceof Aborted) {
          return Effect.failCause(aborted.value.cause as Cause.Cause<E>)
        }
        if (Cause.hasInterrupts(cause)) return Effect.failCause(cause as Cause.Cause<never>)
        const error = Cause.squash(cause)
        return Effect.fail(
          isLockTimeout(error)
            ? new StoreBoundary.StoreError({
                store: name,
                category: "TRANSIENT",
                message: busyMessage(name, threadId, wait),
                cause: error
              })
            : error instanceof StoreBoundary.StoreError
              ? error
              : StoreBoundary.unavailable(name, "hold a thread", error)
        )
      }),
      outside
    ) as Effect.Effect<A, E | StoreBoundary.StoreError, R>
  }

  return {
    name,
    hold,
    read: (threadId, body) => body(readerOf(threadId))
  }
})

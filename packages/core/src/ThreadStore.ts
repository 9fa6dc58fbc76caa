/**
 * The thread store: where conversations are kept between chat turns, so that
 * `agent.chat(input, { thread: "trip-42" })` loads the thread's history, runs
 * the turn and appends it. Three implementations, with the same rules:
 * {@link layerMemory} (process memory), {@link layerSqlite} (a SQLite file
 * through Node's built-in `node:sqlite`, so threads survive a restart) and
 * {@link layerSql} (any database behind `effect/sql`'s `SqlClient`, such as
 * Postgres through `@effect/sql-pg`, shared by several processes).
 *
 * - A thread is a list of **exchanges**: a turn's user message and every
 *   message of the turn after it (the model's replies, its tool calls and
 *   their answers). The thread never keeps a system message: each turn puts
 *   its own first.
 * - A turn holds its thread while it runs. A second turn on the same thread
 *   waits for the first (up to its `wait`, default 60 seconds), then fails
 *   TRANSIENT naming the thread; it then loads the history the first one
 *   wrote. The lock is the database's own: Effect's `Semaphore` per thread
 *   in memory; `BEGIN IMMEDIATE` in SQLite, which locks the whole file — one
 *   turn at a time per file, on any thread; a row lock (`SELECT … FOR
 *   UPDATE`) in a transaction of its own in SQL — one turn at a time per
 *   thread, each keeping a pooled connection while it runs. A process that
 *   dies lets go of its locks with its connections.
 * - What a turn writes takes effect when it ends: a turn that fails or is
 *   interrupted leaves the thread as it was.
 * - The store boundary (`StoreBoundary`): a thread id the store cannot hold
 *   (a NUL, a lone surrogate, more than 1,024 characters) is VALIDATION
 *   naming `thread`; a store that cannot be reached is TRANSIENT naming it;
 *   a row that does not decode is EXECUTION naming the thread, the row and
 *   the field. Messages are stored as JSON text, so any text a model or a
 *   user sends is kept exactly.
 *
 * @example
 * ```ts
 * import { Agent, type Role, ThreadStore } from "@rolecraft/core"
 * import { Effect } from "effect"
 *
 * declare const Guide: Role.Any
 *
 * // needs a LanguageModel layer; the thread outlives the process in a SQLite file
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "guide", roles: [Guide] })
 *   yield* agent.chat("Three things to see in Lisbon?", { thread: "trip-42" })
 *   return yield* agent.chat("And in Porto?", { thread: "trip-42" }) // the model sees the first exchange too
 * }).pipe(Effect.scoped, Effect.provide(ThreadStore.layerSqlite({ filename: "threads.db" })))
 * ```
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { DatabaseSync } from "node:sqlite"
import type * as SqlClient from "effect/sql/SqlClient"
import type { StoreError } from "./StoreBoundary.ts"
import * as Memory from "./internal/thread/memory.ts"
import * as Rules from "./internal/thread/rules.ts"
import * as Sql from "./internal/thread/sql.ts"
import * as Sqlite from "./internal/thread/sqlite.ts"
import type { Storage } from "./internal/thread/storage.ts"

export type {
  ExchangeRow,
  HeadRow,
  Reader,
  Storage,
  Writer
} from "./internal/thread/storage.ts"

/**
 * A thread as {@link ThreadStore}'s `read` gives it: `messages` are its
 * exchanges' messages in order (no system message), `exchanges` how many it
 * has, `summary` the summary of its oldest exchanges when a turn's budget
 * summarised them (`History.summarize`), and `paused` the state of its last
 * turn when that turn waits for approvals (pass it to `agent.resume` with
 * `{ thread }`).
 *
 * @category models
 * @since 0.2.0
 */
export type Thread = Rules.Thread

/**
 * A thread as a chat turn holds it (see the service's `hold`): its `head`
 * (how many exchanges, its summary, its paused turn), its `index` (every
 * exchange's number, estimated tokens and tool call ids, without messages),
 * `exchanges(from, to)` with their messages, and `write`, which puts one
 * exchange (numbered from 1; the same number again replaces it) and the
 * thread's summary and paused turn, taking effect when the turn succeeds.
 *
 * @category models
 * @since 0.2.0
 */
export type Held = Rules.Held

/**
 * What the {@link ThreadStore} service offers (see its docs).
 *
 * @category models
 * @since 0.2.0
 */
export type Service = Rules.Service

/**
 * The thread store service.
 *
 * - `read(threadId)`: the thread as last written ({@link Thread}); a thread
 *   never written is empty (`exchanges: 0`).
 * - `delete(threadId)`: removes the thread (waiting for a turn that holds
 *   it).
 * - `hold(threadId, body, { wait })`: what chat turns use — runs `body`
 *   holding the thread (see the module doc), waiting up to `wait` (default
 *   60 seconds) for another holder.
 * - `maxExchanges`: the most exchanges a thread holds (default 10,000): a
 *   turn on a full thread is refused as VALIDATION before it runs.
 *
 * Each fails with `StoreBoundary.StoreError` (VALIDATION, TRANSIENT or
 * EXECUTION, see the module doc).
 *
 * @category services
 * @since 0.2.0
 */
export class ThreadStore extends Context.Service<ThreadStore, Rules.Service>()("@rolecraft/core/ThreadStore") {}

/**
 * How long a turn waits for a thread another turn holds before it fails
 * TRANSIENT: 60 seconds.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaultWait: Duration.Duration = Rules.defaultWait

/**
 * The most exchanges a thread holds unless the store is made with another
 * cap: 10,000.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaultMaxExchanges: number = Rules.defaultMaxExchanges

/**
 * Builds a store's rules (thread ids checked, rows decoded, exchanges
 * written with their tokens and call ids) on a {@link Storage}.
 * `maxExchanges` defaults to {@link defaultMaxExchanges}.
 *
 * @category constructors
 * @since 0.2.0
 */
export const make: (
  storage: Storage,
  options?: { readonly maxExchanges?: number | undefined }
) => ThreadStore["Service"] = Rules.make

/**
 * A storage in process memory: each thread has its own semaphore, so turns
 * on different threads never wait for each other.
 *
 * @category storage
 * @since 0.2.0
 */
export const memoryStorage: () => Storage = Memory.storage

/**
 * A fresh in-memory store (what an agent uses when no `ThreadStore` is
 * provided). Threads live as long as the store value.
 *
 * @category constructors
 * @since 0.2.0
 */
export const makeMemory = (): ThreadStore["Service"] => make(memoryStorage())

/**
 * An in-memory store as a layer; each build of the layer is a fresh store.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerMemory: Layer.Layer<ThreadStore> = Layer.sync(ThreadStore, makeMemory)

/**
 * A storage on an open `node:sqlite` database (the tables
 * `rolecraft_threads` and `rolecraft_thread_exchanges` are created if
 * missing; the file is switched to write-ahead logging). Throws when the
 * tables cannot be created.
 *
 * @category storage
 * @since 0.2.0
 */
export const sqliteStorage: (database: DatabaseSync) => Storage = Sqlite.storage

/**
 * A durable store in a SQLite file through Node's built-in `node:sqlite` (no
 * dependency): threads survive a restart of the process and are shared by
 * the processes that open the same file. The database is opened when the
 * layer is built and closed when its scope closes. A turn holds the file's
 * write lock (`BEGIN IMMEDIATE`) while it runs: one turn at a time per file,
 * whatever its thread — for many conversations at once, use
 * {@link layerSql} on Postgres. `maxExchanges` defaults to
 * {@link defaultMaxExchanges}.
 *
 * Fails with a TRANSIENT `StoreError` when the file cannot be opened or is
 * not a database.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, ThreadStore } from "@rolecraft/core"
 *
 * declare const agent: Agent.Agent
 * const turn = agent.chat("Where did we leave off?", { thread: "trip-42" })
 * const kept = turn.pipe(Effect.provide(ThreadStore.layerSqlite({ filename: "threads.db" })))
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layerSqlite = (options: {
  readonly filename: string
  readonly maxExchanges?: number | undefined
}): Layer.Layer<ThreadStore, StoreError> =>
  Layer.effect(
    ThreadStore,
    Effect.map(Sqlite.open(options), (storage) => make(storage, { maxExchanges: options.maxExchanges }))
  )

/**
 * A storage over `effect/sql`'s `SqlClient` (the tables `rolecraft_threads`
 * and `rolecraft_thread_exchanges` are created if missing, with portable
 * SQL). The client's name transforms are bypassed. Fails with a TRANSIENT
 * `StoreError` when the tables cannot be created.
 *
 * @category storage
 * @since 0.2.0
 */
export const sqlStorage: Effect.Effect<Storage, StoreError, SqlClient.SqlClient> = Sql.storage

/**
 * A durable store in any database behind `effect/sql`'s `SqlClient`, shared
 * by every process that reaches it: with Postgres (`@effect/sql-pg`), a turn
 * in one process and the next in another continue the same thread, and two
 * turns on one thread at once run one after the other. Each running turn
 * keeps one connection of the client's pool (waiting turns too).
 *
 * Fails with a TRANSIENT `StoreError` when the tables cannot be created;
 * afterwards, a database that cannot be reached is a TRANSIENT `StoreError`
 * naming the store.
 *
 * @example
 * ```ts
 * import { PgClient } from "@effect/sql-pg"
 * import { Layer, Redacted } from "effect"
 * import { ThreadStore } from "@rolecraft/core"
 *
 * const threads = ThreadStore.layerSql.pipe(
 *   Layer.provide(PgClient.layer({ url: Redacted.make("postgres://app@db.internal/app") }))
 * )
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layerSql: Layer.Layer<ThreadStore, StoreError, SqlClient.SqlClient> = Layer.effect(
  ThreadStore,
  Effect.map(sqlStorage, (storage) => make(storage))
)

/**
 * What a thread store keeps, and the contract each storage (memory, SQLite, SQL) fulfils: a thread is one head row
 * (how many exchanges it has, its summary, its paused turn) and one row per exchange (its messages as JSON text,
 * their estimated tokens, the ids of its tool calls). A storage holds a thread for one turn — one holder at a time,
 * the others waiting — and writes what the turn wrote when the turn succeeds, nothing when it fails. Rows are
 * handed back as the driver read them: the thread store decodes them at the store boundary.
 */
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type { StoreError } from "../../StoreBoundary.ts"

/** The thread table's name. */
export const threadTable = "rolecraft_threads"

/** The exchange table's name. */
export const exchangeTable = "rolecraft_thread_exchanges"

/**
 * A thread's head as written: `exchanges` is the number of the last exchange (exchanges are numbered from 1),
 * `summary_through` the last exchange folded into `summary` (0 for none), `paused` the paused turn (JSON) or null.
 *
 * @category storage
 * @since 0.2.0
 */
export interface HeadRow {
  readonly exchanges: number
  readonly summary: string | null
  readonly summary_through: number
  readonly paused: string | null
}

/**
 * One exchange as written: its number, its messages (a JSON array of `Prompt.Message`), their estimated tokens and
 * the ids of its tool calls (a JSON array of strings).
 *
 * @category storage
 * @since 0.2.0
 */
export interface ExchangeRow {
  readonly seq: number
  readonly messages: string
  readonly tokens: number
  readonly call_ids: string
}

/**
 * Reads one thread: its head (`undefined` for a thread never written), every exchange's number, tokens and call ids
 * (`index`), and the exchanges numbered `from` to `to` (inclusive) with their messages. Rows are unchecked.
 *
 * @category storage
 * @since 0.2.0
 */
export interface Reader {
  readonly head: Effect.Effect<unknown, StoreError>
  readonly index: Effect.Effect<ReadonlyArray<unknown>, StoreError>
  readonly exchanges: (from: number, to: number) => Effect.Effect<ReadonlyArray<unknown>, StoreError>
}

/**
 * A thread held for a turn: what {@link Reader} reads, and writes that take effect when the turn succeeds — an
 * exchange written again replaces the one of its number; `clear` removes the thread.
 *
 * @category storage
 * @since 0.2.0
 */
export interface Writer extends Reader {
  readonly putExchange: (row: ExchangeRow) => Effect.Effect<void, StoreError>
  readonly putHead: (row: HeadRow) => Effect.Effect<void, StoreError>
  readonly clear: Effect.Effect<void, StoreError>
}

/**
 * Where a thread store keeps its threads.
 *
 * - `name`: how the store names itself in messages (e.g. `"the thread store (SQLite)"`).
 * - `hold(threadId, wait, body)`: runs `body` holding the thread: while it runs, no other `hold` of the same thread
 *   runs (here or in another process sharing the storage); a second one waits up to `wait`, then fails TRANSIENT
 *   (`StoreError`) naming the thread. What `body` wrote takes effect when it succeeds, and none of it when it fails
 *   or is interrupted.
 * - `read(threadId, body)`: runs `body` on the thread as last written, without holding it.
 *
 * @category storage
 * @since 0.2.0
 */
export interface Storage {
  readonly name: string
  readonly hold: <A, E, R>(
    threadId: string,
    wait: Duration.Duration,
    body: (writer: Writer) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | StoreError, R>
  readonly read: <A, E, R>(
    threadId: string,
    body: (reader: Reader) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | StoreError, R>
}

/** The failure of a `hold` that waited `wait` for the thread in vain. */
export const busyMessage = (store: string, threadId: string, wait: Duration.Duration): string => {
  const millis = Duration.toMillis(wait)
  const waited = millis >= 1000 && millis % 1000 === 0 ? `${millis / 1000} s` : `${millis} ms`
  return `${store}: thread ${JSON.stringify(threadId)} is held by another turn; waited ${waited} for it`
}

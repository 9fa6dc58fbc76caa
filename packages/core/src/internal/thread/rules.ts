/**
 * A thread store's rules, the same on every storage: a thread id is checked at the store boundary before anything
 * is read or written (VALIDATION naming `thread`), rows read back are decoded (EXECUTION naming the store, the
 * thread, the row and the field), and an exchange is written with its estimated tokens and the ids of its tool
 * calls, so a turn can choose what fits its budget and keep ids unique across the whole thread from the index alone.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { PausedState as PausedStateSchema, type PausedState } from "../../Chat.ts"
import * as History from "../../History.ts"
import * as Prompt from "../../Prompt.ts"
import * as StoreBoundary from "../../StoreBoundary.ts"
import * as ToolCallId from "../../ToolCallId.ts"
import type { HeadRow, Reader, Storage } from "./storage.ts"

const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

// A paused turn's state, without the history, which the thread's rows hold.
const { messages: _messages, ...pausedFields } = PausedStateSchema.fields

/**
 * A paused turn as a thread keeps it: `Chat.PausedState` without its `messages` (the thread's rows hold the
 * history), with the turn's system message, where its exchange starts (`from`) and whether a summary was sent.
 */
export const Paused = Schema.Struct({
  ...pausedFields,
  system: Schema.String,
  from: NonNegativeInt,
  summary: Schema.Boolean
})

export type Paused = typeof Paused.Type

/** A thread's head, decoded. */
export interface Head {
  readonly exchanges: number
  readonly summary: { readonly text: string; readonly through: number } | undefined
  readonly paused: Paused | undefined
}

/** One exchange's place in the thread: its number, estimated tokens and call ids. */
export interface IndexEntry {
  readonly seq: number
  readonly tokens: number
  readonly callIds: ReadonlyArray<string>
}

/** One exchange, decoded. */
export interface Exchange extends IndexEntry {
  readonly messages: ReadonlyArray<Prompt.Message>
}

/** A thread held for a turn (see `ThreadStore.Held`). */
export interface Held {
  readonly id: string
  readonly head: Head
  readonly index: Effect.Effect<ReadonlyArray<IndexEntry>, StoreBoundary.StoreError>
  readonly exchanges: (from: number, to: number) => Effect.Effect<ReadonlyArray<Exchange>, StoreBoundary.StoreError>
  readonly write: (update: {
    readonly exchange: { readonly seq: number; readonly messages: ReadonlyArray<Prompt.Message> }
    readonly summary: Head["summary"]
    readonly paused: Paused | undefined
  }) => Effect.Effect<void, StoreBoundary.StoreError>
}

/** A thread as `ThreadStore.read` gives it. */
export interface Thread {
  readonly id: string
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly exchanges: number
  readonly summary: string | undefined
  readonly paused: PausedState | undefined
}

/** The store service (see `ThreadStore.ThreadStore`). */
export interface Service {
  readonly name: string
  readonly maxExchanges: number
  readonly read: (threadId: string) => Effect.Effect<Thread, StoreBoundary.StoreError>
  readonly delete: (threadId: string) => Effect.Effect<void, StoreBoundary.StoreError>
  readonly hold: <A, E, R>(
    threadId: string,
    body: (thread: Held) => Effect.Effect<A, E, R>,
    options?: { readonly wait?: Duration.Input | undefined }
  ) => Effect.Effect<A, E | StoreBoundary.StoreError, R>
}

/** How long a turn waits for a thread another turn holds: 60 seconds. */
export const defaultWait: Duration.Duration = Duration.seconds(60)

/** The most exchanges a thread holds: 10,000. */
export const defaultMaxExchanges = 10_000

const HeadSchema = Schema.Struct({
  exchanges: NonNegativeInt,
  summary: Schema.NullOr(Schema.String),
  summary_through: NonNegativeInt,
  paused: Schema.NullOr(Schema.String)
})

const IndexSchema = Schema.Struct({
  seq: NonNegativeInt,
  tokens: NonNegativeInt,
  call_ids: Schema.Array(Schema.String)
})

const ExchangeSchema = Schema.Struct({
  seq: NonNegativeInt,
  messages: Schema.Array(Prompt.Message),
  tokens: NonNegativeInt,
  call_ids: Schema.Array(Schema.String)
})

// Decoders made once: a turn decodes every exchange's index row on each load.
const IndexRows = { one: IndexSchema, all: Schema.decodeUnknownExit(Schema.Array(IndexSchema)) }
const ExchangeRows = { one: ExchangeSchema, all: Schema.decodeUnknownExit(Schema.Array(ExchangeSchema)) }

/** JSON text read from a row: parsed, or left as it is for the schema to refuse. */
const parsed = (text: unknown): unknown => {
  if (typeof text !== "string") return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Drivers may read integer columns as strings or bigints. */
const integer = (value: unknown): unknown =>
  typeof value === "bigint" || (typeof value === "string" && /^\d+$/.test(value)) ? Number(value) : value

const label = (threadId: string) =>
  `thread ${JSON.stringify(threadId.length > 100 ? `${threadId.slice(0, 100)}…` : threadId)}`

const decodeHead = (store: string, threadId: string, row: unknown): Effect.Effect<Head, StoreBoundary.StoreError> => {
  if (row === undefined || row === null) return Effect.succeed({ exchanges: 0, summary: undefined, paused: undefined })
  const raw = row as Record<string, unknown>
  const where = label(threadId)
  return Effect.flatMap(
    StoreBoundary.decodeRow(store, where, HeadSchema, {
      ...raw,
      exchanges: integer(raw.exchanges),
      summary_through: integer(raw.summary_through)
    }),
    (head) =>
      Effect.map(
        head.paused === null
          ? Effect.succeed(undefined)
          : StoreBoundary.decodeRow(store, `${where} (its paused turn)`, Paused, parsed(head.paused)),
        (paused): Head => ({
          exchanges: head.exchanges,
          summary: head.summary === null ? undefined : { text: head.summary, through: head.summary_through },
          paused
        })
      )
  )
}

/**
 * Rows decoded with `schema` in one pass (what a turn reads on every load); when one does not decode, the first
 * such row is decoded alone for an error naming it.
 */
const decodeRows = <S extends Schema.Top & { readonly DecodingServices: never }>(
  store: string,
  threadId: string,
  schema: {
    readonly one: S
    readonly all: (rows: ReadonlyArray<unknown>) => Exit.Exit<ReadonlyArray<S["Type"]>, unknown>
  },
  rows: ReadonlyArray<unknown>,
  prepare: (raw: Record<string, unknown>) => unknown
): Effect.Effect<ReadonlyArray<S["Type"]>, StoreBoundary.StoreError> => {
  const prepared = rows.map((row) => prepare(row as Record<string, unknown>))
  const decoded = schema.all(prepared)
  if (Exit.isSuccess(decoded)) return Effect.succeed(decoded.value)
  const one = Schema.decodeUnknownExit(schema.one)
  const at = prepared.findIndex((value) => Exit.isFailure(one(value)))
  const raw = (rows[Math.max(0, at)] ?? {}) as Record<string, unknown>
  return Effect.flatMap(
    StoreBoundary.decodeRow(
      store,
      `${label(threadId)} exchange ${String(raw.seq)}`,
      schema.one,
      prepared[Math.max(0, at)]
    ),
    () => Effect.die("a row that does not decode in a list decodes alone")
  )
}

const decodeIndex = (store: string, threadId: string, rows: ReadonlyArray<unknown>) =>
  Effect.map(
    decodeRows(store, threadId, IndexRows, rows, (raw) => ({
      seq: integer(raw.seq),
      tokens: integer(raw.tokens),
      call_ids: parsed(raw.call_ids)
    })),
    (entries) => entries.map((entry): IndexEntry => ({ seq: entry.seq, tokens: entry.tokens, callIds: entry.call_ids }))
  )

const decodeExchanges = (store: string, threadId: string, rows: ReadonlyArray<unknown>) =>
  Effect.map(
    decodeRows(store, threadId, ExchangeRows, rows, (raw) => ({
      seq: integer(raw.seq),
      messages: parsed(raw.messages),
      tokens: integer(raw.tokens),
      call_ids: parsed(raw.call_ids)
    })),
    (exchanges) =>
      exchanges.map(
        (exchange): Exchange => ({
          seq: exchange.seq,
          messages: exchange.messages,
          tokens: exchange.tokens,
          callIds: exchange.call_ids
        })
      )
  )

const headRow = (exchanges: number, summary: Head["summary"], paused: Paused | undefined): HeadRow => ({
  exchanges,
  summary: summary?.text ?? null,
  summary_through: summary?.through ?? 0,
  paused: paused === undefined ? null : JSON.stringify(paused)
})

/** The paused turn of a thread as the state `agent.resume` takes: its history rebuilt from the thread's rows. */
export const pausedState = (
  paused: Paused,
  summary: Head["summary"],
  exchanges: ReadonlyArray<Exchange>
): PausedState => {
  const { system, from, summary: summarised, ...kept } = paused
  return {
    ...kept,
    messages: [
      { role: "system", content: system },
      ...(summarised && summary !== undefined ? [History.summaryMessage(summary.text)] : []),
      ...exchanges.filter((exchange) => exchange.seq >= from).flatMap((exchange) => exchange.messages)
    ]
  }
}

const checkId = (store: string, threadId: string) =>
  threadId === ""
    ? Effect.fail(
        new StoreBoundary.StoreError({
          store,
          category: "VALIDATION",
          field: "thread",
          message: `${store}: thread is empty; a thread id needs at least one character`
        })
      )
    : StoreBoundary.checkText(store, [{ field: "thread", text: threadId }])

const readThread = (store: string, threadId: string, reader: Reader) =>
  Effect.gen(function* () {
    const head = yield* Effect.flatMap(reader.head, (row) => decodeHead(store, threadId, row))
    const exchanges =
      head.exchanges === 0
        ? []
        : yield* Effect.flatMap(reader.exchanges(1, head.exchanges), (rows) => decodeExchanges(store, threadId, rows))
    const thread: Thread = {
      id: threadId,
      messages: exchanges.flatMap((exchange) => exchange.messages),
      exchanges: head.exchanges,
      summary: head.summary?.text,
      paused: head.paused === undefined ? undefined : pausedState(head.paused, head.summary, exchanges)
    }
    return thread
  })

/** A thread store's rules on `storage` (see the module doc). */
export const make = (storage: Storage, options?: { readonly maxExchanges?: number | undefined }): Service => {
  const store = storage.name
  const maxExchanges = options?.maxExchanges ?? defaultMaxExchanges
  return {
    name: store,
    maxExchanges,
    read: (threadId) =>
      Effect.andThen(
        checkId(store, threadId),
        storage.read(threadId, (reader) => readThread(store, threadId, reader))
      ),
    delete: (threadId) =>
      Effect.andThen(
        checkId(store, threadId),
        storage.hold(threadId, defaultWait, (writer) => writer.clear)
      ),
    hold: (threadId, body, holdOptions) =>
      Effect.andThen(
        checkId(store, threadId),
        storage.hold(threadId, Duration.fromInputUnsafe(holdOptions?.wait ?? defaultWait), (writer) =>
          Effect.flatMap(
            Effect.flatMap(writer.head, (row) => decodeHead(store, threadId, row)),
            (head) =>
              body({
                id: threadId,
                head,
                index: Effect.flatMap(writer.index, (rows) => decodeIndex(store, threadId, rows)),
                exchanges: (from, to) =>
                  Effect.flatMap(writer.exchanges(from, to), (rows) => decodeExchanges(store, threadId, rows)),
                write: ({ exchange, summary, paused }) =>
                  Effect.andThen(
                    writer.putExchange({
                      seq: exchange.seq,
                      messages: JSON.stringify(exchange.messages),
                      tokens: History.estimateAll(exchange.messages),
                      call_ids: JSON.stringify(ToolCallId.idsOf(exchange.messages))
                    }),
                    writer.putHead(headRow(Math.max(head.exchanges, exchange.seq), summary, paused))
                  )
              })
          )
        )
      )
  }
}

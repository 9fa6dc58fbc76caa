/**
 * Where a durable run's status is kept, so `status` reads it without
 * replaying the workflow: running, awaiting approval (with the pending calls),
 * done (with the chat result), failed or cancelled. Written by the workflow
 * when the turn pauses, resumes and ends, and by `cancel`; a final status (done, failed,
 * cancelled) is never overwritten. Two implementations: {@link layerMemory}
 * (one process, for tests) and {@link layerSql} (any database behind
 * `effect/sql`'s `SqlClient`, such as Postgres, shared by every process).
 *
 * @example
 * ```ts
 * import { DurableChat, RunStore } from "@rolecraft/durable"
 * import { Effect, Option } from "effect"
 *
 * // what DurableChat's status reads: the run store, without replaying the workflow
 * const program = Effect.gen(function* () {
 *   const store = yield* RunStore.RunStore
 *   const status = yield* store.get("support", "run-1")
 *   return Option.match(status, { onNone: () => "unknown run", onSome: (status) => status._tag })
 * }).pipe(Effect.provide(DurableChat.layerTest))
 * ```
 *
 * @since 0.1.0
 */
import * as Category from "@rolecraft/core/ActionError"
import * as Chat from "@rolecraft/core/Chat"
import * as LanguageModel from "@rolecraft/core/LanguageModel"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"

const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const Usage = Schema.Struct({ inputTokens: NonNegativeInt, outputTokens: NonNegativeInt, totalTokens: NonNegativeInt })

/**
 * The schema of a `Chat.ChatResult` (what a durable run stores and returns).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ChatResult = Schema.Union([
  Schema.Struct({
    _tag: Schema.Literal("Completed"),
    text: Schema.String,
    messages: Schema.Array(LanguageModel.Message),
    usage: Usage,
    steps: NonNegativeInt,
    finishReason: Schema.Literals(["stop", "length", "tool_calls", "content_filter", "other"]),
    refusal: Schema.optional(Schema.String)
  }),
  Schema.Struct({
    _tag: Schema.Literal("AwaitingApproval"),
    pending: Schema.Array(Chat.PendingCall),
    state: Chat.PausedState
  }),
  Schema.Struct({
    _tag: Schema.Literal("StepLimitReached"),
    messages: Schema.Array(LanguageModel.Message),
    usage: Usage,
    steps: NonNegativeInt
  })
])

/**
 * A durable run's status:
 *
 * - `Running`: the turn is running (or queued to run);
 * - `AwaitingApproval`: the turn waits for decisions on `pending` (decide
 *   them with `decide`); `segment` counts the pauses before this one;
 * - `Done`: the turn ended with `result` (`Completed` or `StepLimitReached`);
 * - `Failed`: the turn failed (`category` and `message` of its error);
 * - `Cancelled`: `cancel` stopped it; nothing more runs.
 *
 * @category schemas
 * @since 0.1.0
 */
export const RunStatus = Schema.Union([
  Schema.TaggedStruct("Running", {}),
  Schema.TaggedStruct("AwaitingApproval", { pending: Schema.Array(Chat.PendingCall), segment: NonNegativeInt }),
  Schema.TaggedStruct("Done", { result: ChatResult }),
  Schema.TaggedStruct("Failed", { category: Category.Category, message: Schema.String }),
  Schema.TaggedStruct("Cancelled", {})
])

/**
 * @category models
 * @since 0.1.0
 */
export type RunStatus = typeof RunStatus.Type

/**
 * Whether a status is final (done, failed or cancelled).
 *
 * @category guards
 * @since 0.1.0
 */
export const isFinal = (status: RunStatus): boolean =>
  status._tag === "Done" || status._tag === "Failed" || status._tag === "Cancelled"

/**
 * The run status store. Runs are keyed by the workflow's name and the run id.
 *
 * - `create`: records a new run as `Running` unless the run exists; says
 *   whether it did.
 * - `get`: the run's status, if the store knows the run.
 * - `set`: writes a status unless the stored one is final; says whether it
 *   did.
 *
 * Storage faults are defects.
 *
 * @category services
 * @since 0.1.0
 */
export class RunStore extends Context.Service<
  RunStore,
  {
    readonly create: (workflow: string, runId: string) => Effect.Effect<boolean>
    readonly get: (workflow: string, runId: string) => Effect.Effect<Option.Option<RunStatus>>
    readonly set: (workflow: string, runId: string, status: RunStatus) => Effect.Effect<boolean>
  }
>()("@rolecraft/durable/RunStore") {}

/**
 * A store in process memory (each build of the layer is a fresh store).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<RunStore> = Layer.sync(RunStore, () => {
  const runs = new Map<string, RunStatus>()
  const key = (workflow: string, runId: string) => JSON.stringify([workflow, runId])
  return RunStore.of({
    create: (workflow, runId) =>
      Effect.sync(() => {
        if (runs.has(key(workflow, runId))) return false
        runs.set(key(workflow, runId), { _tag: "Running" })
        return true
      }),
    get: (workflow, runId) => Effect.sync(() => Option.fromUndefinedOr(runs.get(key(workflow, runId)))),
    set: (workflow, runId, status) =>
      Effect.sync(() => {
        const current = runs.get(key(workflow, runId))
        if (current !== undefined && isFinal(current)) return false
        runs.set(key(workflow, runId), status)
        return true
      })
  })
})

const table = "rolecraft_durable_runs"

const schemaSql = `CREATE TABLE IF NOT EXISTS ${table} (
  workflow VARCHAR(200) NOT NULL,
  run_id VARCHAR(200) NOT NULL,
  state VARCHAR(32) NOT NULL,
  body TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (workflow, run_id)
)`

const encode = Schema.encodeSync(Schema.fromJsonString(Schema.toCodecJson(RunStatus)))
const decode = Schema.decodeUnknownSync(Schema.fromJsonString(Schema.toCodecJson(RunStatus)))

/**
 * A store in any database behind `effect/sql`'s `SqlClient` that accepts
 * `INSERT … ON CONFLICT` (Postgres, SQLite). The table
 * `rolecraft_durable_runs` is created if missing; a status is one JSON
 * column. `set` is one conditional upsert, so a final status is never
 * overwritten, whichever process writes.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSql: Layer.Layer<RunStore, never, SqlClient.SqlClient> = Layer.effect(
  RunStore,
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    // Two processes creating the table at once may collide in the catalog: the second try sees the table.
    yield* Effect.orDie(Effect.retry(sql.unsafe(schemaSql), { times: 2 }))
    const t = sql(table)
    return RunStore.of({
      create: (workflow, runId) =>
        Effect.orDie(
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.map(
              sql<{ readonly run_id: string }>`INSERT INTO ${t} (workflow, run_id, state, body, updated_at)
                VALUES (${workflow}, ${runId}, 'Running', ${encode({ _tag: "Running" })}, ${now})
                ON CONFLICT (workflow, run_id) DO NOTHING RETURNING run_id`,
              (rows) => rows.length === 1
            )
          )
        ),
      get: (workflow, runId) =>
        Effect.orDie(
          Effect.map(
            sql<{ readonly body: string }>`SELECT body FROM ${t} WHERE workflow = ${workflow} AND run_id = ${runId}`,
            (rows) => (rows[0] === undefined ? Option.none() : Option.some(decode(rows[0].body)))
          )
        ),
      set: (workflow, runId, status) =>
        Effect.orDie(
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.map(
              sql<{ readonly run_id: string }>`INSERT INTO ${t} (workflow, run_id, state, body, updated_at)
                VALUES (${workflow}, ${runId}, ${status._tag}, ${encode(status)}, ${now})
                ON CONFLICT (workflow, run_id) DO UPDATE
                  SET state = excluded.state, body = excluded.body, updated_at = excluded.updated_at
                  WHERE ${t}.state NOT IN ('Done', 'Failed', 'Cancelled')
                RETURNING run_id`,
              (rows) => rows.length === 1
            )
          )
        )
    })
  })
)

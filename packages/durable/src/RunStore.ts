/**
 * What Rolecraft keeps of a durable run, beside the workflow engine's own
 * tables: its status, so `status` reads it without replaying the workflow
 * (running, awaiting approval with the pending calls, done with the chat
 * result, failed or cancelled), and its steps — each model call's response,
 * each tool call's answer, each pause and each decision — recorded once:
 * the first record of a step stands, and a run that is replayed (after a
 * crash, a restart of the database, on another runner) reads it instead of
 * doing the step again. A final status (done, failed, cancelled) is never
 * overwritten. Two implementations: {@link layerMemory} (one process, for
 * tests) and {@link layerSql} (any database behind `effect/sql`'s
 * `SqlClient`, such as Postgres, shared by every process).
 *
 * Every operation answers at the store boundary (`StoreBoundary`): a
 * workflow name, run id or step name the store cannot hold (a NUL, a lone
 * surrogate, more than 200 characters for a name or id, 1,024 for a step) is
 * VALIDATION naming the field; a store that cannot be reached is TRANSIENT
 * naming it; a stored status that does not decode is EXECUTION naming the
 * run. Never a defect.
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
import type * as StoreBoundary from "@rolecraft/core/StoreBoundary"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type * as SqlClient from "effect/sql/SqlClient"
import * as Status from "./internal/status.ts"
import * as Boundary from "./internal/store/boundary.ts"
import * as Memory from "./internal/store/memory.ts"
import * as Sql from "./internal/store/sql.ts"

/**
 * The schema of a `Chat.ChatResult` (what a durable run stores and returns).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ChatResult = Status.ChatResult

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
export const RunStatus = Status.RunStatus

/**
 * @category models
 * @since 0.1.0
 */
export type RunStatus = Status.RunStatus

/**
 * Whether a status is final (done, failed or cancelled).
 *
 * @category predicates
 * @since 0.1.0
 */
export const isFinal: (status: RunStatus) => boolean = Status.isFinal

/**
 * The most characters of a workflow name or a run id the store takes: 200.
 *
 * @category constants
 * @since 0.2.0
 */
export const maxIdLength = Boundary.maxIdLength

/**
 * The run store. Runs are keyed by the workflow's name and the run id; a
 * run's steps by their name within the run.
 *
 * - `create`: records a new run as `Running` unless the run exists; says
 *   whether it did.
 * - `get`: the run's status, if the store knows the run.
 * - `set`: writes a status unless the stored one is final; says whether it
 *   did.
 * - `recordStep`: records a step's body (JSON text) unless the step is
 *   recorded; returns the recorded body — this one, or the one recorded
 *   first (of two writers racing, one records and both get its body).
 * - `readStep`: a step's recorded body, if any.
 * - `readSteps`: every recorded step of a run, by name.
 * - `watch`: subscribes (in the scope) to the status writes this store
 *   value makes for a run; the effect it returns completes at the next one.
 *   Writes by other processes are not seen: read the status to see them.
 *
 * Each fails with `StoreBoundary.StoreError` (see the module doc).
 *
 * @category services
 * @since 0.1.0
 */
export class RunStore extends Context.Service<RunStore, Boundary.Service>()("@rolecraft/durable/RunStore") {}

/**
 * A store in process memory (each build of the layer is a fresh store).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<RunStore> = Layer.sync(RunStore, Memory.make)

/**
 * A store in any database behind `effect/sql`'s `SqlClient` that accepts
 * `INSERT … ON CONFLICT` (Postgres, SQLite). The tables
 * `rolecraft_durable_runs` (a run's status, one JSON column) and
 * `rolecraft_durable_steps` (a run's recorded steps) are created if missing.
 * `set` is one conditional upsert, so a final status is never overwritten,
 * and `recordStep` one `INSERT … ON CONFLICT DO NOTHING`, so the first
 * record of a step stands, whichever process writes. Fails with a TRANSIENT
 * `StoreBoundary.StoreError` when the tables cannot be created.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSql: Layer.Layer<RunStore, StoreBoundary.StoreError, SqlClient.SqlClient> = Layer.effect(
  RunStore,
  Sql.make
)

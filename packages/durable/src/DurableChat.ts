/**
 * Durable chat turns: an agent's chat turn run as a workflow of Effect's
 * workflow engine (`effect/workflow` on `effect/cluster`), so a turn paused
 * for approvals survives restarts and is finished by whichever process holds
 * it when the decisions arrive.
 *
 * Each model call and tool call of the turn is a recorded step of the run
 * (through the chat's `steps` hooks): its result is recorded in the run store
 * before the step returns, and a replay — after a crash, a restart of the
 * database, or on another process — reads it and never runs it again. A step
 * cut off by a crash runs again, with the same idempotency key:
 * `IdempotencyKey.IdempotencyKey`, the run id and its tool call id (`"run-1/call_1"`),
 * handed to a local action on its context, to a webService action as its
 * `idempotencyHeader`, to an mcpTool call in its `_meta`. Each pending call
 * waits on a durable deferred that any process can complete with
 * {@link DurableChat} `decide` — once: the first decision recorded stands —
 * raced against a durable clock for its approval token's expiry (an expired
 * call is answered APPROVAL "expired" and the turn goes on).
 *
 * @example
 * ```ts
 * import { Agent, Chat } from "@rolecraft/core"
 * import { DurableChat } from "@rolecraft/durable"
 * import { Effect, Layer, Schedule } from "effect"
 *
 * declare const agent: Agent.Agent
 * const support = DurableChat.make("support")
 *
 * const program = Effect.gen(function* () {
 *   // start returns once the run is recorded; the turn runs in the background.
 *   yield* support.start("run-1", "Refund order 42")
 *   // read the run until it has paused (or ended), then decide every pending call
 *   const status = yield* support
 *     .status("run-1")
 *     .pipe(Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (status) => status._tag !== "Running" }))
 *   if (status._tag === "AwaitingApproval") {
 *     yield* support.decide(
 *       "run-1",
 *       Object.fromEntries(status.pending.map((call) => [call.toolCallId, Chat.approve("alice")]))
 *     )
 *   }
 *   // await has no limit of its own: give it one
 *   return yield* support.await("run-1").pipe(Effect.timeout("30 seconds"))
 * }).pipe(Effect.provide(Layer.provideMerge(support.layer(agent), DurableChat.layerTest)))
 * ```
 *
 * docs/durable.md runs the same program to its end with a scripted model.
 *
 * @since 0.1.0
 */
import {
  type ApprovalRequired,
  type ExecutionFailure,
  type TransientFailure,
  ValidationError
} from "@rolecraft/core/ActionError"
import type * as Chat from "@rolecraft/core/Chat"
import type * as Prompt from "@rolecraft/core/Prompt"
import type * as StoreBoundary from "@rolecraft/core/StoreBoundary"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as Runners from "effect/cluster/Runners"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "effect/cluster/SqlRunnerStorage"
import * as SingleRunner from "effect/cluster/SingleRunner"
import * as TestRunner from "effect/cluster/TestRunner"
import * as Config from "effect/Config"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import * as Client from "./internal/client.ts"
import * as LocalWorkflows from "./internal/localWorkflows.ts"
import * as Records from "./internal/records.ts"
import * as Run from "./internal/run.ts"
import * as RunnerWatch from "./internal/runnerWatch.ts"
import * as RunStore from "./RunStore.ts"

// What a run needs of an agent is declared beside the run that uses it.
export type { Turns } from "./internal/run.ts"

/**
 * Chat options a run is started with: plain data, stored with the run.
 * Options that are not data (a retry policy, a model timeout) are given to
 * {@link DurableChat} `layer` instead.
 *
 * @category models
 * @since 0.1.0
 */
export const RunOptions = Records.RunOptions

/**
 * @category models
 * @since 0.1.0
 */
export type RunOptions = typeof RunOptions.Type

/**
 * The services the client side of durable runs needs (`start`, `decide`,
 * `cancel`; `status` and `await` need only the run store): what every engine
 * layer provides.
 *
 * @category models
 * @since 0.1.0
 */
export type Services = WorkflowEngine.WorkflowEngine | RunStore.RunStore

/**
 * What a client operation (`start`, `status`, `cancel`, `await`) fails
 * with, never a defect:
 *
 * - VALIDATION (`ValidationError`): an unknown run, a run not in the state
 *   the operation needs, an id or text the store cannot hold (a NUL, a lone
 *   surrogate, a run id past 200 characters), naming the field;
 * - TRANSIENT (`TransientFailure`): the run store or the workflow engine
 *   could not be reached (a database stopped or restarting), naming it: the
 *   same operation may succeed later;
 * - EXECUTION (`ExecutionFailure`): a stored row that does not decode (edited,
 *   truncated, from a newer version), naming the run and the field.
 *
 * `decide` may also fail with APPROVAL (`ApprovalRequired`, see
 * {@link DurableChat}).
 *
 * @category errors
 * @since 0.2.0
 */
export type Failure = ValidationError | TransientFailure | ExecutionFailure

/**
 * A run's final status (what {@link DurableChat} `await` returns).
 *
 * @category models
 * @since 0.1.0
 */
export type FinalStatus = Extract<RunStore.RunStatus, { readonly _tag: "Done" | "Failed" | "Cancelled" }>

/**
 * The durable chat turns of one agent, under a workflow name that every
 * process uses for it.
 *
 * - `layer(agent, options?)`: registers the workflow in this process with
 *   the agent that runs it (`options` are chat options that are not data,
 *   like `retry`). Only processes that run turns need it.
 * - `start(runId, input, options?)`: starts a turn under `runId` (a new id:
 *   an existing one is VALIDATION); returns once the run is recorded.
 * - `status(runId)`: the run's stored status (a query, never a replay).
 * - `decide(runId, decisions)`: decides pending calls by `toolCallId` (all
 *   or some of them). A call is decided once, ever: the first decision
 *   recorded for it stands (of two deciders racing, one records), the same
 *   decision again is that decision, and any other — the loser of a race,
 *   or a rejection sent after an approval — is APPROVAL (`check:
 *   "decided"`, "decide: call_1 (refund) is already decided: approved by
 *   alice"). A decision is recorded for the call it was shown for (its
 *   approval token, bound to the call's exact arguments). An unknown run, a
 *   run not awaiting approval (and no decision recorded for the call), an
 *   unknown call or an approver or reason a store cannot hold is
 *   VALIDATION.
 * - `cancel(runId)`: stops the run; nothing more runs. A final run is
 *   VALIDATION.
 * - `await(runId, options?)`: waits for the final status, reading the
 *   stored status every `pollInterval` (default 200 ms); a store that cannot
 *   be reached meanwhile ends the wait TRANSIENT (wait again).
 *
 * Every operation fails with a typed {@link Failure}, never a defect.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableChat {
  readonly name: string
  readonly layer: <R>(
    agent: Run.Turns<R>,
    options?: Chat.ChatOptions
  ) => Layer.Layer<never, never, WorkflowEngine.WorkflowEngine | RunStore.RunStore | R>
  readonly start: (
    runId: string,
    input: string | ReadonlyArray<Prompt.Message>,
    options?: RunOptions
  ) => Effect.Effect<void, Failure, WorkflowEngine.WorkflowEngine | RunStore.RunStore>
  readonly status: (runId: string) => Effect.Effect<RunStore.RunStatus, Failure, RunStore.RunStore>
  readonly decide: (
    runId: string,
    decisions: Chat.Decisions
  ) => Effect.Effect<void, Failure | ApprovalRequired, WorkflowEngine.WorkflowEngine | RunStore.RunStore>
  readonly cancel: (runId: string) => Effect.Effect<void, Failure, WorkflowEngine.WorkflowEngine | RunStore.RunStore>
  readonly await: (
    runId: string,
    options?: { readonly pollInterval?: Duration.Input | undefined }
  ) => Effect.Effect<FinalStatus, Failure, RunStore.RunStore>
}

/**
 * Makes the durable chat turns named `name` (the workflow's name: the same in
 * every process, one per agent definition).
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (name: string): DurableChat => {
  const workflow = Run.workflowOf(name)
  return {
    name,
    layer: (agent, chatOptions) => Run.layer(workflow, name, agent, chatOptions),
    start: Client.start(workflow, name),
    status: Client.status(name),
    decide: Client.decide(workflow, name),
    cancel: Client.cancel(workflow, name),
    await: Client.await_(name)
  }
}

// ---------------------------------------------------------------------------
// Layers
// ---------------------------------------------------------------------------

/**
 * The engine in process memory, for tests: Effect's `TestRunner` (one
 * runner, in-memory message storage) and an in-memory run store. Nothing
 * survives the layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerTest: Layer.Layer<WorkflowEngine.WorkflowEngine | RunStore.RunStore> = Layer.mergeAll(
  ClusterWorkflowEngine.layer.pipe(Layer.provide(TestRunner.layer)),
  RunStore.layerMemory,
  LocalWorkflows.layer("layerTest")
)

/**
 * The engine for one process over SQL storage (`SingleRunner` with SQL
 * runner storage; Postgres through `@effect/sql-pg`'s `PgClient.layer`): runs
 * survive a restart of the process. Needs a `SqlClient`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerSingle = (options?: {
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Service"]> | undefined
}): Layer.Layer<
  WorkflowEngine.WorkflowEngine | RunStore.RunStore,
  Config.ConfigError | StoreBoundary.StoreError,
  SqlClient.SqlClient
> =>
  Layer.mergeAll(
    ClusterWorkflowEngine.layer.pipe(
      Layer.provide(SingleRunner.layer({ runnerStorage: "sql", shardingConfig: options?.shardingConfig })),
      Layer.provide(NodeCrypto.layerDigest)
    ),
    RunStore.layerSql,
    LocalWorkflows.layer("layerSingle")
  )

/**
 * The engine for several processes sharing one SQL database (Postgres):
 * Effect's cluster over sockets (`NodeClusterSocket`). A runner listens on
 * `runner` (`host`, `port`) and runs turns; a client (`runner` left out)
 * only starts, decides, cancels and reads runs. Every process must use the
 * same `shardsPerGroup`. Needs a `SqlClient`.
 *
 * After a runner dies its runs move to another runner once no runner counts
 * it any more and its shard locks are free. Every runner pings the others
 * every `runnerHealthCheckInterval` (Effect's default 1 minute) and records a
 * runner that does not answer (3 tries, 250 ms apart) as unhealthy, so a
 * crashed process, whose socket and Postgres session close at once, is
 * replaced within seconds of the next check. A runner nobody can reach that
 * way (its host frozen or gone without closing its connections) is dropped
 * once its heartbeat is older than `shardLockExpiration` (Effect's default
 * 35 seconds), which also ends its Postgres lock session.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerCluster = (options: {
  readonly runner?: { readonly host: string; readonly port: number } | undefined
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Service"]> | undefined
}): Layer.Layer<WorkflowEngine.WorkflowEngine | RunStore.RunStore, unknown, SqlClient.SqlClient> => {
  const runner = options.runner
  if (runner === undefined) {
    const client = NodeClusterSocket.layer({
      storage: "sql",
      clientOnly: true,
      shardingConfig: { ...options.shardingConfig }
    })
    return Layer.mergeAll(ClusterWorkflowEngine.layer.pipe(Layer.provide(client)), RunStore.layerSql)
  }
  const shardingConfig = {
    ...options.shardingConfig,
    runnerAddress: Option.some(RunnerAddress.make(runner.host, runner.port))
  }
  const config = ShardingConfig.layerFromEnv(shardingConfig)
  // The storage is built here ("byo") so the runner watch shares the runner's own storage.
  const storage = Layer.mergeAll(
    SqlMessageStorage.layer.pipe(Layer.provide(NodeCrypto.layerDigest)),
    Layer.orDie(SqlRunnerStorage.layer)
  ).pipe(Layer.provide(config))
  // Pings go through their own clients, as Effect's health check's do, with the runners' default serialization.
  const ping = RunnerWatch.layerPing.pipe(
    Layer.provide(Runners.layerRpc),
    Layer.provide(NodeClusterSocket.layerClientProtocol),
    Layer.provide(RpcSerialization.layerSchemaBinary())
  )
  const cluster = NodeClusterSocket.layer({ storage: "byo", shardingConfig }).pipe(
    Layer.merge(RunnerWatch.layer.pipe(Layer.provide(ping))),
    Layer.provideMerge(storage),
    Layer.provide(config)
  )
  return Layer.mergeAll(ClusterWorkflowEngine.layer.pipe(Layer.provide(cluster)), RunStore.layerSql)
}

/**
 * A Postgres `SqlClient` (`@effect/sql-pg`'s `PgClient.layer`) for the
 * engine layers and `ApprovalStore.layerSql`, its URL read through Effect
 * `Config` (the environment by default) from `DATABASE_URL`, or from the
 * variable `variable` names. The URL is a `Redacted` value: it appears in no
 * error, log, span or stored row. `options` are `PgClient`'s other settings
 * (`maxConnections`, `connectTimeout`, …).
 *
 * Fails to build with a ValidationError naming the variable when it is not
 * set (`DATABASE_URL is not set`), and with `@effect/sql-pg`'s `SqlError`
 * when the database cannot be reached.
 *
 * @example
 * ```ts
 * import { ApprovalStore } from "@rolecraft/core"
 * import { DurableChat } from "@rolecraft/durable"
 * import { Layer } from "effect"
 *
 * // DATABASE_URL=postgres://user:password@db.internal:5432/agents
 * const engine = Layer.mergeAll(ApprovalStore.layerSql, DurableChat.layerSingle()).pipe(
 *   Layer.provideMerge(DurableChat.layerPostgresConfig())
 * )
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layerPostgresConfig = (
  options?: Omit<PgClient.PgPoolConfig, "url"> & { readonly variable?: string | undefined }
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, ValidationError | SqlError> => {
  const { variable = "DATABASE_URL", ...settings } = options ?? {}
  return Layer.unwrap(
    Effect.gen(function* () {
      const url = yield* Config.Redacted(variable).pipe(
        Effect.mapError((cause) => {
          const problem = `is not set (the Postgres URL, like postgres://user:password@host:5432/database)`
          return new ValidationError({
            action: "DurableChat.layerPostgresConfig",
            message: `DurableChat.layerPostgresConfig: ${variable} ${problem}`,
            issues: [{ path: variable, message: problem }],
            cause
          })
        })
      )
      return PgClient.layer({ ...settings, url })
    })
  )
}

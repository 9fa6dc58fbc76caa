/**
 * Durable chat turns: an agent's chat turn run as a workflow of Effect's
 * workflow engine (`effect/workflow` on `effect/cluster`), so a turn paused
 * for approvals survives restarts and is finished by whichever process holds
 * it when the decisions arrive.
 *
 * Each tool listing, model call and tool call of the turn is an activity
 * (through the chat's `steps` hooks): its result is stored, and a replay —
 * after a restart, or on another process — reads it and never runs it again.
 * Each pending call waits on a durable deferred that any process can complete
 * with {@link DurableChat} `decide`, raced against a durable clock for its
 * approval token's expiry (an expired call is answered APPROVAL "expired" and
 * the turn goes on). A tool call runs with `Chat.IdempotencyKey` set to the
 * run id and its tool call id, the same on every attempt.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Agent, Chat } from "@rolecraft/core"
 * import { DurableChat } from "@rolecraft/durable"
 *
 * declare const agent: Agent.Agent
 * const support = DurableChat.make("support")
 * const program = Effect.gen(function* () {
 *   yield* support.start("run-1", "Refund order 42")
 *   const status = yield* support.status("run-1")
 *   if (status._tag === "AwaitingApproval") {
 *     yield* support.decide("run-1", { [status.pending[0]!.toolCallId]: Chat.approve("alice") })
 *   }
 *   return yield* support.await("run-1")
 * }).pipe(Effect.provide(Layer.provideMerge(support.layer(agent), DurableChat.layerTest)))
 * ```
 *
 * @since 0.1.0
 */
import {
  type ActionError,
  ActionError as ActionErrorUnion,
  Category,
  ValidationError
} from "@rolecraft/core/ActionError"
import type * as ApprovalStore from "@rolecraft/core/ApprovalStore"
import * as Chat from "@rolecraft/core/Chat"
import * as LanguageModel from "@rolecraft/core/LanguageModel"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import * as Clock from "effect/Clock"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "effect/cluster/SqlRunnerStorage"
import * as SingleRunner from "effect/cluster/SingleRunner"
import * as TestRunner from "effect/cluster/TestRunner"
import type * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import type * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import * as Activity from "effect/workflow/Activity"
import * as DurableClock from "effect/workflow/DurableClock"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as Workflow from "effect/workflow/Workflow"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import * as RunnerWatch from "./internal/runnerWatch.ts"
import * as RunStore from "./RunStore.ts"

/**
 * What a durable run needs of an agent: its chat turns and its approval
 * store (every `Agent.Agent` has them). The store must be shared by every
 * process that runs the turns (`ApprovalStore.layerSql` on Postgres).
 *
 * @since 0.1.0
 */
export interface Turns<R> {
  readonly chat: (
    input: string | ReadonlyArray<LanguageModel.Message>,
    options?: Chat.ChatOptions
  ) => Effect.Effect<Chat.ChatResult, ActionError, R>
  readonly resume: (
    state: Chat.PausedState,
    decisions: Chat.Decisions,
    options?: Chat.ChatOptions
  ) => Effect.Effect<Chat.ChatResult, ActionError, R>
  readonly approvals: ApprovalStore.ApprovalStore["Service"]
}

/**
 * Chat options a run is started with: plain data, stored with the run.
 * Options that are not data (a retry policy, a model timeout) are given to
 * {@link DurableChat} `layer` instead.
 *
 * @since 0.1.0
 */
export const RunOptions = Schema.Struct({
  maxSteps: Schema.optionalKey(Schema.Int),
  system: Schema.optionalKey(Schema.String),
  concurrency: Schema.optionalKey(Schema.Int),
  model: Schema.optionalKey(Schema.String),
  temperature: Schema.optionalKey(Schema.Finite),
  strict: Schema.optionalKey(Schema.Boolean)
})

/**
 * @since 0.1.0
 */
export type RunOptions = typeof RunOptions.Type

const Input = Schema.Union([Schema.String, Schema.Array(LanguageModel.Message)])

const Approve = Schema.TaggedStruct("Approve", { approver: Schema.String })
const Reject = Schema.TaggedStruct("Reject", { approver: Schema.String, reason: Schema.String })
const Decision = Schema.Union([Approve, Reject])
// What ends a pending call's wait: a decision, or its approval token's expiry.
const Verdict = Schema.Union([Approve, Reject, Schema.TaggedStruct("Expired", {})])

const Outcome = Schema.Union([
  RunStore.ChatResult,
  Schema.TaggedStruct("Failed", { category: Category, message: Schema.String }),
  Schema.TaggedStruct("Cancelled", {})
])
type Outcome = typeof Outcome.Type

const UsageSchema = Schema.Struct({
  inputTokens: Schema.Finite,
  outputTokens: Schema.Finite,
  totalTokens: Schema.Finite
})

const ResponseSchema = Schema.Struct({
  text: Schema.String,
  toolCalls: Schema.Array(LanguageModel.ToolCall),
  usage: UsageSchema,
  finishReason: Schema.Literals(["stop", "length", "tool_calls", "content_filter", "other"]),
  model: Schema.optional(Schema.String),
  refusal: Schema.optional(Schema.String)
})

// What a model call or a tool call activity stores: its result and the tokens spent inside it.
const ModelRecord = Schema.Struct({ value: ResponseSchema, usage: UsageSchema })
const ToolRecord = Schema.Struct({ value: Chat.ToolAnswer, usage: UsageSchema })
const ActionErrorSchema = ActionErrorUnion

/** Runs `effect` with a usage meter of its own and returns its value with the tokens it spent. */
const metered = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<{ readonly value: A; readonly usage: LanguageModel.Usage }, E, R> =>
  Effect.gen(function* () {
    // Not nested in the turn's meter: the tokens are recorded there once, from the stored record.
    const meter = yield* Effect.provideService(LanguageModel.makeUsageMeter, LanguageModel.UsageMeter, {
      record: () => Effect.void,
      total: Effect.succeed({ usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, calls: 0 })
    })
    const value = yield* Effect.provideService(effect, LanguageModel.UsageMeter, meter)
    return { value, usage: (yield* meter.total).usage }
  })

/** Adds a step's tokens to the turn's usage meter, if there is one. */
const recordUsage = (usage: LanguageModel.Usage): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(LanguageModel.UsageMeter), (meter) =>
    Option.isSome(meter) ? meter.value.record(usage) : Effect.void
  )

/**
 * The services the client side of durable runs needs (`start`, `decide`,
 * `cancel`; `status` and `await` need only the run store): what every engine
 * layer provides.
 *
 * @since 0.1.0
 */
export type Services = WorkflowEngine.WorkflowEngine | RunStore.RunStore

/**
 * A run's final status (what {@link DurableChat} `await` returns).
 *
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
 *   or some of them); an unknown run, a run not awaiting approval, or an
 *   unknown call is VALIDATION.
 * - `cancel(runId)`: stops the run; nothing more runs. A final run is
 *   VALIDATION.
 * - `await(runId, options?)`: waits for the final status, reading the
 *   stored status every `pollInterval` (default 200 ms).
 *
 * @since 0.1.0
 */
export interface DurableChat {
  readonly name: string
  readonly layer: <R>(
    agent: Turns<R>,
    options?: Chat.ChatOptions
  ) => Layer.Layer<never, never, WorkflowEngine.WorkflowEngine | RunStore.RunStore | R>
  readonly start: (
    runId: string,
    input: string | ReadonlyArray<LanguageModel.Message>,
    options?: RunOptions
  ) => Effect.Effect<void, ValidationError, WorkflowEngine.WorkflowEngine | RunStore.RunStore>
  readonly status: (runId: string) => Effect.Effect<RunStore.RunStatus, ValidationError, RunStore.RunStore>
  readonly decide: (
    runId: string,
    decisions: Chat.Decisions
  ) => Effect.Effect<void, ValidationError, WorkflowEngine.WorkflowEngine | RunStore.RunStore>
  readonly cancel: (
    runId: string
  ) => Effect.Effect<void, ValidationError, WorkflowEngine.WorkflowEngine | RunStore.RunStore>
  readonly await: (
    runId: string,
    options?: { readonly pollInterval?: Duration.Input | undefined }
  ) => Effect.Effect<FinalStatus, ValidationError, RunStore.RunStore>
}

const invalid = (action: string, path: string, message: string) =>
  new ValidationError({ action, message: `${action}: ${message}`, issues: [{ path, message }] })

const approvalOf = (segment: number, toolCallId: string) =>
  DurableDeferred.make(`approval/${segment}/${toolCallId}`, { success: Decision })

// The approver recorded when a call's token expired before a decision: the store refuses it as expired.
const expiredApprover = "rolecraft-durable/expired"

/**
 * Makes the durable chat turns named `name` (the workflow's name: the same in
 * every process, one per agent definition).
 *
 * @since 0.1.0
 */
export const make = (name: string): DurableChat => {
  const workflow = Workflow.make(`rolecraft/chat/${name}`, {
    payload: { runId: Schema.String, input: Input, options: RunOptions },
    success: Outcome,
    idempotencyKey: (payload) => payload.runId
  })

  const executionId = (runId: string) => workflow.executionId({ runId, input: "", options: {} })

  const layer = <R>(
    agent: Turns<R>,
    chatOptions?: Chat.ChatOptions
  ): Layer.Layer<never, never, WorkflowEngine.WorkflowEngine | RunStore.RunStore | R> =>
    workflow.toLayer((payload) =>
      Effect.gen(function* () {
        const store = yield* RunStore.RunStore
        const runId = payload.runId
        // Activities need the workflow's own services; the chat hooks keep the turn's requirements, so they are given here.
        const engine = yield* Effect.context<WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance>()
        const activity = <A, E, S extends Schema.Top, F extends Schema.Top, R2>(
          name: string,
          success: S,
          error: F,
          execute: Effect.Effect<A, E, R2>
        ): Effect.Effect<A, E, R2> =>
          Effect.provideContext(
            Activity.make({ name, success, error, execute } as never) as unknown as Effect.Effect<
              A,
              E,
              R2 | WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance
            >,
            engine
          )

        // Each tool listing, model call and tool call of the turn is an activity: stored, and read back on a replay.
        const steps: Chat.StepHooks = {
          tools: (step, list) => activity(`tools/${step.step}`, Schema.Array(Schema.String), Schema.Never, list),
          model: (step, call) =>
            Effect.flatMap(activity(`model/${step.step}`, ModelRecord, ActionErrorSchema, metered(call)), (record) =>
              Effect.as(recordUsage(record.usage), record.value)
            ),
          tool: (step, call) =>
            Effect.flatMap(
              activity(
                `tool/${step.step}/${step.toolCallId}${step.decided ? "/decided" : ""}`,
                ToolRecord,
                Schema.Never,
                metered(Effect.provideService(call, Chat.IdempotencyKey, `${runId}/${step.toolCallId}`))
              ),
              (record) => Effect.as(recordUsage(record.usage), record.value)
            )
        }
        const options: Chat.ChatOptions = { ...chatOptions, ...payload.options, steps }

        /** Records a final outcome (a cancelled run keeps its status) and returns it. */
        const end = (outcome: Outcome) =>
          Effect.as(
            activity(
              "end",
              Schema.Void,
              Schema.Never,
              Effect.asVoid(
                store.set(
                  name,
                  runId,
                  outcome._tag === "Failed" || outcome._tag === "Cancelled"
                    ? outcome
                    : { _tag: "Done", result: outcome }
                )
              )
            ),
            outcome
          )

        const outcomeOf = (result: Result.Result<Chat.ChatResult, ActionError>): Outcome =>
          result._tag === "Success"
            ? result.success
            : { _tag: "Failed", category: result.failure.category, message: result.failure.message }

        let outcome = outcomeOf(yield* Effect.result(agent.chat(payload.input, options)))
        let segment = 0
        while (outcome._tag === "AwaitingApproval") {
          const paused = outcome
          const at = segment
          // Record the pause and the time left on each pending call's token (read once, stored).
          const expiresIn = yield* activity(
            `pause/${at}`,
            Schema.Record(Schema.String, Schema.Finite),
            Schema.Never,
            Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              const left: Record<string, number> = {}
              for (const call of paused.pending) {
                const token = yield* agent.approvals.get(call.pendingTokenId)
                left[call.toolCallId] = Option.isSome(token) ? Math.max(0, token.value.expiresAt - now) : 0
              }
              yield* store.set(name, runId, { _tag: "AwaitingApproval", pending: paused.pending, segment: at })
              return left
            })
          )
          const verdicts = yield* Effect.forEach(
            paused.pending,
            (call) =>
              DurableDeferred.raceAll({
                name: `decision/${at}/${call.toolCallId}`,
                success: Verdict,
                error: Schema.Never,
                effects: [
                  DurableDeferred.await(approvalOf(at, call.toolCallId)),
                  Effect.as(
                    DurableClock.sleep({
                      name: `expiry/${at}/${call.toolCallId}`,
                      duration: Duration.millis(expiresIn[call.toolCallId] ?? 0),
                      inMemoryThreshold: Duration.zero
                    }),
                    { _tag: "Expired" } as const
                  )
                ]
              }),
            { concurrency: "unbounded" }
          )
          // A cancelled run goes no further; else it runs again, and an expired call waits out its token so the
          // store refuses it as expired.
          const go = yield* activity(
            `resume/${at}`,
            Schema.Boolean,
            Schema.Never,
            Effect.gen(function* () {
              const current = yield* store.get(name, runId)
              if (Option.isSome(current) && current.value._tag === "Cancelled") return false
              yield* store.set(name, runId, { _tag: "Running" })
              for (const [i, call] of paused.pending.entries()) {
                if (verdicts[i]?._tag !== "Expired") continue
                const token = yield* agent.approvals.get(call.pendingTokenId)
                const now = yield* Clock.currentTimeMillis
                if (Option.isSome(token) && token.value.expiresAt > now) {
                  yield* Effect.sleep(Duration.millis(token.value.expiresAt - now))
                }
              }
              return true
            })
          )
          if (!go) return { _tag: "Cancelled" } satisfies Outcome
          const decisions: Record<string, Chat.Decision> = {}
          for (const [i, call] of paused.pending.entries()) {
            const verdict = verdicts[i]
            decisions[call.toolCallId] =
              verdict === undefined || verdict._tag === "Expired" ? Chat.approve(expiredApprover) : verdict
          }
          segment += 1
          outcome = outcomeOf(yield* Effect.result(agent.resume(paused.state, decisions, options)))
        }
        return yield* end(outcome)
      })
    )

  const requireRun = (
    action: string,
    runId: string
  ): Effect.Effect<RunStore.RunStatus, ValidationError, RunStore.RunStore> =>
    Effect.gen(function* () {
      const status = yield* (yield* RunStore.RunStore).get(name, runId)
      if (Option.isNone(status)) return yield* invalid(action, "runId", `no run ${JSON.stringify(runId)}`)
      return status.value
    })

  const start: DurableChat["start"] = (runId, input, options) =>
    Effect.gen(function* () {
      if (runId.length === 0 || runId.length > 200) {
        return yield* invalid("start", "runId", "runId must be 1 to 200 characters")
      }
      const decodedOptions = yield* Effect.mapError(Schema.decodeUnknownEffect(RunOptions)(options ?? {}), (issue) =>
        invalid("start", "options", issue.message)
      )
      const store = yield* RunStore.RunStore
      if (Option.isSome(yield* store.get(name, runId))) {
        return yield* invalid("start", "runId", `a run ${JSON.stringify(runId)} already exists`)
      }
      yield* workflow.execute({ runId, input, options: decodedOptions }, { discard: true })
      // The workflow may already have written a later status: creating never overwrites one.
      yield* store.create(name, runId)
    })

  const status: DurableChat["status"] = (runId) => requireRun("status", runId)

  const decide: DurableChat["decide"] = (runId, decisions) =>
    Effect.gen(function* () {
      const current = yield* requireRun("decide", runId)
      if (current._tag !== "AwaitingApproval") {
        return yield* invalid(
          "decide",
          "runId",
          `run ${JSON.stringify(runId)} is not awaiting approval (${current._tag})`
        )
      }
      const ids = Object.keys(decisions)
      if (ids.length === 0) return yield* invalid("decide", "decisions", "no decision was given")
      for (const id of ids) {
        if (!current.pending.some((call) => call.toolCallId === id)) {
          return yield* invalid("decide", `decisions.${id}`, `run ${JSON.stringify(runId)} has no pending call ${id}`)
        }
        const decision = Schema.decodeUnknownExit(Decision)(decisions[id])
        if (decision._tag === "Failure") {
          return yield* invalid(
            "decide",
            `decisions.${id}`,
            "a decision is Chat.approve(approver) or Chat.reject(approver, reason)"
          )
        }
      }
      const execution = yield* executionId(runId)
      for (const id of ids) {
        const deferred = approvalOf(current.segment, id)
        const token = DurableDeferred.tokenFromExecutionId(deferred, { workflow, executionId: execution })
        yield* DurableDeferred.succeed(deferred, { token, value: decisions[id] as Chat.Decision })
      }
    })

  const cancel: DurableChat["cancel"] = (runId) =>
    Effect.gen(function* () {
      const current = yield* requireRun("cancel", runId)
      if (RunStore.isFinal(current)) {
        return yield* invalid("cancel", "runId", `run ${JSON.stringify(runId)} has already ended (${current._tag})`)
      }
      const store = yield* RunStore.RunStore
      yield* store.set(name, runId, { _tag: "Cancelled" })
      yield* workflow.interrupt(yield* executionId(runId))
    })

  const await_: DurableChat["await"] = (runId, options) =>
    requireRun("await", runId).pipe(
      Effect.repeat({
        schedule: Schedule.spaced(options?.pollInterval ?? Duration.millis(200)),
        until: RunStore.isFinal
      }),
      Effect.map((final) => final as FinalStatus)
    )

  return { name, layer, start, status, decide, cancel, await: await_ }
}

// ---------------------------------------------------------------------------
// Layers
// ---------------------------------------------------------------------------

/**
 * The engine in process memory, for tests: Effect's `TestRunner` (one
 * runner, in-memory message storage) and an in-memory run store. Nothing
 * survives the layer.
 *
 * @since 0.1.0
 */
export const layerTest: Layer.Layer<WorkflowEngine.WorkflowEngine | RunStore.RunStore> = Layer.mergeAll(
  ClusterWorkflowEngine.layer.pipe(Layer.provide(TestRunner.layer)),
  RunStore.layerMemory
)

/**
 * The engine for one process over SQL storage (`SingleRunner` with SQL
 * runner storage; Postgres through `@effect/sql-pg`'s `PgClient.layer`): runs
 * survive a restart of the process. Needs a `SqlClient`.
 *
 * @since 0.1.0
 */
export const layerSingle = (options?: {
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Service"]> | undefined
}): Layer.Layer<WorkflowEngine.WorkflowEngine | RunStore.RunStore, Config.ConfigError, SqlClient.SqlClient> =>
  Layer.mergeAll(
    ClusterWorkflowEngine.layer.pipe(
      Layer.provide(SingleRunner.layer({ runnerStorage: "sql", shardingConfig: options?.shardingConfig })),
      Layer.provide(NodeCrypto.layerDigest)
    ),
    RunStore.layerSql
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
 * runner that does not answer (5 tries, 500 ms apart) as unhealthy, so a
 * crashed process, whose socket and Postgres session close at once, is
 * replaced within seconds of the next check. A runner nobody can reach that
 * way (its host frozen or gone without closing its connections) is dropped
 * once its heartbeat is older than `shardLockExpiration` (Effect's default
 * 35 seconds), which also ends its Postgres lock session.
 *
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
  const ping = RunnerHealth.layerPing.pipe(
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

/**
 * One durable run of an agent's chat turn, as a workflow: each tool listing,
 * model call and tool call of the turn is an activity (through the chat's
 * `steps` hooks), stored and read back on a replay; each pause records the
 * pending calls and waits, per call, for a decision or its token's expiry
 * (a durable deferred raced against a durable clock), then resumes the turn
 * — an expired call approved by a marker approver the store refuses as
 * expired — until the turn ends or the run is cancelled.
 */
import type { ActionError } from "@rolecraft/core/ActionError"
import type * as ApprovalStore from "@rolecraft/core/ApprovalStore"
import * as Chat from "@rolecraft/core/Chat"
import type * as LanguageModel from "@rolecraft/core/LanguageModel"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Activity from "effect/workflow/Activity"
import * as DurableClock from "effect/workflow/DurableClock"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as Workflow from "effect/workflow/Workflow"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import * as RunStore from "../RunStore.ts"
import * as LocalWorkflows from "./localWorkflows.ts"
import {
  ActionErrorSchema,
  approvalOf,
  Input,
  metered,
  ModelRecord,
  Outcome,
  RunOptions,
  recordUsage,
  ToolRecord,
  Verdict
} from "./records.ts"

/**
 * What a durable run needs of an agent: its chat turns and its approval
 * store (every `Agent.Agent` has them). The store must be shared by every
 * process that runs the turns (`ApprovalStore.layerSql` on Postgres).
 *
 * @category models
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

/** The workflow of the chat turns named `name` (one per agent definition, the same in every process). */
export const workflowOf = (name: string) =>
  Workflow.make(`rolecraft/chat/${name}`, {
    payload: { runId: Schema.String, input: Input, options: RunOptions },
    success: Outcome,
    idempotencyKey: (payload) => payload.runId
  })

/** The workflow of one agent's chat turns. */
export type ChatWorkflow = ReturnType<typeof workflowOf>

type Payload = ChatWorkflow["payloadSchema"]["Type"]

// The approver recorded when a call's token expired before a decision: the store refuses it as expired.
const expiredApprover = "rolecraft-durable/expired"

/** An activity of the run: `execute`, stored under `name` with its success and error schemas. */
type RunActivity = <A, E, S extends Schema.Top, F extends Schema.Top, R2>(
  name: string,
  success: S,
  error: F,
  execute: Effect.Effect<A, E, R2>
) => Effect.Effect<A, E, R2>

/** One run: what every part of its body reads. */
interface Run<R> {
  readonly name: string
  readonly runId: string
  readonly store: RunStore.RunStore["Service"]
  readonly agent: Turns<R>
  readonly activity: RunActivity
}

// Activities need the workflow's own services; the chat hooks keep the turn's requirements, so they are given here.
const activityIn =
  (engine: Context.Context<WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance>): RunActivity =>
  <A, E, S extends Schema.Top, F extends Schema.Top, R2>(
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
const stepHooks = (activity: RunActivity, runId: string): Chat.StepHooks => ({
  tools: (step, list) => activity(`tools/${step.step}`, Schema.Array(Schema.String), Schema.Never, list),
  model: (step, call) =>
    Effect.flatMap(activity(`model/${step.step}`, ModelRecord, ActionErrorSchema, metered(call)), (record) =>
      Effect.as(recordUsage(record.usage), record.value)
    ),
  tool: (step, call) =>
    Effect.flatMap(
      activity(
        `tool/${step.step}/${step.toolCallId}${step.decided ? "/decided" : ""}${step.resumed === undefined ? "" : `/${step.resumed}`}`,
        ToolRecord,
        Schema.Never,
        metered(Effect.provideService(call, Chat.IdempotencyKey, `${runId}/${step.toolCallId}`))
      ),
      (record) => Effect.as(recordUsage(record.usage), record.value)
    )
})

/** Records a final outcome (a cancelled run keeps its status) and returns it. */
const end = <R>(run: Run<R>, outcome: Outcome) =>
  Effect.as(
    run.activity(
      "end",
      Schema.Void,
      Schema.Never,
      Effect.asVoid(
        run.store.set(
          run.name,
          run.runId,
          outcome._tag === "Failed" || outcome._tag === "Cancelled" ? outcome : { _tag: "Done", result: outcome }
        )
      )
    ),
    outcome
  )

const outcomeOf = (result: Result.Result<Chat.ChatResult, ActionError>): Outcome =>
  result._tag === "Success"
    ? result.success
    : { _tag: "Failed", category: result.failure.category, message: result.failure.message }

type Paused = Extract<Chat.ChatResult, { readonly _tag: "AwaitingApproval" }>

// Records the pause and the time left on each pending call's token (read once, stored).
const pause = <R>(run: Run<R>, paused: Paused, at: number) =>
  run.activity(
    `pause/${at}`,
    Schema.Record(Schema.String, Schema.Finite),
    Schema.Never,
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const left: Record<string, number> = {}
      for (const call of paused.pending) {
        // A store that cannot be reached stays a defect of the run here, as before the store boundary.
        const token = yield* Effect.orDie(run.agent.approvals.get(call.pendingTokenId))
        // A token this agent's store does not hold (the call of an agent used as an action, in that agent's
        // store) has no expiry known here: the call waits for its decision (-1), and is never decided by expiry.
        left[call.toolCallId] = Option.isSome(token) ? Math.max(0, token.value.expiresAt - now) : -1
      }
      yield* run.store.set(run.name, run.runId, { _tag: "AwaitingApproval", pending: paused.pending, segment: at })
      return left
    })
  )

// Each pending call's verdict: its decision, or its token's expiry, whichever comes first.
const verdicts = (paused: Paused, at: number, expiresIn: Readonly<Record<string, number>>) =>
  Effect.forEach(
    paused.pending,
    (call) =>
      DurableDeferred.raceAll({
        name: `decision/${at}/${call.toolCallId}`,
        success: Verdict,
        error: Schema.Never,
        effects:
          (expiresIn[call.toolCallId] ?? 0) < 0
            ? [DurableDeferred.await(approvalOf(at, call.toolCallId))]
            : [
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

// A cancelled run goes no further (false); else it runs again, and an expired call waits out its token so the
// store refuses it as expired.
const resumes = <R>(run: Run<R>, paused: Paused, verdicts: ReadonlyArray<typeof Verdict.Type>, at: number) =>
  run.activity(
    `resume/${at}`,
    Schema.Boolean,
    Schema.Never,
    Effect.gen(function* () {
      const current = yield* run.store.get(run.name, run.runId)
      if (Option.isSome(current) && current.value._tag === "Cancelled") return false
      yield* run.store.set(run.name, run.runId, { _tag: "Running" })
      for (const [i, call] of paused.pending.entries()) {
        if (verdicts[i]?._tag !== "Expired") continue
        // A store that cannot be reached stays a defect of the run here, as before the store boundary.
        const token = yield* Effect.orDie(run.agent.approvals.get(call.pendingTokenId))
        const now = yield* Clock.currentTimeMillis
        if (Option.isSome(token) && token.value.expiresAt > now) {
          yield* Effect.sleep(Duration.millis(token.value.expiresAt - now))
        }
      }
      return true
    })
  )

// The decisions the turn resumes with: each verdict, an expired call approved by the marker approver.
const decisionsOf = (paused: Paused, verdicts: ReadonlyArray<typeof Verdict.Type>): Chat.Decisions => {
  const decisions: Record<string, Chat.Decision> = {}
  for (const [i, call] of paused.pending.entries()) {
    const verdict = verdicts[i]
    decisions[call.toolCallId] =
      verdict === undefined || verdict._tag === "Expired" ? Chat.approve(expiredApprover) : verdict
  }
  return decisions
}

// The run's body: the turn, then each pause waited out and resumed, until it ends or is cancelled.
const body =
  <R>(name: string, agent: Turns<R>, chatOptions: Chat.ChatOptions | undefined) =>
  (payload: Payload) =>
    Effect.gen(function* () {
      const engine = yield* Effect.context<WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance>()
      const run: Run<R> = {
        name,
        runId: payload.runId,
        store: yield* RunStore.RunStore,
        agent,
        activity: activityIn(engine)
      }
      const options: Chat.ChatOptions = {
        ...chatOptions,
        ...payload.options,
        steps: stepHooks(run.activity, run.runId)
      }
      let outcome = outcomeOf(yield* Effect.result(agent.chat(payload.input, options)))
      let segment = 0
      while (outcome._tag === "AwaitingApproval") {
        const paused = outcome
        const at = segment
        const expiresIn = yield* pause(run, paused, at)
        const decided = yield* verdicts(paused, at, expiresIn)
        if (!(yield* resumes(run, paused, decided, at))) return { _tag: "Cancelled" } satisfies Outcome
        segment += 1
        outcome = outcomeOf(yield* Effect.result(agent.resume(paused.state, decisionsOf(paused, decided), options)))
      }
      return yield* end(run, outcome)
    })

/** Registers the workflow in this process with the agent that runs its turns (see `DurableChat.layer`). */
export const layer = <R>(
  workflow: ChatWorkflow,
  name: string,
  agent: Turns<R>,
  chatOptions?: Chat.ChatOptions
): Layer.Layer<never, never, WorkflowEngine.WorkflowEngine | RunStore.RunStore | R> =>
  Layer.merge(workflow.toLayer(body(name, agent, chatOptions)), Layer.effectDiscard(LocalWorkflows.register(name)))

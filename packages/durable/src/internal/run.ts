/**
 * One durable run of an agent's chat turn, as a workflow of Effect's engine: the engine owns the run (which
 * runner holds it, its replay after a crash or a restart, its wake-ups), and the run's journal (the run store's
 * recorded steps) holds what it did. Each model call and tool call of the turn is a step of the journal
 * (through the chat's `steps` hooks): recorded once, read back on a replay, never done again once recorded.
 * Each pause records the pending calls and waits, per call, for a decision or its token's expiry (a durable
 * deferred raced against a durable clock: the engine's wake-ups), records the call's verdict once — the first
 * of the decision `decide` recorded and the expiry — then resumes the turn with the recorded verdicts (an
 * expired call approved by a marker approver the store refuses as expired), until the turn ends or the run
 * is cancelled. A run whose journal or store refuses a record (a row that does not decode) fails with that
 * error's category; a turn that dies fails EXECUTION; an interruption (its runner giving it up) stays one.
 */
import type { ActionError } from "@rolecraft/core/ActionError"
import type * as ApprovalStore from "@rolecraft/core/ApprovalStore"
import * as Chat from "@rolecraft/core/Chat"
import * as IdempotencyKey from "@rolecraft/core/IdempotencyKey"
import type * as StepHooks from "@rolecraft/core/StepHooks"
import * as StoreBoundary from "@rolecraft/core/StoreBoundary"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as DurableClock from "effect/workflow/DurableClock"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as Workflow from "effect/workflow/Workflow"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import * as RunStore from "../RunStore.ts"
import * as Journal from "./journal.ts"
import * as LocalWorkflows from "./localWorkflows.ts"
import {
  approvalOf,
  Input,
  metered,
  ModelRecord,
  type Outcome,
  RunOptions,
  recordUsage,
  ToolRecord,
  type Verdict,
  Verdict as VerdictSchema,
  VerdictRecord
} from "./records.ts"

/**
 * What a durable run needs of an agent: its chat turns and its approval
 * store (every `Agent.Agent` has them). The store must be shared by every
 * process that runs the turns (`ApprovalStore.layerSql` on Postgres).
 *
 * @category models
 * @since 0.1.0
 */
export interface Turns<R> extends Pick<Chat.Turns<R>, "chat" | "resume"> {
  readonly approvals: ApprovalStore.ApprovalStore["Service"]
}

/** The workflow of the chat turns named `name` (one per agent definition, the same in every process). */
export const workflowOf = (name: string) =>
  Workflow.make(`rolecraft/chat/${name}`, {
    payload: { runId: Schema.String, input: Input, options: RunOptions },
    // The outcome itself is in the run store: the engine keeps only how the run ended.
    success: Schema.String,
    idempotencyKey: (payload) => payload.runId
  })

/** The workflow of one agent's chat turns. */
export type ChatWorkflow = ReturnType<typeof workflowOf>

type Payload = ChatWorkflow["payloadSchema"]["Type"]

// The approver recorded when a call's token expired before a decision: the store refuses it as expired.
const expiredApprover = "rolecraft-durable/expired"

/** One run: what every part of its body reads. */
interface Run<R> {
  readonly name: string
  readonly runId: string
  readonly store: RunStore.RunStore["Service"]
  readonly agent: Turns<R>
  readonly journal: Journal.Journal
}

/** The step of a call's verdict: recorded by `decide` (a decision) or by the run (its token's expiry). */
export const verdictStep = (toolCallId: string): string => Journal.stepName("decision", toolCallId)

// Each model call and tool call of the turn is a step of the journal: recorded once, read back on a replay.
// The tools offered to a model call are recorded with it, so a replay offers and routes the same ones.
const stepHooks = (journal: Journal.Journal, runId: string): StepHooks.StepHooks<Chat.ToolAnswer> => {
  const listed = new Map<number, ReadonlyArray<string>>()
  return {
    tools: (step, list) =>
      Effect.flatMap(journal.peek(Journal.stepName("model", step.step), ModelRecord), (recorded) =>
        Option.isSome(recorded)
          ? Effect.succeed(recorded.value.tools)
          : Effect.tap(list, (names) => Effect.sync(() => listed.set(step.step, names)))
      ),
    model: (step, call) =>
      Effect.flatMap(
        journal.step(
          Journal.stepName("model", step.step),
          ModelRecord,
          Effect.map(
            Effect.result(metered(call)),
            (result): ModelRecord => ({
              tools: listed.get(step.step) ?? [],
              result:
                result._tag === "Success"
                  ? { _tag: "Response", value: result.success.value, usage: result.success.usage }
                  : { _tag: "Error", error: result.failure }
            })
          )
        ),
        (record) =>
          record.result._tag === "Response"
            ? Effect.as(recordUsage(record.result.usage), record.result.value)
            : Effect.fail(record.result.error)
      ),
    tool: (step, call) =>
      Effect.flatMap(
        journal.step(
          Journal.stepName(
            "tool",
            step.step,
            step.toolCallId,
            ...(step.decided ? ["decided"] : []),
            // A nested call resumed again (an agent used as an action) is a fresh step per resumption.
            ...(step.resumed === undefined ? [] : [step.resumed])
          ),
          ToolRecord,
          metered(Effect.provideService(call, IdempotencyKey.IdempotencyKey, `${runId}/${step.toolCallId}`))
        ),
        (record) => Effect.as(recordUsage(record.usage), record.value)
      )
  }
}

/** Records a final outcome (a cancelled run keeps its status) and returns it. */
const end = <R>(run: Run<R>, outcome: Outcome) =>
  Effect.as(
    Journal.persist(
      run.store.set(
        run.name,
        run.runId,
        outcome._tag === "Failed" || outcome._tag === "Cancelled" ? outcome : { _tag: "Done", result: outcome }
      )
    ),
    outcome
  )

const outcomeOf = (result: Result.Result<Chat.ChatResult, ActionError>): Outcome =>
  result._tag === "Success"
    ? result.success
    : { _tag: "Failed", category: result.failure.category, message: result.failure.message }

type Paused = Extract<Chat.ChatResult, { readonly _tag: "AwaitingApproval" }>

// Records the pause and the time left on each pending call's token (read once, recorded).
const pause = <R>(run: Run<R>, paused: Paused, at: number) =>
  run.journal.step(
    Journal.stepName("pause", at),
    Schema.Record(Schema.String, Schema.Finite),
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const left: Record<string, number> = {}
      for (const call of paused.pending) {
        const token = yield* Journal.persist(run.agent.approvals.get(call.pendingTokenId))
        // A token this agent's store does not hold (the call of an agent used as an action, in that agent's
        // store) has no expiry known here: the call waits for its decision (-1), and is never decided by expiry.
        left[call.toolCallId] = Option.isSome(token) ? Math.max(0, token.value.expiresAt - now) : -1
      }
      yield* Journal.persist(
        run.store.set(run.name, run.runId, { _tag: "AwaitingApproval", pending: paused.pending, segment: at })
      )
      return left
    })
  )

// Each pending call's verdict, recorded once: its decision (recorded by `decide`, which then wakes the run) or
// its token's expiry, whichever was recorded first.
const verdicts = <R>(run: Run<R>, paused: Paused, at: number, expiresIn: Readonly<Record<string, number>>) =>
  Effect.forEach(
    paused.pending,
    (call) =>
      Effect.flatMap(
        DurableDeferred.raceAll({
          name: Journal.stepName("decision", at, call.toolCallId),
          success: VerdictSchema,
          error: Schema.Never,
          effects:
            (expiresIn[call.toolCallId] ?? 0) < 0
              ? [DurableDeferred.await(approvalOf(at, call.toolCallId))]
              : [
                  DurableDeferred.await(approvalOf(at, call.toolCallId)),
                  Effect.as(
                    DurableClock.sleep({
                      name: Journal.stepName("expiry", at, call.toolCallId),
                      duration: Duration.millis(expiresIn[call.toolCallId] ?? 0),
                      inMemoryThreshold: Duration.zero
                    }),
                    { _tag: "Expired" } as const
                  )
                ]
        }),
        (woken): Effect.Effect<Verdict> =>
          Effect.map(
            run.journal.step(
              verdictStep(call.toolCallId),
              VerdictRecord,
              Effect.succeed({ verdict: woken, pendingTokenId: call.pendingTokenId })
            ),
            // A verdict recorded for another call under this id (a history that repeats ids) is not this call's.
            (recorded) => (recorded.pendingTokenId === call.pendingTokenId ? recorded.verdict : { _tag: "Expired" })
          )
      ),
    { concurrency: "unbounded" }
  )

// A cancelled run goes no further (false); else it runs again, and an expired call waits out its token so the
// store refuses it as expired.
const resumes = <R>(run: Run<R>, paused: Paused, decided: ReadonlyArray<Verdict>, at: number) =>
  run.journal.step(
    Journal.stepName("resume", at),
    Schema.Boolean,
    Effect.gen(function* () {
      // A final status is never overwritten: a run cancelled while it waited keeps its status and goes no further.
      if (!(yield* Journal.persist(run.store.set(run.name, run.runId, { _tag: "Running" })))) return false
      for (const [i, call] of paused.pending.entries()) {
        if (decided[i]?._tag !== "Expired") continue
        const token = yield* Journal.persist(run.agent.approvals.get(call.pendingTokenId))
        const now = yield* Clock.currentTimeMillis
        if (Option.isSome(token) && token.value.expiresAt > now) {
          yield* Effect.sleep(Duration.millis(token.value.expiresAt - now))
        }
      }
      return true
    })
  )

// The decisions the turn resumes with: each verdict, an expired call approved by the marker approver.
const decisionsOf = (paused: Paused, decided: ReadonlyArray<Verdict>): Chat.Decisions => {
  const decisions: Record<string, Chat.Decision> = {}
  for (const [i, call] of paused.pending.entries()) {
    const verdict = decided[i]
    decisions[call.toolCallId] =
      verdict === undefined || verdict._tag === "Expired" ? Chat.approve(expiredApprover) : verdict
  }
  return decisions
}

// A turn that dies, or whose store refuses a record, fails with a category; an interruption stays one.
const settled = <R>(turn: Effect.Effect<Outcome, never, R>): Effect.Effect<Outcome, never, R> =>
  Effect.catchCause(turn, (cause) => {
    if (Cause.hasInterrupts(cause)) return Effect.failCause(cause)
    const error = Cause.squash(cause)
    if (error instanceof StoreBoundary.StoreError) {
      return Effect.succeed<Outcome>({ _tag: "Failed", category: error.category, message: error.message })
    }
    const message = error instanceof Error ? error.message : String(error)
    return Effect.succeed<Outcome>({ _tag: "Failed", category: "EXECUTION", message: `the turn died: ${message}` })
  })

// The turn, then each pause waited out and resumed, until it ends or is cancelled.
const turn = <R>(run: Run<R>, payload: Payload, options: Chat.ChatOptions) =>
  Effect.gen(function* () {
    let outcome = outcomeOf(yield* Effect.result(run.agent.chat(payload.input, options)))
    let segment = 0
    while (outcome._tag === "AwaitingApproval") {
      const paused = outcome
      const at = segment
      const expiresIn = yield* pause(run, paused, at)
      const decided = yield* verdicts(run, paused, at, expiresIn)
      if (!(yield* resumes(run, paused, decided, at))) return { _tag: "Cancelled" } satisfies Outcome
      segment += 1
      outcome = outcomeOf(yield* Effect.result(run.agent.resume(paused.state, decisionsOf(paused, decided), options)))
    }
    return outcome
  })

// The run's body: its journal opened, the turn run to its outcome, the outcome recorded.
const body =
  <R>(name: string, agent: Turns<R>, chatOptions: Chat.ChatOptions | undefined) =>
  (payload: Payload) =>
    Effect.gen(function* () {
      const store = yield* RunStore.RunStore
      const journal = yield* Journal.open(store, name, payload.runId)
      const run: Run<R> = { name, runId: payload.runId, store, agent, journal }
      const options: Chat.ChatOptions = {
        ...chatOptions,
        ...payload.options,
        steps: stepHooks(journal, run.runId),
        // The run is the turn: its calls' approvals are scoped by the run id and the call id.
        turnId: payload.runId
      }
      const outcome = yield* settled(turn(run, payload, options))
      return (yield* end(run, outcome))._tag
    })

/** Registers the workflow in this process with the agent that runs its turns (see `DurableChat.layer`). */
export const layer = <R>(
  workflow: ChatWorkflow,
  name: string,
  agent: Turns<R>,
  chatOptions?: Chat.ChatOptions
): Layer.Layer<never, never, WorkflowEngine.WorkflowEngine | RunStore.RunStore | R> =>
  Layer.merge(workflow.toLayer(body(name, agent, chatOptions)), Layer.effectDiscard(LocalWorkflows.register(name)))

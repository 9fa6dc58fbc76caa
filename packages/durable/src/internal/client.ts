/**
 * The client side of durable runs, usable from any process: start a run, read its stored status (never a
 * replay), decide its pending calls, cancel it, wait for its end. Every answer is typed, never a defect: a run
 * that does not exist, or is not in the state the operation needs, or text the store cannot hold, is
 * VALIDATION naming the field; a decision on a call decided otherwise is APPROVAL `"already decided: …"`; a
 * store or an engine that cannot be reached is TRANSIENT naming it; a stored row that does not decode is
 * EXECUTION naming the run.
 */
import {
  ApprovalRequired,
  type ExecutionFailure,
  type TransientFailure,
  ValidationError
} from "@rolecraft/core/ActionError"
import type * as Chat from "@rolecraft/core/Chat"
import * as Decision from "@rolecraft/core/Decision"
import type * as Prompt from "@rolecraft/core/Prompt"
import * as StoreBoundary from "@rolecraft/core/StoreBoundary"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import * as RunStore from "../RunStore.ts"
import { requireRegistered } from "./localWorkflows.ts"
import { approvalOf, DecisionSchema, RunOptions, VerdictRecord } from "./records.ts"
import { type ChatWorkflow, verdictStep } from "./run.ts"

type Services = WorkflowEngine.WorkflowEngine | RunStore.RunStore

type FinalStatus = Extract<RunStore.RunStatus, { readonly _tag: "Done" | "Failed" | "Cancelled" }>

/** What a client operation fails with. */
export type Failure = ValidationError | TransientFailure | ExecutionFailure

/** The engine, as messages name it. */
const engineName = "the workflow engine"

const invalid = (action: string, path: string, message: string) =>
  new ValidationError({ action, message: `${action}: ${message}`, issues: [{ path, message }] })

/** A store's failure as the operation's: VALIDATION (at the field), TRANSIENT or EXECUTION. */
const stored = <A, R>(action: string, effect: Effect.Effect<A, StoreBoundary.StoreError, R>) =>
  Effect.mapError(effect, (error) => StoreBoundary.toActionError(error, action))

/** An engine call: its failure or defect (a database it cannot reach) is TRANSIENT naming the engine. */
const engine = <A, E, R>(action: string, what: string, effect: Effect.Effect<A, E, R>) =>
  stored(action, StoreBoundary.guard(engineName, what, effect))

const executionId = (workflow: ChatWorkflow, runId: string) => workflow.executionId({ runId, input: "", options: {} })

const requireRun = (
  name: string,
  action: string,
  runId: string
): Effect.Effect<RunStore.RunStatus, Failure, RunStore.RunStore> =>
  Effect.gen(function* () {
    const status = yield* stored(action, (yield* RunStore.RunStore).get(name, runId))
    if (Option.isNone(status)) return yield* invalid(action, "runId", `no run ${JSON.stringify(runId)}`)
    return status.value
  })

/** Starts a turn under a new `runId`; returns once the run is recorded. */
export const start =
  (workflow: ChatWorkflow, name: string) =>
  (
    runId: string,
    input: string | ReadonlyArray<Prompt.Message>,
    options?: typeof RunOptions.Type
  ): Effect.Effect<void, Failure, Services> =>
    Effect.gen(function* () {
      yield* requireRegistered(name, "start")
      if (runId.length === 0 || runId.length > RunStore.maxIdLength) {
        return yield* invalid("start", "runId", `runId must be 1 to ${RunStore.maxIdLength} characters`)
      }
      const decodedOptions = yield* Effect.mapError(Schema.decodeUnknownEffect(RunOptions)(options ?? {}), (issue) =>
        invalid("start", "options", issue.message)
      )
      const store = yield* RunStore.RunStore
      // The store's insert decides (never a read before it): of two starts of one id at once, one creates the run.
      if (!(yield* stored("start", store.create(name, runId)))) {
        // The run exists: its stored status is read only to say so (a status that does not decode is EXECUTION).
        yield* stored("start", store.get(name, runId))
        return yield* invalid("start", "runId", `a run ${JSON.stringify(runId)} already exists`)
      }
      yield* engine(
        "start",
        `start run ${JSON.stringify(runId)}`,
        workflow.execute({ runId, input, options: decodedOptions }, { discard: true })
      ).pipe(
        // A run the engine never took is not left Running: its status says why it did not start.
        Effect.tapError((error) =>
          Effect.ignore(store.set(name, runId, { _tag: "Failed", category: error.category, message: error.message }))
        )
      )
    })

/** The run's stored status. */
export const status =
  (name: string) =>
  (runId: string): Effect.Effect<RunStore.RunStatus, Failure, RunStore.RunStore> =>
    requireRun(name, "status", runId)

/** A call's decision, checked: one of the two shapes, with text the stores can hold. */
const checkDecision = (id: string, raw: unknown): Effect.Effect<Decision.Decision, ValidationError> => {
  const decoded = Schema.decodeUnknownOption(DecisionSchema)(raw)
  if (Option.isNone(decoded)) {
    return Effect.fail(
      invalid("decide", `decisions.${id}`, "a decision is Chat.approve(approver) or Chat.reject(approver, reason)")
    )
  }
  const decision = decoded.value
  const refused = StoreBoundary.refusal("decide", [
    { field: "approver", text: decision.approver },
    ...(decision._tag === "Reject"
      ? [{ field: "reason", text: decision.reason, max: StoreBoundary.maxTextLength }]
      : [])
  ])
  return refused === undefined
    ? Effect.succeed(decision)
    : Effect.fail(invalid("decide", `decisions.${id}.${refused.field}`, refused.message.replace(/^decide: /, "")))
}

/** The verdict recorded for a call, judged against `decision`: undefined when it is that decision. */
const judged = (recorded: VerdictRecord, decision: Decision.Decision): string | undefined => {
  if (recorded.verdict._tag === "Expired") return "expired before it was decided"
  const ruling = Decision.judge(recorded.verdict, decision)
  return ruling._tag === "Refuse" ? ruling.message : undefined
}

const decodeVerdict = (runId: string, id: string, body: string) =>
  StoreBoundary.decodeRow(
    "the durable run store",
    `decision on ${id} of run ${JSON.stringify(runId)}`,
    Schema.fromJsonString(Schema.toCodecJson(VerdictRecord)),
    body
  )
const encodeVerdict = Schema.encodeSync(Schema.fromJsonString(Schema.toCodecJson(VerdictRecord)))

/** What a decision was made on: a call pending now, or one decided before (its recorded verdict). */
type Target =
  | { readonly _tag: "Pending"; readonly call: Chat.PendingCall }
  | { readonly _tag: "Decided"; readonly recorded: VerdictRecord }

/**
 * Decides pending calls of a run awaiting approval, by `toolCallId`: every decision checked first (nothing is
 * recorded when one is refused as VALIDATION), then each recorded once — the first recorded for a call stands —
 * and the run woken with the recorded one; a decision that is not the recorded one is APPROVAL "already decided".
 */
export const decide =
  (workflow: ChatWorkflow, name: string) =>
  (runId: string, decisions: Chat.Decisions): Effect.Effect<void, Failure | ApprovalRequired, Services> =>
    Effect.gen(function* () {
      yield* requireRegistered(name, "decide")
      const ids = Object.keys(decisions)
      if (ids.length === 0) return yield* invalid("decide", "decisions", "no decision was given")
      const checked = new Map<string, Decision.Decision>()
      for (const id of ids) checked.set(id, yield* checkDecision(id, decisions[id]))
      const store = yield* RunStore.RunStore
      const current = yield* requireRun(name, "decide", runId)
      const pending = current._tag === "AwaitingApproval" ? current.pending : []
      const targets = new Map<string, Target>()
      for (const id of ids) {
        const call = pending.find((p) => p.toolCallId === id)
        if (call !== undefined) {
          targets.set(id, { _tag: "Pending", call })
          continue
        }
        // Not pending (any more): a call decided before answers as its recorded verdict says.
        const before = yield* stored("decide", store.readStep(name, runId, verdictStep(id)))
        if (Option.isNone(before)) {
          return yield* current._tag === "AwaitingApproval"
            ? invalid("decide", `decisions.${id}`, `run ${JSON.stringify(runId)} has no pending call ${id}`)
            : invalid("decide", "runId", `run ${JSON.stringify(runId)} is not awaiting approval (${current._tag})`)
        }
        targets.set(id, { _tag: "Decided", recorded: yield* stored("decide", decodeVerdict(runId, id, before.value)) })
      }
      const refused: Array<{ readonly call: Chat.PendingCall | undefined; readonly line: string }> = []
      for (const [id, target] of targets) {
        const decision = checked.get(id) as Decision.Decision
        if (target._tag === "Decided") {
          const message = judged(target.recorded, decision)
          if (message !== undefined) refused.push({ call: undefined, line: `${id} is ${message}` })
          continue
        }
        const { call } = target
        const body = encodeVerdict({ verdict: decision, pendingTokenId: call.pendingTokenId })
        const first = yield* stored("decide", store.recordStep(name, runId, verdictStep(id), body))
        const recorded = first === body ? undefined : yield* stored("decide", decodeVerdict(runId, id, first))
        const message = recorded === undefined ? undefined : judged(recorded, decision)
        if (message !== undefined) refused.push({ call, line: `${id} (${call.action}) is ${message}` })
        // The run is woken with the recorded decision, whoever recorded it: waking it twice changes nothing.
        const verdict = recorded === undefined ? decision : recorded.verdict
        if (verdict._tag !== "Expired") yield* wake(workflow, runId, current, id, verdict)
      }
      const [first] = refused
      if (first !== undefined) {
        return yield* new ApprovalRequired({
          action: first.call?.action ?? "decide",
          reason: first.call?.reason ?? "",
          check: "decided",
          message: `decide: ${refused.map(({ line }) => line).join("; ")}`
        })
      }
    })

/** Completes the durable deferred the run waits on for call `id` with `decision`: TRANSIENT when it cannot. */
const wake = (
  workflow: ChatWorkflow,
  runId: string,
  current: RunStore.RunStatus,
  id: string,
  decision: Decision.Decision
) => {
  const deferred = approvalOf(current._tag === "AwaitingApproval" ? current.segment : 0, id)
  return engine(
    "decide",
    `wake run ${JSON.stringify(runId)} with the decision on ${id}`,
    Effect.flatMap(executionId(workflow, runId), (execution) =>
      DurableDeferred.succeed(deferred, {
        token: DurableDeferred.tokenFromExecutionId(deferred, { workflow, executionId: execution }),
        value: decision
      })
    )
  )
}

/** Stops a run that has not ended. */
export const cancel =
  (workflow: ChatWorkflow, name: string) =>
  (runId: string): Effect.Effect<void, Failure, Services> =>
    Effect.gen(function* () {
      yield* requireRegistered(name, "cancel")
      const current = yield* requireRun(name, "cancel", runId)
      if (RunStore.isFinal(current)) {
        return yield* invalid("cancel", "runId", `run ${JSON.stringify(runId)} has already ended (${current._tag})`)
      }
      const store = yield* RunStore.RunStore
      yield* stored("cancel", store.set(name, runId, { _tag: "Cancelled" }))
      yield* engine(
        "cancel",
        `interrupt run ${JSON.stringify(runId)}`,
        Effect.flatMap(executionId(workflow, runId), (execution) => workflow.interrupt(execution))
      )
    })

/**
 * Waits for the run's final status, reading the stored status every `pollInterval` (default 200 ms), and at
 * once when this process writes it (a run ending on this process's runner).
 */
export const await_ =
  (name: string) =>
  (
    runId: string,
    options?: { readonly pollInterval?: Duration.Input | undefined }
  ): Effect.Effect<FinalStatus, Failure, RunStore.RunStore> =>
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* RunStore.RunStore
        const written = yield* store.watch(name, runId)
        const interval = options?.pollInterval ?? Duration.millis(200)
        for (;;) {
          const current = yield* requireRun(name, "await", runId)
          if (RunStore.isFinal(current)) return current as FinalStatus
          yield* Effect.raceFirst(Effect.sleep(interval), written)
        }
      })
    )

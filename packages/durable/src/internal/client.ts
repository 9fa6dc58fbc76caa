/**
 * The client side of durable runs, usable from any process: start a run,
 * read its stored status (never a replay), decide its pending calls, cancel
 * it, wait for its end. A run that does not exist, or is not in the state
 * the operation needs, is VALIDATION naming the run.
 */
import { ValidationError } from "@rolecraft/core/ActionError"
import type * as Chat from "@rolecraft/core/Chat"
import type * as LanguageModel from "@rolecraft/core/LanguageModel"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import * as RunStore from "../RunStore.ts"
import { requireRegistered } from "./localWorkflows.ts"
import { approvalOf, Decision, RunOptions } from "./records.ts"
import type { ChatWorkflow } from "./run.ts"

type Services = WorkflowEngine.WorkflowEngine | RunStore.RunStore

type FinalStatus = Extract<RunStore.RunStatus, { readonly _tag: "Done" | "Failed" | "Cancelled" }>

const invalid = (action: string, path: string, message: string) =>
  new ValidationError({ action, message: `${action}: ${message}`, issues: [{ path, message }] })

const executionId = (workflow: ChatWorkflow, runId: string) => workflow.executionId({ runId, input: "", options: {} })

const requireRun = (
  name: string,
  action: string,
  runId: string
): Effect.Effect<RunStore.RunStatus, ValidationError, RunStore.RunStore> =>
  Effect.gen(function* () {
    const status = yield* (yield* RunStore.RunStore).get(name, runId)
    if (Option.isNone(status)) return yield* invalid(action, "runId", `no run ${JSON.stringify(runId)}`)
    return status.value
  })

/** Starts a turn under a new `runId`; returns once the run is recorded. */
export const start =
  (workflow: ChatWorkflow, name: string) =>
  (
    runId: string,
    input: string | ReadonlyArray<LanguageModel.Message>,
    options?: typeof RunOptions.Type
  ): Effect.Effect<void, ValidationError, Services> =>
    Effect.gen(function* () {
      yield* requireRegistered(name, "start")
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

/** The run's stored status. */
export const status =
  (name: string) =>
  (runId: string): Effect.Effect<RunStore.RunStatus, ValidationError, RunStore.RunStore> =>
    requireRun(name, "status", runId)

/** Decides pending calls of a run awaiting approval, by `toolCallId`. */
export const decide =
  (workflow: ChatWorkflow, name: string) =>
  (runId: string, decisions: Chat.Decisions): Effect.Effect<void, ValidationError, Services> =>
    Effect.gen(function* () {
      yield* requireRegistered(name, "decide")
      const current = yield* requireRun(name, "decide", runId)
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
      const execution = yield* executionId(workflow, runId)
      for (const id of ids) {
        const deferred = approvalOf(current.segment, id)
        const token = DurableDeferred.tokenFromExecutionId(deferred, { workflow, executionId: execution })
        yield* DurableDeferred.succeed(deferred, { token, value: decisions[id] as Chat.Decision })
      }
    })

/** Stops a run that has not ended. */
export const cancel =
  (workflow: ChatWorkflow, name: string) =>
  (runId: string): Effect.Effect<void, ValidationError, Services> =>
    Effect.gen(function* () {
      yield* requireRegistered(name, "cancel")
      const current = yield* requireRun(name, "cancel", runId)
      if (RunStore.isFinal(current)) {
        return yield* invalid("cancel", "runId", `run ${JSON.stringify(runId)} has already ended (${current._tag})`)
      }
      const store = yield* RunStore.RunStore
      yield* store.set(name, runId, { _tag: "Cancelled" })
      yield* workflow.interrupt(yield* executionId(workflow, runId))
    })

/** Waits for the run's final status, reading the stored status every `pollInterval` (default 200 ms). */
export const await_ =
  (name: string) =>
  (
    runId: string,
    options?: { readonly pollInterval?: Duration.Input | undefined }
  ): Effect.Effect<FinalStatus, ValidationError, RunStore.RunStore> =>
    requireRun(name, "await", runId).pipe(
      Effect.repeat({
        schedule: Schedule.spaced(options?.pollInterval ?? Duration.millis(200)),
        until: RunStore.isFinal
      }),
      Effect.map((final) => final as FinalStatus)
    )

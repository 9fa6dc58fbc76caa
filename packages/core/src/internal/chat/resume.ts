/**
 * Resuming a turn paused for approvals: the paused state decoded and checked, the decisions recorded — each
 * pending call's token approved or rejected in the store, bound to the call as it was shown (agent, action,
 * exact arguments) — then the approved calls run with their tokens, the rejected ones are answered with the
 * reason, and the turn goes on. Refuses, as VALIDATION, a state of another version or shape, decisions that
 * do not match the pending calls one to one, and an approver or reason the store cannot hold; as APPROVAL
 * (`check: "decided"`, "already decided: approved by …"), before anything runs, a decision on a call the
 * store holds decided otherwise (the state was resumed before); with the store's category when it cannot be
 * reached. A token the store refuses to approve (expired, unknown, bound to another call) is answered with
 * APPROVAL and the call does not run.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type ActionError, type ApprovalCheck, ApprovalRequired } from "../../ActionError.ts"
import { bindingOf } from "../../Approval.ts"
import * as ApprovalStore from "../../ApprovalStore.ts"
import {
  type ChatResult,
  type Decision,
  type Decisions,
  PausedState,
  type PendingCall,
  pausedStateVersion,
  type ToolAnswer
} from "../../Chat.ts"
import * as StoreBoundary from "../../StoreBoundary.ts"
import * as ToolCallId from "../../ToolCallId.ts"
import * as ApprovalKernel from "../pipeline/approval.ts"
import * as Conversion from "../schema/decode.ts"
import * as Answer from "./answer.ts"
import type { Turn } from "./context.ts"
import { loop } from "./loop.ts"
import * as ChatMessages from "./messages.ts"

/**
 * The paused state `raw` checked against `decisions`: its calls (the last assistant message's), or
 * VALIDATION.
 */
export const check = (
  raw: PausedState,
  decisions: Decisions
): Effect.Effect<
  { readonly state: PausedState; readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string }> },
  ActionError
> =>
  Effect.gen(function* () {
    const version =
      typeof raw === "object" && raw !== null ? (raw as { readonly version?: unknown }).version : undefined
    if (version !== pausedStateVersion) {
      return yield* ChatMessages.invalid(
        "resume",
        "version",
        version === undefined
          ? `the paused state has no version; this Rolecraft resumes version ${pausedStateVersion} (a state saved before versions were added cannot be resumed)`
          : `the paused state is version ${JSON.stringify(version)}; this Rolecraft resumes version ${pausedStateVersion}`
      )
    }
    const decoded = yield* Conversion.decode(PausedState, raw, { action: "resume" })
    // Ids repeated across the state's turns yield to the last step's, which its pending calls are known by.
    const state: PausedState = {
      ...decoded,
      messages: ToolCallId.unique(decoded.messages, { keepLast: true }).messages
    }
    const checked = ChatMessages.checkPaused("resume", state.messages, state.pending, decisions)
    if (Result.isFailure(checked)) return yield* checked.failure
    return { state, calls: checked.success }
  })

/** What recording one decision gave: the call approved, rejected, refused by the store, or decided before. */
type Recorded =
  | { readonly _tag: "Approved" }
  | { readonly _tag: "Rejected"; readonly approver: string; readonly reason: string }
  | { readonly _tag: "Refused"; readonly check: ApprovalCheck }
  | { readonly _tag: "Decided"; readonly message: string }

/**
 * Carries out the decisions on a checked paused state, then runs the turn on from it. `calls` are the last
 * assistant message's, whose names the decided calls are answered under.
 */
export const resume = <R>(
  turn: Turn<R>,
  state: PausedState,
  calls: ReadonlyArray<{ readonly id: string; readonly name: string }>,
  decisions: Decisions
): Effect.Effect<ChatResult, ActionError, R> =>
  Effect.gen(function* () {
    const store = yield* ApprovalKernel.storeOf(turn.host.approvals)
    const concurrency = turn.settings.concurrency
    // Every decision is recorded before any call runs: a state resumed before is refused whole.
    const recorded = yield* Effect.forEach(
      state.pending,
      (call) => record(turn.host.id, store, call, decisions[call.toolCallId] as Decision),
      { concurrency }
    )
    const refused = state.pending.flatMap((call, i) => {
      const outcome = recorded[i]
      return outcome?._tag === "Decided" ? [{ call, message: outcome.message }] : []
    })
    const first = refused[0]
    if (first !== undefined) {
      return yield* new ApprovalRequired({
        action: first.call.action,
        reason: first.call.reason,
        check: "decided",
        message: `resume: ${refused.map(({ call, message }) => `${call.toolCallId} (${labelOf(call)}) is ${message}`).join("; ")}`
      })
    }
    const answers = yield* Effect.forEach(
      state.pending,
      (call, i) =>
        answer(
          turn,
          state.steps,
          call,
          recorded[i] as Recorded,
          calls.find((c) => c.id === call.toolCallId)?.name ?? call.action
        ),
      { concurrency }
    )
    return yield* loop(turn, {
      messages: ChatMessages.withAnswers(
        state.messages,
        answers.map((answer) => answer.message)
      ),
      steps: state.steps
    })
  })

const labelOf = (pending: PendingCall): string =>
  pending.tool === undefined ? pending.action : `${pending.action}/${pending.tool}`

/**
 * Records one decision on a pending call's token, bound to the call as the state shows it. A store that
 * cannot hold the approver or reason fails the resume as VALIDATION at `decisions.<id>.<field>`; a store
 * that cannot be reached, as TRANSIENT (resuming again is safe: the same decision is the same decision).
 */
const record = (
  agentId: string,
  store: ApprovalStore.ApprovalStore["Service"],
  pending: PendingCall,
  decision: Decision
): Effect.Effect<Recorded, ActionError> => {
  const params = pending.tool === undefined ? pending.arguments : { tool: pending.tool, arguments: pending.arguments }
  const decided = Effect.flatMap(bindingOf(agentId, pending.action, pending.tool, params), (binding) =>
    decision._tag === "Reject"
      ? store.reject(pending.pendingTokenId, decision.approver, decision.reason, binding)
      : store.approve(pending.pendingTokenId, decision.approver, binding)
  )
  return Effect.matchEffect(decided, {
    onSuccess: (): Effect.Effect<Recorded> =>
      Effect.succeed(
        decision._tag === "Reject"
          ? { _tag: "Rejected", approver: decision.approver, reason: decision.reason }
          : { _tag: "Approved" }
      ),
    onFailure: (error): Effect.Effect<Recorded, ActionError> => {
      switch (error._tag) {
        case "ApprovalTokenError":
          if (error.check === "decided") return Effect.succeed({ _tag: "Decided", message: error.message })
          // A rejected call never runs, whatever the store says of its token.
          return Effect.succeed(
            decision._tag === "Reject"
              ? { _tag: "Rejected", approver: decision.approver, reason: decision.reason }
              : { _tag: "Refused", check: error.check }
          )
        case "StoreError":
          return Effect.fail(
            error.category === "VALIDATION"
              ? ChatMessages.invalid(
                  "resume",
                  `decisions.${pending.toolCallId}${error.field === undefined ? "" : `.${error.field}`}`,
                  error.message
                )
              : StoreBoundary.toActionError(error, "resume")
          )
        default:
          return Effect.fail(error)
      }
    }
  })
}

/** A pending call of model call `step` answered as its recorded decision says, under the tool `name`. */
const answer = <R>(
  turn: Turn<R>,
  step: number,
  pending: PendingCall,
  recorded: Recorded,
  name: string
): Effect.Effect<ToolAnswer, never, R> => {
  const route: Answer.Route =
    pending.tool === undefined ? { action: pending.action } : { action: pending.action, tool: pending.tool }
  const refused = (check: ApprovalCheck, detail: string) =>
    Answer.failed(
      pending.toolCallId,
      new ApprovalRequired({
        action: pending.action,
        reason: pending.reason,
        check,
        message: `${labelOf(pending)} requires approval (${pending.reason}): ${detail}`
      })
    )
  const call = { id: pending.toolCallId, name }
  const answered: Effect.Effect<ToolAnswer, never, R> =
    recorded._tag === "Approved"
      ? Effect.andThen(
          Answer.ready(turn, step, pending.toolCallId, route, pending.arguments),
          Answer.run(turn, call, route, pending.arguments, pending.pendingTokenId)
        )
      : Effect.succeed(
          recorded._tag === "Rejected"
            ? refused("rejected", `rejected by ${recorded.approver}: ${recorded.reason}`)
            : recorded._tag === "Refused"
              ? refused(recorded.check, ApprovalStore.describeCheck(recorded.check))
              : refused("decided", recorded.message)
        )
  return Answer.observed(
    turn,
    step,
    call,
    route,
    Answer.hooked(turn, { _tag: "Tool", step, toolCallId: pending.toolCallId, name, decided: true }, answered)
  )
}

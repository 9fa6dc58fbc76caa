/**
 * Resuming a turn paused for approvals: the paused state decoded and checked, one decision per pending call
 * carried out — approved: the token is approved in the store and the call runs with it; rejected: the token
 * is rejected and the model is told so — then the turn goes on. Refuses, as VALIDATION, a state of another
 * version or shape, and decisions that do not match the pending calls one to one. A token the store refuses
 * to approve (expired, already used by an earlier resume) is answered with APPROVAL and the call does not run.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type ActionError, ApprovalRequired } from "../../ActionError.ts"
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
    const state = yield* Conversion.decode(PausedState, raw, { action: "resume" })
    const checked = ChatMessages.checkPaused("resume", state.messages, state.pending, decisions)
    if (Result.isFailure(checked)) return yield* checked.failure
    return { state, calls: checked.success }
  })

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
  Effect.flatMap(
    Effect.forEach(
      state.pending,
      (call) =>
        decide(
          turn,
          state.steps,
          call,
          decisions[call.toolCallId] as Decision,
          calls.find((c) => c.id === call.toolCallId)?.name ?? call.action
        ),
      { concurrency: turn.settings.concurrency }
    ),
    (answers) =>
      loop(turn, {
        messages: ChatMessages.withAnswers(
          state.messages,
          answers.map((answer) => answer.message)
        ),
        steps: state.steps
      })
  )

/** One decision carried out on a pending call of model call `step`, answered under the tool `name`. */
const decide = <R>(
  turn: Turn<R>,
  step: number,
  pending: PendingCall,
  decision: Decision,
  name: string
): Effect.Effect<ToolAnswer, never, R> => {
  const route: Answer.Route =
    pending.tool === undefined ? { action: pending.action } : { action: pending.action, tool: pending.tool }
  const label = pending.tool === undefined ? pending.action : `${pending.action}/${pending.tool}`
  const refused = (check: ApprovalStore.ApprovalTokenError["check"], detail: string) =>
    Answer.failed(
      pending.toolCallId,
      new ApprovalRequired({
        action: pending.action,
        reason: pending.reason,
        check,
        message: `${label} requires approval (${pending.reason}): ${detail}`
      })
    )
  const call = { id: pending.toolCallId, name }
  const answer = Effect.flatMap(ApprovalKernel.storeOf(turn.host.approvals), (store) =>
    decision._tag === "Reject"
      ? Effect.as(
          Effect.ignore(store.reject(pending.pendingTokenId, decision.approver, decision.reason)),
          refused("rejected", `rejected by ${decision.approver}: ${decision.reason}`)
        )
      : Effect.matchEffect(store.approve(pending.pendingTokenId, decision.approver), {
          onFailure: (refusal) => Effect.succeed(refused(refusal.check, ApprovalStore.describeCheck(refusal.check))),
          onSuccess: () =>
            Effect.andThen(
              Answer.ready(turn, step, pending.toolCallId, route, pending.arguments),
              Answer.run(turn, call, route, pending.arguments, pending.pendingTokenId)
            )
        })
  )
  return Answer.observed(
    turn,
    step,
    call,
    route,
    Answer.hooked(turn, { _tag: "Tool", step, toolCallId: pending.toolCallId, name, decided: true }, answer)
  )
}

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
import * as ToolCallId from "../../ToolCallId.ts"
import * as ApprovalKernel from "../pipeline/approval.ts"
import * as Call from "../pipeline/call.ts"
import * as Conversion from "../schema/decode.ts"
import * as Answer from "./answer.ts"
import type { Turn } from "./context.ts"
import { pendingLabel, type Recorded, record } from "./decide.ts"
import * as Handoff from "./handoff.ts"
import { settle } from "./loop.ts"
import { removeAgents } from "./tally.ts"
import * as Nested from "./nested.ts"
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
    // A turn that handed its conversation off resumes the next agent's turn, which checks its own state.
    if (state.handoff !== undefined) return { state, calls: [] }
    // The calls of the last step still open: those waiting for a decision of this agent's, and those whose
    // inner agent waits (decided by the ids of its pending calls).
    const open = [
      ...state.pending.filter((call) => call.agents === undefined),
      ...(state.nested ?? []).map((nested) => ({ toolCallId: nested.toolCallId }))
    ]
    const checked = ChatMessages.checkPaused("resume", state.messages, open, decisions, state.pending)
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
  Effect.gen(function* () {
    if (state.handoff !== undefined) return yield* Handoff.resume(turn, state, state.handoff, decisions)
    const store = yield* ApprovalKernel.storeOf(turn.host.approvals)
    const concurrency = turn.settings.concurrency
    const own = state.pending.filter((call) => call.agents === undefined)
    const nested = state.nested ?? []
    const nameOf = (id: string, action: string) => calls.find((c) => c.id === id)?.name ?? action
    // Each pending call runs again as one call value, with its token: the binding its decision is recorded
    // under is the one its approval step consumes the token with (computed once, from the state's arguments).
    const made = own.map((pending) =>
      Answer.callOf(
        turn,
        { id: pending.toolCallId, name: nameOf(pending.toolCallId, pending.action) },
        pending.action,
        pending.tool,
        pending.arguments,
        pending.pendingTokenId,
        pending.definition?.digest
      )
    )
    // Every decision is recorded before any call runs, those of inner agents in their stores: a state
    // resumed before is refused whole.
    const recorded = yield* Effect.forEach(
      own,
      (call, i) =>
        record(store, call, Call.bindingOf(turn.host.id, made[i] as Call.Call), decisions[call.toolCallId] as Decision),
      { concurrency }
    )
    const inner = yield* Effect.forEach(nested, (call) => Nested.record(turn.host.actions, call, decisions), {
      concurrency
    })
    const refused = [
      ...own.flatMap((call, i) => {
        const outcome = recorded[i]
        return outcome?._tag === "Decided" ? [{ call, message: outcome.message }] : []
      }),
      ...inner.flat()
    ]
    const first = refused[0]
    if (first !== undefined) {
      return yield* new ApprovalRequired({
        action: first.call.action,
        reason: first.call.reason,
        check: "decided",
        message: `resume: ${refused.map(({ call, message }) => `${call.toolCallId} (${pendingLabel(call)}) is ${message}`).join("; ")}`
      })
    }
    // Each resumed inner turn reports its tokens whole: what the paused state counted for it is taken off.
    for (const call of nested)
      removeAgents(turn.composed.agents, call.state.agents ?? { [call.agent]: call.state.usage })
    const answers = yield* Effect.forEach(
      [
        ...own.map((call, i) => answer(turn, state.steps, call, made[i] as Call.Call, recorded[i] as Recorded)),
        ...nested.map((call) => Nested.answer(turn, state.steps, call, decisions, nameOf(call.toolCallId, call.action)))
      ],
      (answered) => answered,
      { concurrency }
    )
    return yield* settle(
      turn,
      state.steps,
      answers.map((answer, i) => ({ answer, made: made[i] })),
      (answered) => ChatMessages.withAnswers(state.messages, answered),
      Effect.void
    )
  })

/** A pending call of model call `step` answered as its recorded decision says: its call value run, or refused. */
const answer = <R>(
  turn: Turn<R>,
  step: number,
  pending: PendingCall,
  made: Call.Call,
  recorded: Recorded
): Effect.Effect<ToolAnswer, never, R> => {
  const refused = (check: ApprovalCheck, detail: string) =>
    Answer.failed(
      pending.toolCallId,
      new ApprovalRequired({
        action: pending.action,
        reason: pending.reason,
        check,
        message: `${pendingLabel(pending)} requires approval (${pending.reason}): ${detail}`
      })
    )
  const toolCall = made.toolCall ?? { id: pending.toolCallId, tool: pending.action }
  const answered: Effect.Effect<ToolAnswer, never, R> =
    recorded._tag === "Approved"
      ? Effect.andThen(Answer.ready(turn, step, pending.toolCallId, made), Answer.run(turn, made, pending.toolCallId))
      : Effect.succeed(
          recorded._tag === "Rejected"
            ? refused("rejected", `rejected by ${recorded.approver}: ${recorded.reason}`)
            : recorded._tag === "Refused"
              ? refused(recorded.check, ApprovalStore.describeCheck(recorded.check))
              : refused("decided", recorded.message)
        )
  const call = { id: toolCall.id, name: toolCall.tool }
  return Answer.observed(
    turn,
    step,
    call,
    made,
    Answer.hooked(
      turn,
      { _tag: "Tool", step, toolCallId: pending.toolCallId, name: call.name, decided: true },
      answered
    )
  )
}

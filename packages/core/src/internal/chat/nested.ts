/**
 * Resuming the calls of a paused turn whose inner agent (an agent used as an action) waits for decisions:
 * the decisions on the inner agent's calls — keyed `<outer call>/<inner call>`, at any depth — are recorded
 * in the inner agent's store, bound to the inner call, before anything runs (a call decided otherwise before
 * is refused with the rest); then the outer call goes on at its run step, resuming the inner turn exactly
 * where it paused with the decisions that are its own. Refuses, as VALIDATION, a nested call whose action is
 * not an agent action of the agent (or runs another agent than the state says).
 */
import * as Effect from "effect/Effect"
import { type ActionError, ExecutionFailure } from "../../ActionError.ts"
import type { Decision, Decisions, NestedCall, PendingCall, ToolAnswer } from "../../Chat.ts"
import type * as Action from "../../Action.ts"
import * as Nesting from "../agent/nesting.ts"
import * as Approval from "../../Approval.ts"
import * as ApprovalKernel from "../pipeline/approval.ts"
import * as Call from "../pipeline/call.ts"
import * as Answer from "./answer.ts"
import type { Turn } from "./context.ts"
import * as Decide from "./decide.ts"
import * as ChatMessages from "./messages.ts"

type Actions = ReadonlyMap<string, { readonly action: Action.Any }>
type AgentComposed = Extract<Nesting.Composed, { readonly _tag: "agent" }>

/** The agent action a nested call ran, and the agent it runs, as the state says; else a message why not. */
const innerOf = (
  actions: Actions,
  nested: NestedCall
): { readonly composed: AgentComposed; readonly inner: Nesting.Inner } | string => {
  const composed = Nesting.composedOf(actions.get(nested.action)?.action)
  if (composed?._tag !== "agent") return `${nested.toolCallId} ran ${nested.action}, which is not an agent action`
  const inner = composed.agent()
  if (inner.id !== nested.agent) {
    return `${nested.toolCallId} ran the agent ${nested.agent}, but ${nested.action} runs ${inner.id}`
  }
  return { composed, inner }
}

/** The actions of an inner agent by name, as its roles hold them. */
const actionsOf = (inner: Nesting.Inner): Actions => {
  const actions = new Map<string, { readonly action: Action.Any }>()
  for (const role of inner.roles) {
    for (const [name, action] of Object.entries(role.actions)) actions.set(name, { action: action as Action.Any })
  }
  return actions
}

/** The decisions whose keys start with `prefix`, keyed by the rest. */
const under = (decisions: Decisions, prefix: string): Decisions => {
  const inner: Record<string, Decision> = {}
  for (const [key, decision] of Object.entries(decisions)) {
    if (key.startsWith(prefix)) inner[key.slice(prefix.length)] = decision
  }
  return inner
}

/**
 * Records the decisions on the calls a nested call's inner agents wait for, in their stores, at every depth.
 * Returns the calls decided otherwise before (their ids as the outermost turn shows them).
 */
export const record = (
  actions: Actions,
  nested: NestedCall,
  decisions: Decisions,
  prefix = ""
): Effect.Effect<ReadonlyArray<{ readonly call: PendingCall; readonly message: string }>, ActionError> =>
  Effect.gen(function* () {
    const found = innerOf(actions, nested)
    if (typeof found === "string") return yield* ChatMessages.invalid("resume", "nested", found)
    const { inner } = found
    const store = yield* ApprovalKernel.storeOf(inner.approvals)
    const at = `${prefix}${nested.toolCallId}/`
    const own = nested.state.pending.filter((call) => call.agents === undefined)
    const recorded = yield* Effect.forEach(own, (call) =>
      Decide.record(
        store,
        call,
        Approval.bindingOf(inner.id, call.action, call.tool, Call.boundOf(call.tool, call.arguments)),
        decisions[`${at}${call.toolCallId}`] as Decision
      )
    )
    const refused = own.flatMap((call, i) => {
      const outcome = recorded[i]
      return outcome?._tag === "Decided"
        ? [{ call: { ...call, toolCallId: `${at}${call.toolCallId}` }, message: outcome.message }]
        : []
    })
    const deeper = yield* Effect.forEach(nested.state.nested ?? [], (call) =>
      record(actionsOf(inner), call, decisions, at)
    )
    return [...refused, ...deeper.flat()]
  })

/**
 * A nested call of model call `step` answered by resuming its inner turn with the decisions on its calls,
 * under the tool `name`: its call goes on at its run step, and its answer may pause again.
 */
export const answer = <R>(
  turn: Turn<R>,
  step: number,
  nested: NestedCall,
  decisions: Decisions,
  name: string
): Effect.Effect<ToolAnswer, never, R> => {
  const call = { id: nested.toolCallId, name }
  // The call goes on at its run step with the arguments it had there (converted, not parsed again).
  const made = Answer.callOf(turn, call, nested.action, undefined, nested.arguments)
  const found = innerOf(turn.host.actions, nested)
  const answered: Effect.Effect<ToolAnswer, never, R> =
    typeof found === "string"
      ? Effect.succeed(Answer.failed(call.id, new ExecutionFailure({ action: nested.action, message: found })))
      : Effect.andThen(
          Answer.ready(turn, step, call.id, made),
          Answer.runComposed(turn, made, call.id, found.composed, {
            state: nested.state,
            decisions: under(decisions, `${nested.toolCallId}/`)
          })
        )
  return Answer.observed(
    turn,
    step,
    call,
    made,
    Answer.hooked(
      turn,
      {
        _tag: "Tool",
        step,
        toolCallId: call.id,
        name,
        decided: true,
        resumed: nested.state.pending.map((pending) => pending.toolCallId).join(",")
      },
      answered
    )
  )
}

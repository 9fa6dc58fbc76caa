/**
 * Handing a turn's conversation to another agent: after the step whose calls included a handoff is answered,
 * the turn ends and the handoff's agent runs a turn on the conversation as the handoff's filter shows it
 * (without the system message: the next agent puts its own), with the turn's `output`. Its result is the
 * turn's, saying which agent answered, its tokens added to the turn's. A paused turn of the next agent pauses
 * this one, and resuming this one resumes it. One handoff per step is carried out, the first the model
 * called ({@link choose}); one that is not — a second target, one beside a call that waits for an approval, one
 * past the depth bound of nested turns — is answered with a note saying it was not carried out and why, and
 * `HandedOff` is emitted only for the one that is, when it is.
 */
import * as Effect from "effect/Effect"
import { type ActionError, ExecutionFailure } from "../../ActionError.ts"
import {
  AwaitingApproval,
  type ChatOptions,
  type ChatResult,
  type Decisions,
  type HandedOffState,
  type PausedState,
  pausedStateVersion,
  type ToolAnswer,
  type Usage
} from "../../Chat.ts"
import * as AuthorityKernel from "../pipeline/authority.ts"
import type * as Call from "../pipeline/call.ts"
import type * as Prompt from "../../Prompt.ts"
import * as Compose from "../agent/compose.ts"
import * as Nesting from "../agent/nesting.ts"
import type { Host, Position, Turn } from "./context.ts"
import { addAgents, agentsOf, usageOf } from "./tally.ts"

type Handoff = Extract<Nesting.Composed, { readonly _tag: "handoff" }>

/** A handoff a call of the turn made: the handoff value its call ran, the call's action and id, the next agent. */
export interface Called {
  readonly handoff: Handoff
  readonly action: string
  readonly toolCallId: string
  readonly agent: string
}

/** The handoff `made` (the call that gave `answer`) made, if it is a handoff action's call that handed off. */
export const calledBy = (made: Call.Call | undefined, answer: ToolAnswer, toolCallId: string): Called | undefined => {
  if (answer.handoff === undefined || made === undefined) return undefined
  const composed = Nesting.composedOf(made.entry?.action)
  return composed?._tag === "handoff"
    ? { handoff: composed, action: made.name, toolCallId, agent: answer.handoff }
    : undefined
}

/**
 * The handoff a paused handed-off turn resumes under: its action, as the state names it; a state paused by
 * Rolecraft 0.2.0 names none, and then the first handoff to its agent is taken.
 */
const resumedUnder = <R>(host: Host<R>, handedOff: HandedOffState): Handoff | undefined => {
  if (handedOff.action !== undefined) {
    const composed = Nesting.composedOf(host.actions.get(handedOff.action)?.action)
    return composed?._tag === "handoff" && composed.agent().id === handedOff.agent ? composed : undefined
  }
  for (const { action } of host.actions.values()) {
    const composed = Nesting.composedOf(action)
    if (composed?._tag === "handoff" && composed.agent().id === handedOff.agent) return composed
  }
  return undefined
}

const missing = (agent: string): ActionError =>
  new ExecutionFailure({ action: "chat", message: `chat: the agent has no handoff to ${agent}` })

const optionsOf = <R>(turn: Turn<R>): ChatOptions =>
  turn.settings.output === undefined ? {} : { output: turn.settings.output.schema }

/** The next agent's result as this turn's: its answer, this turn's tokens in all and per agent. */
const asOwn = <R>(
  turn: Turn<R>,
  messages: ReadonlyArray<Prompt.Message>,
  handedOff: Omit<HandedOffState, "state">,
  agents: Record<string, Usage>,
  result: ChatResult
): Effect.Effect<ChatResult> =>
  Effect.map(usageOf(turn), (usage): ChatResult => {
    if (result._tag !== "AwaitingApproval") {
      // The conversation as the caller keeps it: its own up to the handoff, then what the next agent added.
      const conversation = [...messages, ...result.messages.slice(handedOff.from)]
      return { ...result, messages: conversation, usage, agent: result.agent ?? handedOff.agent, agents }
    }
    const state: PausedState = {
      version: pausedStateVersion,
      messages,
      pending: result.state.pending,
      steps: result.state.steps,
      maxSteps: result.state.maxSteps,
      usage,
      agents,
      handoff: { ...handedOff, state: result.state },
      turnId: turn.id
    }
    return AwaitingApproval({ pending: result.pending, state })
  })

/** The note a handoff call not carried out is answered with: never a claim that the conversation moved. */
const notTaken = (agent: string, why: string): string => `Not transferred to ${agent}: ${why}.`

/** Whether a handoff to `agent` from this turn would go past the tree's depth bound; the reason if it would. */
const overBound = <R>(turn: Turn<R>, handoff: Handoff): Effect.Effect<string | undefined> =>
  Effect.map(Effect.service(Nesting.CurrentPlace), (place) => {
    const bound = place?.bound ?? turn.composed.bound ?? Nesting.boundOf(handoff)
    const { path, depth, over } = Nesting.deeper(place?.path ?? turn.path, bound, handoff.agent().id)
    return over
      ? `the handoffs ${Nesting.pathText(path)} would go ${depth} deep, over the bound (maxDepth ${bound.maxDepth})`
      : undefined
  })

/**
 * Which of a step's handoff calls is carried out, and the answer of each call that made one: the first the
 * model called is taken (a rule that does not depend on which call finished first), unless a call of the step
 * waits for an approval (the step pauses: none is taken, the model may call it again after the resume) or it
 * would go past the depth bound; every other is answered as not carried out.
 */
export const choose = <R>(
  turn: Turn<R>,
  called: ReadonlyArray<Called>,
  paused: boolean
): Effect.Effect<{ readonly taken: Called | undefined; readonly answers: ReadonlyMap<string, string> }> =>
  Effect.gen(function* () {
    const answers = new Map<string, string>()
    const first = called[0]
    if (first === undefined) return { taken: undefined, answers }
    const refused = paused
      ? "a call of the same response waits for an approval, so no handoff is carried out; call it again once it is decided"
      : yield* overBound(turn, first.handoff)
    for (const other of called) {
      answers.set(
        other.toolCallId,
        other === first && refused === undefined
          ? `Transferred to ${other.agent}.`
          : notTaken(
              other.agent,
              refused ?? `only one handoff of a response is carried out, the first (to ${first.agent})`
            )
      )
    }
    return { taken: refused === undefined ? first : undefined, answers }
  })

/** Runs the next agent's turn (or resumes it) in its place in the tree of nested turns. */
const run = <R>(
  turn: Turn<R>,
  handoff: Handoff,
  toolCallId: string,
  input: Compose.InnerTurn["input"],
  resumption: Compose.InnerTurn["resumption"],
  announce?: Effect.Effect<void>
): Effect.Effect<{ readonly target: string; readonly result: ChatResult }, ActionError, R> =>
  Effect.flatMap(Effect.service(Nesting.CurrentPlace), (place) => {
    const target = handoff.agent()
    const bound =
      place?.bound ??
      (turn.composed.bound ??= Nesting.boundOf(handoff, { path: turn.path, calls: turn.composed.calls }))
    const { path, depth, over } = Nesting.deeper(place?.path ?? turn.path, bound, target.id)
    if (over) {
      return Effect.fail(
        new ExecutionFailure({
          action: "chat",
          message: `chat: the handoffs ${Nesting.pathText(path)} go ${depth} deep, over the bound (maxDepth ${bound.maxDepth})`
        })
      )
    }
    const announced = announce === undefined ? Effect.void : announce
    const ran = Compose.turnOf(target, {
      input,
      resumption,
      // The next agent's model calls count against the tree's bound, like a nested turn's.
      options: { ...optionsOf(turn), steps: Compose.counting("chat", path, bound) },
      emit: turn.streaming ? turn.emit : undefined,
      path,
      toolCallId
    })
    // The next agent continues this conversation: its calls get ids unique across all of it.
    const placed = { path, bound, taken: turn.callIds }
    // What this agent denies is denied in the agent it hands off to too.
    const inherited = AuthorityKernel.inheriting(
      Effect.provideService(ran, Nesting.CurrentPlace, placed),
      turn.host.authority
    )
    return Effect.andThen(
      announced,
      Effect.map(inherited, (result) => ({
        target: target.id,
        result
      }))
    )
  }) as Effect.Effect<{ readonly target: string; readonly result: ChatResult }, ActionError, R>

/** Hands the conversation at `at` to the agent of the handoff its call ran. */
export const handOff = <R>(turn: Turn<R>, at: Position, called: Called): Effect.Effect<ChatResult, ActionError, R> => {
  const { handoff } = called
  const history = handoff.filter(at.messages.filter((message) => message.role !== "system"))
  return Effect.gen(function* () {
    const before = yield* usageOf(turn)
    const agents = agentsOf(turn, before) ?? { [turn.host.id]: before }
    // Told once the bound let it through, as the next agent's turn starts: the event follows the transfer.
    const handedOff = turn.emit({
      _tag: "HandedOff",
      from: turn.host.id,
      to: called.agent,
      toolCallId: called.toolCallId
    })
    const { target, result } = yield* run(turn, handoff, called.toolCallId, history, undefined, handedOff)
    addAgents(agents, Nesting.usageOf(target, result))
    // The next agent was given its system message and the history.
    const handed = { agent: target, toolCallId: called.toolCallId, action: called.action, from: history.length + 1 }
    return yield* asOwn(turn, at.messages, handed, agents, result)
  })
}

/** Resumes the paused turn of the agent this turn handed its conversation to. */
export const resume = <R>(
  turn: Turn<R>,
  state: PausedState,
  handedOff: HandedOffState,
  decisions: Decisions
): Effect.Effect<ChatResult, ActionError, R> => {
  const handoff = resumedUnder(turn.host, handedOff)
  if (handoff === undefined) return Effect.fail(missing(handedOff.agent))
  return Effect.gen(function* () {
    const resumption = { state: handedOff.state, decisions }
    const { target, result } = yield* run(turn, handoff, handedOff.toolCallId, [], resumption)
    const agents = { ...state.agents, ...Nesting.usageOf(target, result) }
    const handed = {
      agent: target,
      toolCallId: handedOff.toolCallId,
      ...(handedOff.action === undefined ? {} : { action: handedOff.action }),
      from: handedOff.from
    }
    return yield* asOwn(turn, state.messages, handed, agents, result)
  })
}

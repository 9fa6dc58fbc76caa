/**
 * Handing a turn's conversation to another agent: after the step whose calls included a handoff is answered,
 * the turn ends and the handoff's agent runs a turn on the conversation as the handoff's filter shows it
 * (without the system message: the next agent puts its own), with the turn's `output`. Its result is the
 * turn's, saying which agent answered, its tokens added to the turn's. A paused turn of the next agent pauses
 * this one, and resuming this one resumes it. Handoffs count against the bound of nested turns: a chain of
 * handoffs deeper than `maxDepth` fails the turn with EXECUTION naming the path of agents.
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
  type Usage
} from "../../Chat.ts"
import type * as Prompt from "../../Prompt.ts"
import * as Compose from "../agent/compose.ts"
import * as Nesting from "../agent/nesting.ts"
import type { Host, Position, Turn } from "./context.ts"
import { addAgents, agentsOf, usageOf } from "./tally.ts"

type Handoff = Extract<Nesting.Composed, { readonly _tag: "handoff" }>

/** The handoff action of `host` whose agent is `agent` (the first one). */
const handoffTo = <R>(host: Host<R>, agent: string): Handoff | undefined => {
  for (const { action } of host.actions.values()) {
    const composed = Nesting.composedOf(action)
    if (composed?._tag === "handoff" && composed.agent().id === agent) return composed
  }
  return undefined
}

const missing = (agent: string): ActionError =>
  new ExecutionFailure({ action: "chat", message: `chat: the agent has no handoff to ${agent}` })

const optionsOf = <R>(turn: Turn<R>): ChatOptions =>
  turn.settings.output === undefined ? {} : { output: turn.settings.output.schema }

/** The tokens of each agent a finished turn of the next agent ran. */
const usageByAgent = (target: string, result: ChatResult): Readonly<Record<string, Usage>> =>
  result._tag === "AwaitingApproval"
    ? (result.state.agents ?? { [target]: result.state.usage })
    : (result.agents ?? { [target]: result.usage })

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
      handoff: { ...handedOff, state: result.state }
    }
    return AwaitingApproval({ pending: result.pending, state })
  })

/** Runs the next agent's turn (or resumes it) in its place in the tree of nested turns. */
const run = <R>(
  turn: Turn<R>,
  handoff: Handoff,
  toolCallId: string,
  input: Compose.InnerTurn["input"],
  resumption: Compose.InnerTurn["resumption"]
): Effect.Effect<{ readonly target: string; readonly result: ChatResult }, ActionError, R> =>
  Effect.flatMap(Effect.service(Nesting.CurrentPlace), (place) => {
    const target = handoff.agent()
    const bound = place?.bound ?? (turn.composed.bound ??= Nesting.boundOf(handoff))
    const path = [...(place?.path ?? [turn.host.id]), target.id]
    if (path.length - 1 > bound.maxDepth) {
      return Effect.fail(
        new ExecutionFailure({
          action: "chat",
          message: `chat: the handoffs ${Nesting.pathText(path)} go ${path.length - 1} deep, over the bound (maxDepth ${bound.maxDepth})`
        })
      )
    }
    const ran = Compose.turnOf(target, {
      input,
      resumption,
      options: optionsOf(turn),
      emit: turn.streaming ? turn.emit : undefined,
      path,
      toolCallId
    })
    return Effect.map(Effect.provideService(ran, Nesting.CurrentPlace, { path, bound }), (result) => ({
      target: target.id,
      result
    }))
  }) as Effect.Effect<{ readonly target: string; readonly result: ChatResult }, ActionError, R>

/** Hands the conversation at `at` to the agent of the handoff called by `toolCallId`. */
export const handOff = <R>(
  turn: Turn<R>,
  at: Position,
  called: { readonly agent: string; readonly toolCallId: string }
): Effect.Effect<ChatResult, ActionError, R> => {
  const handoff = handoffTo(turn.host, called.agent)
  if (handoff === undefined) return Effect.fail(missing(called.agent))
  const history = handoff.filter(at.messages.filter((message) => message.role !== "system"))
  return Effect.gen(function* () {
    const before = yield* usageOf(turn)
    const agents = agentsOf(turn, before) ?? { [turn.host.id]: before }
    yield* turn.emit({ _tag: "HandedOff", from: turn.host.id, to: called.agent, toolCallId: called.toolCallId })
    const { target, result } = yield* run(turn, handoff, called.toolCallId, history, undefined)
    addAgents(agents, usageByAgent(target, result))
    // The next agent was given its system message and the history.
    const handedOff = { agent: target, toolCallId: called.toolCallId, from: history.length + 1 }
    return yield* asOwn(turn, at.messages, handedOff, agents, result)
  })
}

/** Resumes the paused turn of the agent this turn handed its conversation to. */
export const resume = <R>(
  turn: Turn<R>,
  state: PausedState,
  handedOff: HandedOffState,
  decisions: Decisions
): Effect.Effect<ChatResult, ActionError, R> => {
  const handoff = handoffTo(turn.host, handedOff.agent)
  if (handoff === undefined) return Effect.fail(missing(handedOff.agent))
  return Effect.gen(function* () {
    const resumption = { state: handedOff.state, decisions }
    const { target, result } = yield* run(turn, handoff, handedOff.toolCallId, [], resumption)
    const agents = { ...state.agents, ...usageByAgent(target, result) }
    const handed = { agent: target, toolCallId: handedOff.toolCallId, from: handedOff.from }
    return yield* asOwn(turn, state.messages, handed, agents, result)
  })
}

/**
 * Where a call of an agent used as an action runs: the path of agents above it, the bound shared by the whole
 * tree of nested turns (depth and model calls), where its events go, and the slot through which the inner
 * turn's pause (or a handoff) reaches the turn that made the call. A chat turn provides one {@link Call} to
 * each call of a composed action (and only to those); the composed action's body reads it. What marks an
 * action as composed, and the agent it runs, is here too, so the chat turn can find the inner agent of a
 * paused call when it is resumed. The depth bound and the tokens per agent are counted here for agents used
 * as actions and handoffs alike.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Action from "../../Action.ts"
import type * as ApprovalStore from "../../ApprovalStore.ts"
import type { ChatEvent, ChatResult, Decisions, PausedState, Turns, Usage } from "../../Chat.ts"
import type * as Prompt from "../../Prompt.ts"
import type * as Role from "../../Role.ts"

/** What a composed action needs of the agent it runs (an `Agent.Agent`, read structurally). */
export interface Inner extends Turns<any> {
  readonly id: string
  readonly roles: ReadonlyArray<Role.Any>
  readonly approvals: ApprovalStore.ApprovalStore["Service"]
}

/** The key under which a composed action carries what it is. */
export const ComposedId: unique symbol = Symbol.for("@rolecraft/core/Compose")

/**
 * What a composed action is: an agent used as an action (`agent`), or a handoff to an agent (`handoff`,
 * with the filter of the history the next agent sees).
 */
export type Composed =
  | {
      readonly _tag: "agent"
      readonly agent: () => Inner
      readonly maxDepth: number | undefined
      readonly maxTotalSteps: number | undefined
    }
  | {
      readonly _tag: "handoff"
      readonly agent: () => Inner
      readonly filter: (messages: ReadonlyArray<Prompt.Message>) => ReadonlyArray<Prompt.Message>
    }

/** What an action is, when it is composed. */
export const composedOf = (action: Action.Any | undefined): Composed | undefined =>
  action === undefined ? undefined : (action as unknown as { readonly [ComposedId]?: Composed })[ComposedId]

/**
 * The bound of one tree of nested turns, shared by all of them (made by the outermost turn): its model calls
 * count the outermost turn's own, and siblings share what is left first come, first served — a refusal names
 * the agents that spent it (`spent`, model calls by path of agents).
 */
export interface Bound {
  readonly maxDepth: number
  readonly maxSteps: number
  /** Model calls made so far by the turns of the tree, the outermost included. */
  steps: number
  readonly spent: Map<string, number>
}

/**
 * The bound of a tree whose outermost composed call is of `composed`: its limits, else agents nested at most
 * 4 deep and 100 model calls in all the turns of the tree; `outer` is the outermost turn's path and the model
 * calls it made before the bound was made.
 */
export const boundOf = (
  composed: Composed,
  outer?: { readonly path: ReadonlyArray<string>; readonly calls: number }
): Bound => {
  const spent = new Map<string, number>()
  if (outer !== undefined && outer.calls > 0) spent.set(pathText(outer.path), outer.calls)
  return {
    maxDepth: (composed._tag === "agent" ? composed.maxDepth : undefined) ?? 4,
    maxSteps: (composed._tag === "agent" ? composed.maxTotalSteps : undefined) ?? 100,
    steps: outer?.calls ?? 0,
    spent
  }
}

/** Counts one model call of the turn at `path` against `bound`. */
export const spend = (bound: Bound, path: ReadonlyArray<string>): void => {
  const key = pathText(path)
  bound.steps += 1
  bound.spent.set(key, (bound.spent.get(key) ?? 0) + 1)
}

/** Who spent the bound: `desk 1, desk > explore 9`. */
export const spentText = (bound: Bound): string =>
  [...bound.spent].map(([path, calls]) => `${path} ${calls}`).join(", ")

/** The inner turn's pause, written by the composed action's body for the turn that made the call. */
export interface Paused {
  readonly agent: string
  readonly state: PausedState
  readonly arguments: Readonly<Record<string, unknown>>
}

/** One call of a composed action by a chat turn. */
export interface Call {
  /** The agents above the call, outermost first; the last is the agent whose turn made the call. */
  readonly path: ReadonlyArray<string>
  readonly bound: Bound
  readonly toolCallId: string
  /** Where the inner turn's events go, tagged with its path (a streamed turn); `undefined` otherwise. */
  readonly emit: ((event: ChatEvent) => Effect.Effect<void>) | undefined
  /** The paused inner turn this call resumes, with the decisions on its calls. */
  readonly resumption: { readonly state: PausedState; readonly decisions: Decisions } | undefined
  /** Set by the body: the inner turn paused. */
  paused: Paused | undefined
  /** Set by the body: the conversation is handed off to this agent. */
  handoff: string | undefined
  /** Set by the body: the tokens of each agent the call ran (the inner agent's and those below it). */
  usage: Record<string, Usage> | undefined
}

/** The call of a composed action being run by a chat turn, if any. */
export const CurrentCall = Context.Reference<Call | undefined>("@rolecraft/core/Compose/CurrentCall", {
  defaultValue: () => undefined
})

/**
 * Where a nested turn runs: the path of agents down to its own agent, the tree's bound, and — for a turn a
 * handoff started, which continues the conversation — the ids its calls must not take (the whole conversation's).
 */
export interface Place {
  readonly path: ReadonlyArray<string>
  readonly bound: Bound
  readonly taken?: ReadonlySet<string> | undefined
}

/** The place of the turn being run, when it is nested (the outermost turn has none). */
export const CurrentPlace = Context.Reference<Place | undefined>("@rolecraft/core/Compose/CurrentPlace", {
  defaultValue: () => undefined
})

/** `a > b > c`, the path as errors name it. */
export const pathText = (path: ReadonlyArray<string>): string => path.join(" > ")

/**
 * One level down the tree of nested turns: the path to `agent` under `above`, and whether it goes deeper than
 * the tree's bound allows (`maxDepth` levels under the outermost turn) — checked here for agents used as
 * actions and for handoffs alike.
 */
export const deeper = (
  above: ReadonlyArray<string>,
  bound: Bound,
  agent: string
): { readonly path: ReadonlyArray<string>; readonly depth: number; readonly over: boolean } => {
  const path = [...above, agent]
  const depth = path.length - 1
  return { path, depth, over: depth > bound.maxDepth }
}

/** The tokens of each agent a finished inner turn of `agent` ran (its own, and those of the agents below it). */
export const usageOf = (agent: string, result: ChatResult): Record<string, Usage> =>
  result._tag === "AwaitingApproval"
    ? { ...(result.state.agents ?? { [agent]: result.state.usage }) }
    : { ...(result.agents ?? { [agent]: result.usage }) }

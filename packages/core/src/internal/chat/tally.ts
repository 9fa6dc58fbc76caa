/**
 * The tokens of a turn: its total (those spent before a pause, and those its meter recorded, which include
 * the model calls of agents it ran as actions or handed off to), and the same per agent.
 */
import * as Effect from "effect/Effect"
import type { Usage } from "../../Chat.ts"
import * as LanguageModel from "../../LanguageModel.ts"
import type { Turn } from "./context.ts"

/** The turn's tokens so far: those spent before a pause, and those its meter recorded. */
export const usageOf = <R>(turn: Turn<R>): Effect.Effect<Usage> =>
  Effect.map(turn.meter.total, ({ usage }) => LanguageModel.addUsage(turn.prior, usage))

const minus = (self: Usage, that: Usage): Usage => {
  const left: { -readonly [K in keyof Usage]: Usage[K] } = {
    inputTokens: Math.max(0, self.inputTokens - that.inputTokens),
    outputTokens: Math.max(0, self.outputTokens - that.outputTokens),
    totalTokens: Math.max(0, self.totalTokens - that.totalTokens)
  }
  // A part is kept where `self` reports it: what is left of it — unless `that` accounts for all of it (then the
  // rest reported none of that kind: absent, not 0).
  for (const part of ["cachedInputTokens", "cacheWriteInputTokens", "reasoningTokens"] as const) {
    const had = self[part]
    if (had === undefined) continue
    const rest = Math.max(0, had - (that[part] ?? 0))
    if (rest > 0 || that[part] === undefined) left[part] = rest
  }
  return left
}

/** Adds the tokens of each agent in `more` to `agents`. */
export const addAgents = (agents: Record<string, Usage>, more: Readonly<Record<string, Usage>>): void => {
  for (const [id, usage] of Object.entries(more)) {
    const had = agents[id]
    agents[id] = had === undefined ? usage : LanguageModel.addUsage(had, usage)
  }
}

/**
 * Takes the tokens of each agent in `spent` off `agents` (a resumed inner turn reports its tokens whole, those
 * before its pause included, so what the paused state counted for it is taken off first).
 */
export const removeAgents = (agents: Record<string, Usage>, spent: Readonly<Record<string, Usage>>): void => {
  for (const [id, usage] of Object.entries(spent)) {
    const had = agents[id]
    if (had === undefined) continue
    const left = minus(had, usage)
    if (left.totalTokens === 0 && left.inputTokens === 0 && left.outputTokens === 0) delete agents[id]
    else agents[id] = left
  }
}

/**
 * The turn's tokens per agent, when agents used as actions (or a handoff) ran: theirs, and the turn's own
 * agent's, what is left of `total`. `undefined` when none ran.
 */
export const agentsOf = <R>(turn: Turn<R>, total: Usage): Record<string, Usage> | undefined => {
  const others = turn.composed.agents
  const ids = Object.keys(others)
  if (ids.length === 0) return undefined
  const spent = ids.reduce<Usage>((sum, id) => LanguageModel.addUsage(sum, others[id] as Usage), zero)
  const agents = { ...others }
  addAgents(agents, { [turn.host.id]: minus(total, spent) })
  return agents
}

const zero: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

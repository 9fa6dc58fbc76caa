/**
 * The authority step of the pipeline: the agent's allow and deny globs compiled once, and
 * the check that fails a call with UNAUTHORIZED when its action (or MCP tool) is not allowed.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Glob from "effect/Glob"
import { Unauthorized } from "../../ActionError.ts"
import type { Authority } from "../../Authority.ts"
import { labelOf } from "../label.ts"

/**
 * An authority with its globs compiled once.
 *
 * @since 0.1.0
 */
export interface Compiled {
  readonly allow: ReadonlyArray<Glob.Glob>
  readonly deny: ReadonlyArray<Glob.Glob>
}

/**
 * Compiles an authority's patterns.
 *
 * @since 0.1.0
 */
export const compile = (authority: Authority | undefined): Compiled => ({
  allow: (authority?.allow ?? []).map((pattern) => Glob.make(pattern, { dot: true })),
  deny: (authority?.deny ?? []).map((pattern) => Glob.make(pattern, { dot: true }))
})

const matches = (globs: ReadonlyArray<Glob.Glob>, names: ReadonlyArray<string>): boolean =>
  globs.some((glob) => names.some((name) => Glob.match(glob, name)))

/**
 * Whether the authority allows `action` (or the tool `action/tool`).
 *
 * @since 0.1.0
 */
export const allows = (authority: Compiled, action: string, tool?: string): boolean => {
  const names = tool === undefined ? [action] : [action, labelOf(action, tool)]
  if (matches(authority.deny, names)) return false
  return authority.allow.length === 0 || matches(authority.allow, names)
}

/**
 * The deny patterns of the agents above a nested turn — the agents that use it as an action, or handed their
 * conversation to it — outermost first: what an outer agent denies is denied in every agent it uses, at any
 * depth. Their allow patterns are not inherited (they name the outer agent's own actions).
 *
 * @since 0.3.0
 */
export const Inherited = Context.Reference<ReadonlyArray<Glob.Glob>>("@rolecraft/core/Authority/Inherited", {
  defaultValue: () => []
})

/** `self` run with the denials of an agent whose authority is `authority` added to those inherited. */
export const inheriting = <A, E, R>(self: Effect.Effect<A, E, R>, authority: Compiled): Effect.Effect<A, E, R> =>
  authority.deny.length === 0
    ? self
    : Effect.flatMap(Effect.service(Inherited), (above) =>
        Effect.provideService(self, Inherited, [...above, ...authority.deny])
      )

/**
 * Step 1: fails with `Unauthorized` (AUTHORITY) when the authority does not
 * allow the action or tool, or an agent above this one (in a nested turn)
 * denies it. Read in the fiber that runs the call.
 *
 * @since 0.1.0
 */
export const check = (authority: Compiled, action: string, tool?: string): Effect.Effect<void, Unauthorized> => {
  if (!allows(authority, action, tool)) {
    return Effect.fail(
      new Unauthorized({ action, message: `The agent's authority does not allow ${labelOf(action, tool)}` })
    )
  }
  const above = Fiber.getCurrent()?.getRef(Inherited)
  if (above === undefined || above.length === 0) return Effect.void
  return matches(above, tool === undefined ? [action] : [action, labelOf(action, tool)])
    ? Effect.fail(
        new Unauthorized({
          action,
          message: `The authority of an agent above this one denies ${labelOf(action, tool)}`
        })
      )
    : Effect.void
}

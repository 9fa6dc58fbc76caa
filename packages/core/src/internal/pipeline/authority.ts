/**
 * The authority step of the pipeline: the agent's allow and deny globs compiled once, and
 * the check that fails a call with UNAUTHORIZED when its action (or MCP tool) is not allowed.
 */
import * as Effect from "effect/Effect"
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
 * Step 1: fails with `Unauthorized` (AUTHORITY) when the authority does not
 * allow the action or tool.
 *
 * @since 0.1.0
 */
export const check = (authority: Compiled, action: string, tool?: string): Effect.Effect<void, Unauthorized> =>
  allows(authority, action, tool)
    ? Effect.void
    : Effect.fail(
        new Unauthorized({
          action,
          message: `The agent's authority does not allow ${labelOf(action, tool)}`
        })
      )

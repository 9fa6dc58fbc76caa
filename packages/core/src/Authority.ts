/**
 * Authority: what an agent may run, checked first on every call. Allow and deny lists of
 * names or globs over `action` and `action/tool` (Effect's `Glob` syntax:
 * `*` within a segment, `**` across segments, `{a,b}`); deny wins; an empty
 * allow list allows all, a non-empty one only what matches. It is checked
 * before the name is resolved, so an unknown name authority denies is
 * AUTHORITY and one it allows is NOT_FOUND.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Glob from "effect/Glob"
import { Unauthorized } from "./ActionError.ts"

/**
 * The allow and deny lists an agent is given.
 *
 * @category models
 * @since 0.1.0
 */
export interface Authority {
  readonly allow?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
}

/**
 * An authority with its globs compiled once.
 *
 * @category models
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
 * @category predicates
 * @since 0.1.0
 */
export const allows = (authority: Compiled, action: string, tool?: string): boolean => {
  const names = tool === undefined ? [action] : [action, `${action}/${tool}`]
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
          message: `The agent's authority does not allow ${tool === undefined ? action : `${action}/${tool}`}`
        })
      )

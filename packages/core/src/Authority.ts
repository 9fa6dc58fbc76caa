/**
 * Authority: what an agent may run, checked first on every call. Allow and deny lists of
 * names or globs over `action` and `action/tool` (Effect's `Glob` syntax:
 * `*` within a segment, `**` across segments, `{a,b}`); deny wins; an empty
 * allow list allows all, a non-empty one only what matches. It is checked
 * before the name is resolved, so an unknown name authority denies is
 * AUTHORITY and one it allows is NOT_FOUND.
 *
 * @example
 * ```ts
 * import { Agent, type Authority, type Role } from "@rolecraft/core"
 * import { Effect } from "effect"
 *
 * declare const Files: Role.Any
 *
 * // every tool of the "files" server but writing; nothing named refund*
 * const authority: Authority.Authority = { allow: ["files/**", "search*"], deny: ["files/write_*", "refund*"] }
 * const program = Agent.make({ id: "reader", roles: [Files], authority }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 */

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

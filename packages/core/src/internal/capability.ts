/**
 * The kernel behind `Capability.make`/`extend` and `Role.make`: checking a
 * capability's entries and merging what several capabilities provide under
 * one key. Structural types only, so that `Capability` and `Role` both import
 * this module without an import cycle.
 */
import * as Action from "../Action.ts"
import { RoleDefinitionError } from "../ActionError.ts"

/** A capability as far as the kernel cares: its name and the capabilities it extends. */
export interface Node {
  readonly name: string
  readonly bases: ReadonlyArray<Node>
}

/** One action reached through a capability: which capability declared it. */
export interface Provided<C extends Node = Node> {
  readonly capability: C
  readonly action: unknown
}

/** Whether `ancestor` is `capability` itself or one it extends, transitively. */
export const isSameOrExtends = (capability: Node, ancestor: Node): boolean => {
  // A walk with a visited set: a hand-made capability whose bases cycle ends instead of overflowing.
  const seen = new Set<Node>()
  const queue: Array<Node> = [capability]
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    if (next === ancestor) return true
    if (seen.has(next) || typeof next !== "object" || next === null || !Array.isArray(next.bases)) continue
    seen.add(next)
    queue.push(...next.bases)
  }
  return false
}

/**
 * Checks that one capability entry is a dispatched action without a result
 * mapper. Throws `RoleDefinitionError` naming the capability and key.
 */
export const checkEntry = (capability: string, key: string, action: unknown): void => {
  if (!Action.isAction(action)) {
    throw new RoleDefinitionError({
      capability,
      key,
      message: `Capability ${capability} entry ${key} is not an action. Build it with Action.llm, Action.webService or Action.mcpTool.`
    })
  }
  if (action._tag === "local") {
    throw new RoleDefinitionError({
      capability,
      key,
      message:
        `Capability ${capability} entry ${key} is a local action. A local action's body is the action, so it belongs on ` +
        `the role: move ${key} into the role's own actions. Capabilities hold only dispatched actions (llm, webService, mcpTool).`
    })
  }
  if (action.mapResult !== undefined) {
    throw new RoleDefinitionError({
      capability,
      key,
      message:
        `Capability ${capability} entry ${key} post-processes its result with Action.mapResult. Capabilities are pure ` +
        `dispatch: keep ${key} without mapResult in the capability, and give the role its own ${key} with the mapper.`
    })
  }
}

/**
 * Merges what several capabilities provide under each key: a provider whose
 * capability another provider extends is hidden by the more specific one, and
 * one action value from several places is one. Returns the winners and, for
 * each ambiguous key, the providers left.
 */
export const resolveProviders = <P extends Provided>(
  candidates: ReadonlyMap<string, ReadonlyArray<P>>
): {
  readonly resolved: ReadonlyMap<string, P>
  readonly ambiguous: ReadonlyMap<string, ReadonlyArray<P>>
} => {
  const resolved = new Map<string, P>()
  const ambiguous = new Map<string, ReadonlyArray<P>>()
  for (const [key, providers] of candidates) {
    const specific = providers.filter(
      (p) => !providers.some((q) => q.capability !== p.capability && isSameOrExtends(q.capability, p.capability))
    )
    const distinct = specific.filter((p, i) => specific.findIndex((q) => q.action === p.action) === i)
    if (distinct.length === 1) resolved.set(key, distinct[0]!)
    else ambiguous.set(key, distinct)
  }
  return { resolved, ambiguous }
}

/**
 * The error for an ambiguous key: two different actions under one key from
 * capabilities that do not extend one another.
 */
export const ambiguity = (
  owner: { readonly capability: string } | { readonly role: string },
  key: string,
  providers: ReadonlyArray<Provided>
): RoleDefinitionError => {
  const names = providers.map((p) => p.capability.name).join(" and ")
  const where = "capability" in owner ? `Capability ${owner.capability}` : `Role ${owner.role}`
  return new RoleDefinitionError({
    ...owner,
    ...("role" in owner ? { capability: names } : {}),
    key,
    message:
      `${where}: action ${key} is ambiguous: ${names} each provide a different ${key}. ` +
      `Declare ${key} on the ${"capability" in owner ? "capability" : "role"} itself to choose one, or rename it in one capability.`
  })
}

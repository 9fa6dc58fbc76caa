/**
 * Capabilities: named records
 * of dispatched actions — llm, webService, mcpTool — that roles adopt.
 * `extend` builds on other capabilities; discovery flattens the hierarchy,
 * and one action value reached twice (a diamond) is one action.
 *
 * @example
 * ```ts
 * import { Action, Capability, Role } from "@rolecraft/core"
 * import { Schema } from "effect"
 *
 * const Summarizer = Capability.make("Summarizer", {
 *   summarize: Action.llm({ description: "Summarise the text in one paragraph", parameters: { text: Schema.String } })
 * })
 *
 * // a role adopts the capability's actions
 * const Editor = Role.make({
 *   identity: { name: "editor", goal: "Shorten text", domain: "editing" },
 *   capabilities: [Summarizer]
 * })
 * ```
 *
 * @since 0.1.0
 */
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import type * as Action from "./Action.ts"
import { RoleDefinitionError } from "./ActionError.ts"
import * as Kernel from "./internal/capability.ts"

/**
 * The type id carried by every Capability value (what {@link isCapability} looks for).
 *
 * @category type IDs
 * @since 0.1.0
 */
export const TypeId = "~@rolecraft/core/Capability"

/**
 * An entry a capability may hold: a dispatched action without a result
 * mapper (checked by the types and again at runtime): a local action's body
 * belongs on the role, and so does post-processing of a result.
 *
 * @category models
 * @since 0.1.0
 */
export type Entry = Action.Dispatched & { readonly mapResult: undefined }

/**
 * Entries of a capability, by action name.
 *
 * @category models
 * @since 0.1.0
 */
export type Entries = { readonly [name: string]: Entry }

// What `make` and `extend` infer their entries from: any actions, so that a wrong entry is reported by `Checked`
// in words instead of as a mismatch with every field of every dispatched action ("missing endpoint, method, …").
type Candidates = { readonly [name: string]: Action.Any }

// Each entry that may not be in a capability must have a property named after the rule it breaks: the compiler's
// error then reads "Property 'a local action belongs on the role, not in a capability' is missing …".
type Checked<Actions> = {
  readonly [K in keyof Actions]: Actions[K] extends Action.Local<any, any, any>
    ? { readonly "a local action belongs on the role, not in a capability": never }
    : Actions[K] extends Entry
      ? unknown
      : { readonly "an action with mapResult belongs on the role, not in a capability": never }
}

type EntriesOf<Actions> = Actions extends Entries ? Actions : never

/**
 * A capability: its `name`, its own `actions`, and the capabilities it
 * extends (`bases`).
 *
 * @category models
 * @since 0.1.0
 */
export interface Capability<
  Name extends string = string,
  Actions extends Entries = Entries,
  Bases extends ReadonlyArray<Any> = ReadonlyArray<Any>
> extends Pipeable {
  readonly [TypeId]: typeof TypeId
  readonly name: Name
  readonly actions: Actions
  readonly bases: Bases
}

/**
 * Any capability.
 *
 * @category models
 * @since 0.1.0
 */
export interface Any extends Pipeable {
  readonly [TypeId]: typeof TypeId
  readonly name: string
  readonly actions: Entries
  readonly bases: ReadonlyArray<Any>
}

/**
 * The flattened action record of a capability (its bases' actions, its own
 * winning by key).
 *
 * @category models
 * @since 0.1.0
 */
export type ActionsOf<C extends Any> = Omit<BaseActions<C["bases"]>, keyof C["actions"]> & C["actions"]

type BaseActions<Bases extends ReadonlyArray<Any>> = [Bases[number]] extends [never]
  ? {}
  : UnionToIntersection<Bases[number] extends infer B ? (B extends Any ? ActionsOf<B> : never) : never>

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

/**
 * Whether a value is a capability.
 *
 * @category guards
 * @since 0.1.0
 */
export const isCapability = (u: unknown): u is Any => typeof u === "object" && u !== null && TypeId in u

const Proto = {
  [TypeId]: TypeId,
  pipe() {
    return pipeArguments(this, arguments)
  },
  toJSON(this: Any) {
    return { _id: "Capability", name: this.name, actions: Object.keys(this.actions) }
  }
}

const build = <Name extends string, Actions extends Entries, Bases extends ReadonlyArray<Any>>(
  name: Name,
  bases: Bases,
  actions: Actions
): Capability<Name, Actions, Bases> => {
  for (const [key, action] of Object.entries(actions)) Kernel.checkEntry(name, key, action)
  const self = Object.create(Proto)
  self.name = name
  self.actions = Object.freeze({ ...actions })
  self.bases = Object.freeze([...bases])
  flatten(self)
  return Object.freeze(self)
}

/**
 * Makes a capability: a named record of dispatched actions.
 *
 * Throws `RoleDefinitionError` when an entry is a local action or carries a
 * result mapper; the types reject both first, with an error that names the
 * rule ("a local action belongs on the role, not in a capability").
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action, Capability } from "@rolecraft/core"
 *
 * const Summarizer = Capability.make("Summarizer", {
 *   summarize: Action.llm({
 *     description: "Summarise the text in one short paragraph",
 *     parameters: { text: Schema.String },
 *     systemPrompt: "You are concise.",
 *     temperature: 0.2
 *   })
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <const Name extends string, const Actions extends Candidates>(
  name: Name,
  actions: Actions & Checked<Actions>
): Capability<Name, EntriesOf<Actions>, readonly []> =>
  build(name, [] as const, actions as unknown as EntriesOf<Actions>)

/**
 * Makes a capability that builds on others.
 * Its own entries win by key over its bases'; one action value reached
 * through two bases is one action; two different actions under one key from
 * bases that do not extend one another, with no own entry of that key, are
 * ambiguous and throw `RoleDefinitionError`. So does a base that is
 * `undefined` (what a circular import leaves), one that is not a capability,
 * and bases that lead back to the capability itself (the message gives the
 * path of names).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action, Capability } from "@rolecraft/core"
 *
 * const Summarizer = Capability.make("Summarizer", {
 *   summarize: Action.llm({ description: "Summarise the text", parameters: { text: Schema.String } })
 * })
 * const Editor = Capability.extend("Editor", [Summarizer], {
 *   translate: Action.llm({
 *     description: "Translate the text",
 *     parameters: { text: Schema.String, targetLanguage: Schema.String }
 *   })
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const extend = <
  const Name extends string,
  const Bases extends ReadonlyArray<Any>,
  const Actions extends Candidates
>(
  name: Name,
  bases: Bases,
  actions: Actions & Checked<Actions>
): Capability<Name, EntriesOf<Actions>, Bases> => build(name, bases, actions as unknown as EntriesOf<Actions>)

/**
 * Whether `ancestor` is `capability` itself or one it extends, transitively.
 *
 * @category predicates
 * @since 0.1.0
 */
export const isSameOrExtends: (capability: Any, ancestor: Any) => boolean = Kernel.isSameOrExtends

/**
 * Why something cannot be used as a capability's base, or `undefined` when it
 * can. `undefined` is what a circular import leaves in place of a base.
 */
const baseProblem = (base: unknown, position: number): string | undefined => {
  if (base === undefined) {
    return (
      `base ${position} is undefined. This is usually a circular import: the module defining this capability ` +
      `and the one defining its base import each other, so the base is not defined yet when this one is built. ` +
      `Move the base into a module of its own that both import, or import it without the cycle.`
    )
  }
  if (!isCapability(base) || !Array.isArray(base.bases)) {
    return `base ${position} is not a capability. Build bases with Capability.make or Capability.extend.`
  }
  return undefined
}

/** A RoleDefinitionError for the bases of `capability`, or `undefined` when they can be used. */
const checkBases = (capability: Any, path: ReadonlyArray<Any>): RoleDefinitionError | undefined => {
  const bases: ReadonlyArray<unknown> = Array.isArray(capability.bases) ? capability.bases : [capability.bases]
  for (let index = 0; index < bases.length; index++) {
    const problem = baseProblem(bases[index], index + 1)
    if (problem !== undefined) {
      return new RoleDefinitionError({
        capability: capability.name,
        message: `Capability ${capability.name}: ${problem}`
      })
    }
    const at = path.indexOf(bases[index] as Any)
    if (at !== -1) {
      const cycle = [...path.slice(at), bases[index] as Any].map((c) => c.name).join(" → ")
      const root = path[0] ?? capability
      return new RoleDefinitionError({
        capability: root.name,
        message:
          `Capability ${root.name}: its bases form a cycle (${cycle}). A capability cannot extend itself, ` +
          `directly or through others: remove one of these bases.`
      })
    }
  }
  return undefined
}

/**
 * One action reached through a capability: which capability declared it.
 *
 * @category models
 * @since 0.1.0
 */
export interface Provided {
  readonly capability: Any
  readonly action: Entry
}

const flattened = new WeakMap<Any, ReadonlyMap<string, Provided>>()

/**
 * The flattened actions of a capability with the capability that declared
 * each one. Throws `RoleDefinitionError` for an ambiguous key.
 *
 * @category getters
 * @since 0.1.0
 */
export const flatten = (capability: Any): ReadonlyMap<string, Provided> => flattenFrom(capability, [])

// `path` holds the capabilities being flattened (the descendants), to find cycles.
const flattenFrom = (capability: Any, path: ReadonlyArray<Any>): ReadonlyMap<string, Provided> => {
  const cached = flattened.get(capability)
  if (cached !== undefined) return cached
  const inner = [...path, capability]
  const broken = checkBases(capability, inner)
  if (broken !== undefined) throw broken
  const candidates = new Map<string, Array<Provided>>()
  for (const base of capability.bases) {
    for (const [key, provided] of flattenFrom(base, inner)) {
      if (Object.hasOwn(capability.actions, key)) continue
      const list = candidates.get(key) ?? []
      list.push(provided)
      candidates.set(key, list)
    }
  }
  const { resolved, ambiguous } = Kernel.resolveProviders(candidates)
  const first = ambiguous.entries().next()
  if (!first.done) {
    const [key, providers] = first.value
    throw Kernel.ambiguity({ capability: capability.name }, key, providers)
  }
  const result = new Map(resolved)
  for (const [key, action] of Object.entries(capability.actions as Entries)) result.set(key, { capability, action })
  flattened.set(capability, result)
  return result
}

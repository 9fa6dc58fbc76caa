/**
 * Roles: identity plus actions. A role
 * merges the actions of its capabilities with its own; its own action wins by
 * key, type and all (a role may replace a capability's llm `summarize` with a
 * local one). `extend` builds a role on another, the extension winning by
 * key.
 *
 * @example
 * ```ts
 * import { Action, Role } from "@rolecraft/core"
 * import { Schema } from "effect"
 *
 * const Travel = Role.make({
 *   identity: { name: "travel", goal: "Plan trips", domain: "travel" },
 *   actions: {
 *     nights: Action.local({
 *       description: "Count the nights between two ISO dates",
 *       parameters: { checkIn: Schema.String, checkOut: Schema.String },
 *       run: ({ checkIn, checkOut }) => (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
 *     })
 *   }
 * })
 *
 * // a role built on another: its own actions win by key
 * const Concierge = Role.extend(Travel, {
 *   identity: { name: "concierge", goal: "Plan trips and tables", domain: "travel" },
 *   actions: {
 *     table: Action.local({
 *       description: "Book a table",
 *       parameters: { restaurant: Schema.String },
 *       run: ({ restaurant }) => `booked ${restaurant}`
 *     })
 *   }
 * })
 *
 * Role.actions(Concierge).map((entry) => entry.name) // ["nights", "table"]
 * ```
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import * as Action from "./Action.ts"
import { RoleDefinitionError } from "./ActionError.ts"
import * as Capability from "./Capability.ts"
import type * as Contract from "./Contract.ts"
import type * as Guardrail from "./Guardrail.ts"
import * as Kernel from "./internal/capability.ts"

/**
 * The type id carried by every Role value (what {@link isRole} looks for).
 *
 * @category type IDs
 * @since 0.1.0
 */
export const TypeId = "~@rolecraft/core/Role"

/**
 * Who the role is: its `name`, `goal` and `domain`, used in prompts and
 * messages.
 *
 * @category models
 * @since 0.1.0
 */
export interface Identity {
  readonly name: string
  readonly goal: string
  readonly domain: string
}

/**
 * Identity metadata that exporters read (e.g. when a role is served over MCP).
 *
 * @category models
 * @since 0.1.0
 */
export interface Declaration {
  readonly description: string
  readonly version: string
}

/**
 * How the role is configured.
 *
 * - `model`: model name, temperature and `maxTokens` (the most tokens a
 *   reply may use, an integer >= 1) for the role's llm actions and chat.
 * - `knowledge`: knowledge sources (files or directories) that actions with
 *   a retrieval policy search.
 * - `goals`, `config`: data the role's prompts and actions may read.
 *
 * @category models
 * @since 0.1.0
 */
export interface Spec {
  readonly model?:
    | {
        readonly name?: string | undefined
        readonly temperature?: number | undefined
        readonly maxTokens?: number | undefined
      }
    | undefined
  readonly knowledge?: ReadonlyArray<string> | undefined
  readonly goals?: ReadonlyArray<string> | undefined
  readonly config?: Readonly<Record<string, unknown>> | undefined
}

/**
 * The role's hooks: code run before and after each of its actions.
 *
 * - `before(action, args)`: runs before the input guardrail with the raw
 *   arguments; it returns the arguments to use (a value or an Effect).
 * - `after(action, args, result)`: runs last, only on success.
 *
 * A hook that throws or fails is EXECUTION unless it failed with an
 * `ActionError`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Hooks {
  readonly before?:
    | ((
        action: string,
        args: Readonly<Record<string, unknown>>
      ) => Readonly<Record<string, unknown>> | Effect.Effect<Readonly<Record<string, unknown>>, unknown>)
    | undefined
  readonly after?: ((action: string, args: Readonly<Record<string, unknown>>, result: unknown) => unknown) | undefined
}

/**
 * The role's state: each agent holds it in a
 * `Ref` starting at `initial`; `invariants` are checked after a call whose
 * contract says `checkState`.
 *
 * @category models
 * @since 0.1.0
 */
export interface State<S> {
  readonly initial: S
  readonly invariants?: ReadonlyArray<Contract.Condition<[state: S]>> | undefined
}

/**
 * Where a role's action came from: the role's own declaration (`role` names
 * the role that declared it, a base role after `extend`) or a capability.
 *
 * @category models
 * @since 0.1.0
 */
export type Source =
  | { readonly _tag: "Role"; readonly role: string }
  | { readonly _tag: "Capability"; readonly capability: string }

/**
 * One merged action of a role with its provenance.
 *
 * @category models
 * @since 0.1.0
 */
export interface Entry {
  readonly name: string
  readonly action: Action.Any
  readonly source: Source
}

/**
 * A role. `actions` is the merged record; `Role.actions` lists it with
 * provenance.
 *
 * @category models
 * @since 0.1.0
 */
export interface Role<Actions extends Record<string, Action.Any> = Record<string, Action.Any>, S = unknown>
  extends Pipeable {
  readonly [TypeId]: typeof TypeId
  readonly identity: Identity
  readonly declaration: Declaration | undefined
  readonly spec: Spec
  readonly capabilities: ReadonlyArray<Capability.Any>
  readonly hooks: Hooks
  readonly guardrails: Guardrail.Policy | undefined
  readonly state: State<S> | undefined
  readonly actions: Actions
  readonly entries: ReadonlyArray<Entry>
  /** The role's own actions with the role that declared each. */
  readonly own: ReadonlyMap<string, { readonly action: Action.Any; readonly role: string }>
}

/**
 * Any role.
 *
 * @category models
 * @since 0.1.0
 */
export type Any = Role<any, any>

/**
 * The services the actions of a role require (`never` for no role, as in
 * `Agent.make({ roles: [] })`); of a union of roles, what any of them
 * requires.
 *
 * @category models
 * @since 0.1.0
 */
export type Services<X extends Any> = [X] extends [never]
  ? never
  : X extends Any
    ? {
        [K in keyof X["actions"]]: Action.Services<X["actions"][K]>
      }[keyof X["actions"]]
    : never

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

type CapabilityActions<Caps extends ReadonlyArray<Capability.Any>> = [Caps[number]] extends [never]
  ? {}
  : UnionToIntersection<Capability.ActionsOf<Caps[number]>>

/**
 * The merged action record: capability actions overridden by own actions.
 *
 * @category models
 * @since 0.1.0
 */
export type Merge<Caps extends ReadonlyArray<Capability.Any>, Own> = Simplify<
  Omit<CapabilityActions<Caps>, keyof Own> & Own
>

type Simplify<A> = { [K in keyof A]: A[K] } & {}

/**
 * What `Role.make` takes.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options<Caps extends ReadonlyArray<Capability.Any>, Own extends Record<string, Action.Any>, S> {
  readonly identity: Identity
  readonly declaration?: Declaration | undefined
  readonly spec?: Spec | undefined
  readonly capabilities?: Caps | undefined
  readonly actions?: Own | undefined
  readonly hooks?: Hooks | undefined
  readonly guardrails?: Guardrail.Policy | undefined
  readonly state?: State<S> | undefined
}

/**
 * Whether a value is a role.
 *
 * @category guards
 * @since 0.1.0
 */
export const isRole = (u: unknown): u is Any => typeof u === "object" && u !== null && TypeId in u

const Proto = {
  [TypeId]: TypeId,
  pipe() {
    return pipeArguments(this, arguments)
  },
  toJSON(this: Any) {
    return { _id: "Role", identity: this.identity, actions: this.entries.map((e) => e.name) }
  }
}

const build = (fields: {
  readonly identity: Identity
  readonly declaration: Declaration | undefined
  readonly spec: Spec
  readonly capabilities: ReadonlyArray<Capability.Any>
  readonly own: ReadonlyMap<string, { readonly action: Action.Any; readonly role: string }>
  readonly hooks: Hooks
  readonly guardrails: Guardrail.Policy | undefined
  readonly state: State<unknown> | undefined
}): Any => {
  const role = fields.identity.name
  const maxTokens = fields.spec.model?.maxTokens
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens >= 1)) {
    throw new RoleDefinitionError({
      role,
      message: `Role ${role} spec.model.maxTokens must be an integer >= 1, got ${maxTokens}`
    })
  }
  for (const [key, { action }] of fields.own) {
    if (!Action.isAction(action)) {
      throw new RoleDefinitionError({
        role,
        key,
        message: `Role ${role} action ${key} is not an action. Build it with Action.local, Action.llm, Action.webService or Action.mcpTool.`
      })
    }
  }
  const candidates = new Map<string, Array<Capability.Provided>>()
  for (const capability of fields.capabilities) {
    if (!Capability.isCapability(capability)) {
      throw new RoleDefinitionError({
        role,
        message:
          capability === undefined
            ? `Role ${role} lists undefined in capabilities. This is usually a circular import: the module defining ` +
              `the role and the one defining the capability import each other, so the capability is not defined yet ` +
              `when the role is made. Move the capability into a module of its own, or import it without the cycle.`
            : `Role ${role} lists something that is not a capability in capabilities. Build it with Capability.make.`
      })
    }
    for (const [key, provided] of Capability.flatten(capability)) {
      Kernel.checkEntry(provided.capability.name, key, provided.action)
      const list = candidates.get(key) ?? []
      list.push(provided)
      candidates.set(key, list)
    }
  }
  const { resolved, ambiguous } = Kernel.resolveProviders(candidates)
  for (const [key, providers] of ambiguous) {
    if (!fields.own.has(key)) throw Kernel.ambiguity({ role }, key, providers)
  }
  const entries: Array<Entry> = []
  for (const [name, { capability, action }] of resolved) {
    if (!fields.own.has(name))
      entries.push({ name, action, source: { _tag: "Capability", capability: capability.name } })
  }
  for (const [name, { action, role: declaredBy }] of fields.own) {
    entries.push({ name, action, source: { _tag: "Role", role: declaredBy } })
  }
  const self = Object.create(Proto)
  Object.assign(self, fields, {
    actions: Object.freeze(Object.fromEntries(entries.map((entry) => [entry.name, entry.action]))),
    entries: Object.freeze(entries)
  })
  return Object.freeze(self)
}

/**
 * Makes a role from its identity, capabilities and own actions.
 *
 * Override by key: the role's own action wins over a capability's, type and
 * all. Throws `RoleDefinitionError` (message names capability and key, says
 * why and what to do instead) when a capability entry is a local action or
 * has a result mapper, or when two unrelated capabilities give different
 * actions under one key that the role does not declare itself; and when
 * `spec.model.maxTokens` is not an integer >= 1.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action, Capability, Role } from "@rolecraft/core"
 *
 * const Summarizer = Capability.make("Summarizer", {
 *   summarize: Action.llm({ description: "Summarise the text", parameters: { text: Schema.String } })
 * })
 *
 * const StrictEditor = Role.make({
 *   identity: { name: "strict-editor", goal: "Shorten text deterministically", domain: "editing" },
 *   capabilities: [Summarizer],
 *   actions: {
 *     summarize: Action.local({
 *       description: "Truncate the text to 60 characters",
 *       parameters: { text: Schema.String },
 *       run: ({ text }) => (text.length <= 60 ? text : `${text.slice(0, 60)}...`)
 *     })
 *   }
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <
  const Caps extends ReadonlyArray<Capability.Any> = readonly [],
  const Own extends Record<string, Action.Any> = {},
  S = unknown
>(
  options: Options<Caps, Own, S>
): Role<Merge<Caps, Own>, S> =>
  build({
    identity: options.identity,
    declaration: options.declaration,
    spec: options.spec ?? {},
    capabilities: options.capabilities ?? [],
    own: new Map(
      Object.entries(options.actions ?? {}).map(([key, action]) => [key, { action, role: options.identity.name }])
    ),
    hooks: options.hooks ?? {},
    guardrails: options.guardrails,
    state: options.state as State<unknown> | undefined
  }) as Role<Merge<Caps, Own>, S>

/**
 * Builds a role on another: the extension's own
 * actions win by key over the base's, and both win over capabilities; the
 * capabilities of both apply; `identity`, `declaration`, `spec`, `hooks`,
 * `guardrails` and `state` given in the extension replace the base's.
 *
 * Throws `RoleDefinitionError` as {@link make} does.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Action, Role } from "@rolecraft/core"
 *
 * const Editor = Role.make({
 *   identity: { name: "editor", goal: "Edit texts", domain: "text" },
 *   actions: { summarize: Action.llm({ description: "Summarise the text", parameters: { text: Schema.String } }) }
 * })
 * // The strict editor keeps the editor's actions but summarises with code, not a model.
 * const StrictEditor = Role.extend(Editor, {
 *   identity: { name: "strict-editor", goal: "Edit texts tersely", domain: "text" },
 *   actions: {
 *     summarize: Action.local({
 *       description: "Keep the first sentence",
 *       parameters: { text: Schema.String },
 *       run: ({ text }) => text.split(". ")[0] ?? text
 *     })
 *   }
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const extend = <
  Base extends Any,
  const Caps extends ReadonlyArray<Capability.Any> = readonly [],
  const Own extends Record<string, Action.Any> = {},
  S = Base extends Role<any, infer S0> ? S0 : unknown
>(
  base: Base,
  extension: Partial<Options<Caps, Own, S>>
): Role<
  Simplify<Omit<CapabilityActions<Caps>, keyof Base["actions"] | keyof Own> & Omit<Base["actions"], keyof Own> & Own>,
  S
> => {
  const identity = extension.identity ?? base.identity
  const own = new Map(base.own)
  for (const [key, action] of Object.entries(extension.actions ?? {})) own.set(key, { action, role: identity.name })
  return build({
    identity,
    declaration: extension.declaration ?? base.declaration,
    spec: extension.spec ?? base.spec,
    capabilities: [...base.capabilities, ...(extension.capabilities ?? [])],
    own,
    hooks: extension.hooks ?? base.hooks,
    guardrails: extension.guardrails ?? base.guardrails,
    state: (extension.state as State<unknown> | undefined) ?? base.state
  }) as never
}

/**
 * The merged actions of a role, each with where it came from.
 *
 * @category getters
 * @since 0.1.0
 */
export const actions = (role: Any): ReadonlyArray<Entry> => role.entries

/**
 * Broken capability bases (C40): an `undefined` base, which is what a
 * circular import yields, and bases that lead back to the capability itself.
 * Both are a `RoleDefinitionError` that names the capability and the base at
 * fault and says what to do, never a bare `TypeError` or a stack overflow.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, ActionError, Capability, Role } from "@rolecraft/core"
import { Schema } from "effect"

const summarize = Action.llm({ description: "Summarise the text", parameters: { text: Schema.String } })
const Summarizer = Capability.make("Summarizer", { summarize })

/** What the call threw, asserted to be a RoleDefinitionError. */
const thrown = (build: () => unknown): ActionError.RoleDefinitionError => {
  try {
    build()
  } catch (error) {
    assert.instanceOf(error, ActionError.RoleDefinitionError, String(error))
    return error as ActionError.RoleDefinitionError
  }
  return assert.fail("expected a RoleDefinitionError")
}

/** A capability-shaped value whose bases are read lazily, as a hand-made or proxied one could be. */
const lazy = (name: string, bases: () => ReadonlyArray<unknown>): Capability.Any =>
  ({
    [Capability.TypeId]: Capability.TypeId,
    name,
    actions: {},
    get bases() {
      return bases()
    },
    pipe() {
      return this
    }
  }) as unknown as Capability.Any

describe("Capability bases that cannot be used", () => {
  it("an undefined base (a circular import) is a RoleDefinitionError naming the capability, the base's position and the likely cause", () => {
    const error = thrown(() =>
      Capability.extend("Editor", [Summarizer, undefined as unknown as Capability.Any], { edit: summarize })
    )
    assert.strictEqual(error.capability, "Editor")
    assert.include(error.message, "Editor")
    assert.include(error.message, "base 2")
    assert.include(error.message, "circular import")
  })

  it("a base that is not a capability is a RoleDefinitionError saying how to build one", () => {
    const error = thrown(() => Capability.extend("Editor", [{ name: "Fake" } as unknown as Capability.Any], {}))
    assert.strictEqual(error.capability, "Editor")
    assert.include(error.message, "not a capability")
    assert.include(error.message, "Capability.make")
  })

  it("bases that lead back to themselves are a RoleDefinitionError with the path of names, not a stack overflow", () => {
    const a: Capability.Any = lazy("A", () => [b])
    const b: Capability.Any = lazy("B", () => [a])
    const error = thrown(() => Capability.extend("Editor", [a], {}))
    assert.strictEqual(error.capability, "Editor")
    assert.include(error.message, "A → B → A")
    assert.include(error.message, "cycle")
  })

  it("a role given a capability whose bases cycle, or hold undefined, fails the same way", () => {
    const a: Capability.Any = lazy("A", () => [b])
    const b: Capability.Any = lazy("B", () => [a])
    const identity = { name: "writer", goal: "Write", domain: "docs" }
    // Untyped on purpose: these values are what types cannot see (a hand-made or half-imported capability).
    const makeRole = Role.make as unknown as (options: {
      identity: typeof identity
      capabilities: ReadonlyArray<unknown>
      actions: {}
    }) => unknown
    assert.include(thrown(() => makeRole({ identity, capabilities: [a], actions: {} })).message, "A → B → A")
    const holed = lazy("Holed", () => [undefined])
    assert.include(thrown(() => makeRole({ identity, capabilities: [holed], actions: {} })).message, "circular import")
    const error = thrown(() => makeRole({ identity, capabilities: [undefined], actions: {} }))
    assert.strictEqual(error.role, "writer")
    assert.include(error.message, "circular import")
  })

  it("isSameOrExtends stops on a cycle", () => {
    const a: Capability.Any = lazy("A", () => [b])
    const b: Capability.Any = lazy("B", () => [a])
    assert.isFalse(Capability.isSameOrExtends(a, Summarizer))
    assert.isTrue(Capability.isSameOrExtends(a, b))
  })
})

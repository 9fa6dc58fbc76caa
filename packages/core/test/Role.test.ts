import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { expectTypeOf } from "vitest"
import * as Action from "../src/Action.ts"
import { RoleDefinitionError } from "../src/ActionError.ts"
import * as Capability from "../src/Capability.ts"
import * as Role from "../src/Role.ts"

const text = { text: Schema.String }
const summarize = Action.llm({ description: "Summarise the text", parameters: text })
const paraphrase = Action.llm({ description: "Paraphrase", parameters: text })
const translate = Action.llm({
  description: "Translate the text to the target language",
  parameters: { text: Schema.String, targetLanguage: Schema.String }
})
const Summarizer = Capability.make("Summarizer", { summarize })
const Translator = Capability.make("Translator", { translate })
const identity = (name: string) => ({ name, goal: "goal", domain: "domain" })

const thrown = (f: () => unknown): RoleDefinitionError => {
  try {
    f()
  } catch (error) {
    if (error instanceof RoleDefinitionError) return error
    throw error
  }
  throw new Error("expected a RoleDefinitionError")
}

describe("Capability", () => {
  it("rejects a local action, naming capability and key and saying what to do", () => {
    const local = Action.local({ description: "d", parameters: text, run: ({ text }) => text })
    // @ts-expect-error a capability holds dispatched actions only (rule 1)
    const error = thrown(() => Capability.make("Editing", { shorten: local }))
    assert.strictEqual(error.capability, "Editing")
    assert.strictEqual(error.key, "shorten")
    assert.match(error.message, /local action/)
    assert.match(error.message, /belongs on the role/)
  })

  it("a local or mapped action in a capability is a compile error that says it belongs on the role", () => {
    const local = Action.local({ description: "d", parameters: text, run: ({ text }) => text })
    const mapped = summarize.pipe(Action.mapResult((result) => result.value))
    // What make requires of the entry `shorten`: the compiler reports the property it misses, by name.
    type Required<A extends Action.Any> = Parameters<typeof Capability.make<"Editing", { shorten: A }>>[1]["shorten"]
    expectTypeOf<Required<typeof local>>().toHaveProperty("a local action belongs on the role, not in a capability")
    expectTypeOf<Required<typeof mapped>>().toHaveProperty(
      "an action with mapResult belongs on the role, not in a capability"
    )
    expectTypeOf<Required<typeof summarize>>().not.toHaveProperty(
      "a local action belongs on the role, not in a capability"
    )
    expectTypeOf<Required<typeof summarize>>().toExtend<typeof summarize>()
  })

  it("rejects an action with a result mapper (rule 2)", () => {
    const mapped = summarize.pipe(Action.mapResult((result) => result.value))
    // @ts-expect-error post-processing belongs on the role (rule 2)
    const error = thrown(() => Capability.make("Summarizer", { summarize: mapped }))
    assert.strictEqual(error.key, "summarize")
    assert.match(error.message, /mapResult/)
    assert.match(error.message, /give the role its own summarize/)
  })

  it("extend flattens transitively; own entries win; a diamond is one action", () => {
    const Base = Capability.make("Base", { summarize })
    const Left = Capability.extend("Left", [Base], { translate })
    const Right = Capability.extend("Right", [Base], {})
    const Both = Capability.extend("Both", [Left, Right], {})
    const flat = Capability.flatten(Both)
    assert.deepStrictEqual([...flat.keys()].sort(), ["summarize", "translate"])
    assert.strictEqual(flat.get("summarize")?.action, summarize)
    assert.strictEqual(flat.get("summarize")?.capability, Base)
    const Override = Capability.extend("Override", [Base], { summarize: paraphrase })
    assert.strictEqual(Capability.flatten(Override).get("summarize")?.action, paraphrase)
  })

  it("two unrelated bases with different actions under one key are ambiguous", () => {
    const A = Capability.make("A", { summarize })
    const B = Capability.make("B", { summarize: paraphrase })
    const error = thrown(() => Capability.extend("C", [A, B], {}))
    assert.strictEqual(error.capability, "C")
    assert.strictEqual(error.key, "summarize")
    assert.match(error.message, /A and B/)
  })
})

describe("Role", () => {
  it("merges capabilities with its own actions, with provenance", () => {
    const assistant = Role.make({ identity: identity("assistant"), capabilities: [Summarizer, Translator] })
    assert.deepStrictEqual(
      Role.actions(assistant).map((entry) => [entry.name, entry.action._tag, entry.source]),
      [
        ["summarize", "llm", { _tag: "Capability", capability: "Summarizer" }],
        ["translate", "llm", { _tag: "Capability", capability: "Translator" }]
      ]
    )
    assert.strictEqual(assistant.actions.summarize, summarize)
  })

  it("role action overrides a capability action of the same key, type and all", () => {
    const strict = Role.make({
      identity: identity("strict-editor"),
      capabilities: [Summarizer],
      actions: {
        summarize: Action.local({
          description: "Truncate the text to 60 characters",
          parameters: text,
          run: ({ text }) => text.slice(0, 60)
        })
      }
    })
    const entries = Role.actions(strict)
    assert.strictEqual(entries.length, 1)
    assert.strictEqual(entries[0]?.action._tag, "local")
    assert.deepStrictEqual(entries[0]?.source, { _tag: "Role", role: "strict-editor" })
    const kind: "local" = strict.actions.summarize._tag
    assert.strictEqual(kind, "local")
  })

  it("two capabilities with the same key and different actions fail the role, unless the role declares it", () => {
    const Paraphraser = Capability.make("Paraphraser", { summarize: paraphrase })
    const error = thrown(() => Role.make({ identity: identity("writer"), capabilities: [Summarizer, Paraphraser] }))
    assert.strictEqual(error.role, "writer")
    assert.strictEqual(error.key, "summarize")
    assert.match(error.message, /Summarizer and Paraphraser/)
    assert.match(error.message, /Declare summarize on the role/)
    const own = Action.llm({ description: "mine", parameters: text })
    const writer = Role.make({
      identity: identity("writer"),
      capabilities: [Summarizer, Paraphraser],
      actions: { summarize: own }
    })
    assert.strictEqual(writer.actions.summarize, own)
  })

  it("a role and capability diamond gives one action", () => {
    const Left = Capability.extend("Left", [Summarizer], {})
    const Right = Capability.extend("Right", [Summarizer], { translate })
    const role = Role.make({ identity: identity("r"), capabilities: [Left, Right, Summarizer] })
    assert.deepStrictEqual(
      Role.actions(role).map((e) => e.name),
      ["summarize", "translate"]
    )
    assert.strictEqual(role.actions.summarize, summarize)
  })

  it("a capability extending another wins over it for the same key", () => {
    const Better = Capability.extend("Better", [Summarizer], { summarize: paraphrase })
    const role = Role.make({ identity: identity("r"), capabilities: [Summarizer, Better] })
    assert.strictEqual(role.actions.summarize, paraphrase)
    assert.deepStrictEqual(Role.actions(role)[0]?.source, { _tag: "Capability", capability: "Better" })
  })

  it("extend: the extension wins by key, base actions keep their provenance", () => {
    const count = Action.local({ description: "count", parameters: text, run: ({ text }) => text.length })
    const words = Action.local({ description: "words", parameters: text, run: ({ text }) => text.split(" ").length })
    const base = Role.make({ identity: identity("base"), capabilities: [Summarizer], actions: { count, words } })
    const loud = Action.local({ description: "count loudly", parameters: text, run: ({ text }) => text.length * 10 })
    const derived = Role.extend(base, {
      identity: identity("derived"),
      capabilities: [Translator],
      actions: { count: loud }
    })
    assert.deepStrictEqual(
      Role.actions(derived).map((e) => [e.name, e.source]),
      [
        ["summarize", { _tag: "Capability", capability: "Summarizer" }],
        ["translate", { _tag: "Capability", capability: "Translator" }],
        ["count", { _tag: "Role", role: "derived" }],
        ["words", { _tag: "Role", role: "base" }]
      ]
    )
    assert.strictEqual(derived.actions.count, loud)
    assert.strictEqual(base.actions.count, count)
  })
})

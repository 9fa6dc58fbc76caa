/**
 * Capabilities and roles: two capabilities of llm
 * actions, a role that adopts both, and a role whose own local `summarize`
 * overrides the capability's llm one (type and all) and runs.
 *
 * Run: node examples/capabilities.ts
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Action, Agent, Capability, Role } from "@rolecraft/core"
import { Console, Effect, Schema } from "effect"

export const Summarizer = Capability.make("Summarizer", {
  summarize: Action.llm({
    description: "Summarise the text in one short paragraph",
    parameters: { text: Schema.String },
    systemPrompt: "You are concise.",
    temperature: 0.2
  })
})

export const Translator = Capability.make("Translator", {
  translate: Action.llm({
    description: "Translate the text to the target language",
    parameters: { text: Schema.String, targetLanguage: Schema.String }
  })
})

// Two capabilities, no action bodies on the role.
export const AssistantRole = Role.make({
  identity: { name: "assistant", goal: "Handle ad-hoc requests", domain: "general" },
  capabilities: [Summarizer, Translator]
})

// The role's own action replaces the capability's llm action with a local one.
export const StrictEditorRole = Role.make({
  identity: { name: "strict-editor", goal: "Shorten text deterministically", domain: "editing" },
  capabilities: [Summarizer],
  actions: {
    summarize: Action.local({
      description: "Truncate the text to 60 characters",
      parameters: { text: Schema.String },
      run: ({ text }) => (text.length <= 60 ? text : `${text.slice(0, 60)}...`)
    })
  }
})

const describe = (role: Role.Any) =>
  Role.actions(role)
    .map((entry) => {
      const from = entry.source._tag === "Role" ? `role ${entry.source.role}` : `capability ${entry.source.capability}`
      return `  ${entry.name}: ${entry.action._tag}, from ${from}`
    })
    .join("\n")

const program = Effect.gen(function* () {
  yield* Console.log(`AssistantRole actions:\n${describe(AssistantRole)}`)
  yield* Console.log(`StrictEditorRole actions:\n${describe(StrictEditorRole)}`)

  const editor = yield* Agent.make({ id: "editor", roles: [StrictEditorRole] })
  const text = "Rolecraft builds agents out of roles and actions, in functional code on Effect."
  const summary = yield* editor.executeAction("summarize", { text })
  yield* Console.log(`strict-editor summarize -> ${JSON.stringify(summary)}`)
}).pipe(Effect.scoped)

// Run when started directly; llm-actions.ts imports the capabilities from here.
if (import.meta.main) NodeRuntime.runMain(program)

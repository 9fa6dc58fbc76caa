/**
 * What a program needs is in its type: type fixtures, compiled by `npm run typecheck` (tsc over `test/`).
 *
 * Each `@ts-expect-error` line is a program that must not compile: an unknown action name, an argument of the
 * wrong type, and a call that runs without a service it needs (`LanguageModel` for a chat turn or an llm action,
 * `HttpClient` for a webService action, `McpClient` for an mcpTool action, `KnowledgeBase` for retrieval), also
 * through an agent used as an action, a handoff, `Mcp.serve`, the effect/ai toolkit and `DurableChat`. If one of
 * them compiled, tsc would report the directive as unused (TS2578) and the typecheck would fail. Every one of them
 * compiled on the build before these types (`node scripts/type-fixtures-before.ts` runs this folder against it).
 *
 * At run time the same programs, forced through, fail as they always did: the tests below run them and pin the
 * run-time refusal, so what the types refuse is also what would have gone wrong.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Compose, Role } from "@rolecraft/core"
import { DurableChat, type RunStore } from "@rolecraft/durable"
import { EffectAiToolkit } from "@rolecraft/effect-ai"
import { Mcp } from "@rolecraft/mcp"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, Exit, type Layer, Schema, type Scope, Stream } from "effect"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"

/** Takes only an effect that needs nothing: what `Effect.runPromise` and `NodeRuntime.runMain` take. */
const needsNothing = <A, E>(effect: Effect.Effect<A, E, never>) => effect

/** Takes only an effect that needs a scope and nothing else. */
const needsScope = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => effect

const identity = (name: string) => ({ name, goal: "Plan trips", domain: "travel" })

const nights = Action.local({
  description: "Count the nights between two ISO dates",
  parameters: { checkIn: Schema.String, checkOut: Schema.String },
  run: ({ checkIn, checkOut }) => (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
})

const Travel = Role.make({ identity: identity("travel"), actions: { nights } })

const Weather = Role.make({
  identity: identity("weather"),
  actions: {
    forecast: Action.webService({
      description: "The forecast for a city",
      parameters: { city: Schema.String },
      endpoint: "http://127.0.0.1:9/forecast"
    })
  }
})

const Writer = Role.make({
  identity: identity("writer"),
  actions: { tip: Action.llm({ description: "A packing tip", parameters: { city: Schema.String } }) }
})

const Tools = Role.make({
  identity: identity("tools"),
  actions: { files: Action.mcpTool({ description: "Files", server: "http://127.0.0.1:9/mcp" }) }
})

const Concierge = Role.make({
  identity: identity("concierge"),
  spec: { knowledge: [] },
  actions: { answer: nights.pipe(Action.retrieval({ topK: 1 })) }
})

const failureTag = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return "success"
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  return reason?._tag === "Fail" ? String((reason.error as { readonly _tag?: unknown })._tag) : "no failure"
}

describe("names and arguments are the agent's own", () => {
  it.effect("a right call with nothing else provided compiles and runs with nothing provided", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "planner", roles: [Travel] })
      const result: number = yield* needsNothing(
        agent.executeAction("nights", { checkIn: "2026-11-02", checkOut: "2026-11-05" })
      )
      assert.strictEqual(result, 3)
    }).pipe(Effect.scoped)
  )

  it.effect("an unknown name and an argument of the wrong type do not compile; run anyway, they are refused", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "planner", roles: [Travel] })
      // @ts-expect-error an unknown action name
      const unknown = yield* Effect.exit(agent.executeAction("nightz", {}))
      // @ts-expect-error an argument of the wrong type (a number for a string)
      const wrong = yield* Effect.exit(agent.executeAction("nights", { checkIn: 1, checkOut: "2026-11-05" }))
      // @ts-expect-error a missing argument
      const missing = yield* Effect.exit(agent.executeAction("nights", { checkIn: "2026-11-02" }))
      assert.deepStrictEqual(
        [failureTag(unknown), failureTag(wrong), failureTag(missing)],
        ["ActionNotFound", "ValidationError", "ValidationError"]
      )
      // The door for a name known only at run time stays open: its answer says NOT_FOUND.
      const response = yield* agent.execute({ action: "nightz", params: {} })
      assert.strictEqual(response.success ? "success" : response.error._tag, "ActionNotFound")
    }).pipe(Effect.scoped)
  )
})

describe("a service a call needs is in its type", () => {
  it.effect("a chat turn without a LanguageModel does not compile; forced through, it is VALIDATION", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "planner", roles: [Travel] })
      // @ts-expect-error chat needs a LanguageModel
      const chat = yield* Effect.exit(needsNothing(agent.chat("How many nights?")))
      // @ts-expect-error chatStream needs a LanguageModel
      const stream = yield* Effect.exit(needsNothing(Stream.runDrain(agent.chatStream("How many nights?"))))
      assert.deepStrictEqual([failureTag(chat), failureTag(stream)], ["ValidationError", "ValidationError"])
      // With a model provided it compiles and answers.
      const scripted = yield* ScriptedModel.make([ScriptedModel.reply("Three nights.")])
      const answered = yield* needsNothing(agent.chat("How many nights?").pipe(Effect.provide(scripted.layer)))
      assert.strictEqual(answered._tag === "Completed" ? answered.text : answered._tag, "Three nights.")
    }).pipe(Effect.scoped)
  )

  it.effect("webService, llm, mcpTool and retrieval calls without their service do not compile", () =>
    Effect.gen(function* () {
      const web = yield* Agent.make({ id: "web", roles: [Weather, Travel] })
      const writer = yield* Agent.make({ id: "writer", roles: [Writer] })
      const tools = yield* Agent.make({ id: "tools", roles: [Tools] })
      const concierge = yield* Agent.make({ id: "concierge", roles: [Concierge] })
      const servers = yield* Agent.make({ id: "servers", roles: [], mcpServers: { fs: "http://127.0.0.1:9/mcp" } })
      const forced = [
        // @ts-expect-error a webService action needs an HttpClient
        yield* Effect.exit(needsNothing(web.executeAction("forecast", { city: "Vienna" }))),
        // @ts-expect-error an agent whose roles hold a webService action needs an HttpClient for `execute`
        yield* Effect.exit(needsNothing(web.execute({ action: "forecast", params: { city: "Vienna" } }))),
        // @ts-expect-error an llm action needs a LanguageModel
        yield* Effect.exit(needsNothing(writer.executeAction("tip", { city: "Oslo" }))),
        // @ts-expect-error an mcpTool action needs an McpClient
        yield* Effect.exit(needsNothing(tools.executeAction("files", { tool: "list" }))),
        // @ts-expect-error an agent's own MCP server needs an McpClient
        yield* Effect.exit(needsNothing(servers.executeAction("fs", { tool: "list" })))
      ]
      assert.deepStrictEqual(
        forced.map((exit) => (Exit.isSuccess(exit) ? "success" : failureTag(exit))),
        ["ValidationError", "success", "ValidationError", "ValidationError", "ValidationError"]
      )
      // @ts-expect-error retrieval needs a KnowledgeBase
      needsNothing(concierge.executeAction("answer", { checkIn: "2026-11-02", checkOut: "2026-11-05" }))
      // A local action of the same agent needs only what it needs itself.
      assert.strictEqual(
        yield* needsNothing(web.executeAction("nights", { checkIn: "2026-11-02", checkOut: "2026-11-03" })),
        1
      )
    }).pipe(Effect.scoped)
  )
})

describe("requirements carry through composition and what serves an agent", () => {
  it.effect("an agent used as an action, and a handoff, bring their agent's needs to the caller", () =>
    Effect.gen(function* () {
      const inner = yield* Agent.make({ id: "inner", roles: [Weather] })
      const lead = yield* Agent.make({
        id: "lead",
        roles: [
          Role.make({
            identity: identity("lead"),
            actions: {
              ask: Compose.agent(inner, { description: "Ask the weather desk" }),
              transfer: Compose.handoff(inner, { description: "Hand over to the weather desk" })
            }
          })
        ]
      })
      // @ts-expect-error the inner agent's turn needs a LanguageModel (and its webService action an HttpClient)
      const asked = yield* Effect.exit(needsNothing(lead.executeAction("ask", { input: "Vienna?" })))
      // @ts-expect-error a handoff runs its agent's turn: the same needs
      const handed = yield* Effect.exit(needsNothing(lead.executeAction("transfer", {})))
      assert.deepStrictEqual([failureTag(asked), failureTag(handed)], ["ValidationError", "ExecutionFailure"])
    }).pipe(Effect.scoped)
  )

  it("Mcp.serve, the effect/ai toolkit and DurableChat need what the agent's calls need", () => {
    const program = Effect.gen(function* () {
      const web = yield* Agent.make({ id: "web", roles: [Weather] })
      // @ts-expect-error serving a webService action needs an HttpClient
      needsScope(Mcp.serve(web, { transport: { http: { port: 0 } } }))
      const toolkit = EffectAiToolkit.make(web)
      // @ts-expect-error the toolkit's handlers run webService actions: they need an HttpClient
      const handlers: Layer.Layer<Layer.Success<typeof toolkit.layer>> = toolkit.layer
      const durable = DurableChat.make("types-fixture")
      // @ts-expect-error durable turns are chat turns: they need a LanguageModel (and here an HttpClient)
      const turns: Layer.Layer<never, never, WorkflowEngine.WorkflowEngine | RunStore.RunStore> = durable.layer(web)
      return [handlers, turns]
    })
    // Only the types are under test here; making the agent is the one thing the program would do first.
    assert.strictEqual(Effect.isEffect(program), true)
  })
})

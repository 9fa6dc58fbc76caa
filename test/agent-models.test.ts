/**
 * A model per agent (`Agent.make({ model })`), proven over the real `openai` SDK against two local endpoints: each
 * agent's requests go to its own endpoint — its chat turns, its llm actions, the turns it runs as an agent used as
 * an action or a handoff, and MCP sampling on its behalf — and its type needs no `LanguageModel`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Compose, LanguageModel, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer as Server, ScriptedModel } from "@rolecraft/testing"
import { Effect, Layer, Redacted, Schema, type Scope, Stream } from "effect"
import { expectTypeOf } from "vitest"
import * as McpHttpServer from "./fixtures/mcp-http-server.ts"

const modelAt = (model: string, server: Server.ChatCompletionsServer) =>
  OpenAiLanguageModel.layer({
    model,
    apiKey: Redacted.make("sk-test-key"),
    baseURL: server.baseURL,
    timeout: "10 seconds"
  })

/** The `model` each request to `server` named, in order. */
const modelsSeen = (server: Server.ChatCompletionsServer) =>
  Effect.map(server.requests, (requests) => requests.map((request) => (request.body as { model?: string }).model))

/** The user message texts each request to `server` carried, in order. */
const usersSeen = (server: Server.ChatCompletionsServer) =>
  Effect.map(server.requests, (requests) =>
    requests.map((request) =>
      (request.body as { messages: ReadonlyArray<{ role: string; content?: unknown }> }).messages
        .filter((message) => message.role === "user")
        .map((message) => String(message.content))
        .join(" | ")
    )
  )

const desk = (name: string, goal: string) => Role.make({ identity: { name, goal, domain: "support" } })

/** Takes only an effect that needs nothing but a scope. */
const needsScope = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => effect

describe("a model per agent", () => {
  it.live("triage and a specialist used as an action run in one turn, each on its own endpoint", () =>
    needsScope(
      Effect.gen(function* () {
        const triageServer = yield* Server.make([
          Server.toolCalls([{ name: "ask_specialist", arguments: { question: "Why two charges?" } }]),
          Server.reply("It is a hold; it drops within three days.")
        ])
        const specialistServer = yield* Server.make([Server.reply("A pre-authorisation hold, released in 72 hours.")])
        const specialist = yield* Agent.make({
          id: "specialist",
          roles: [desk("billing", "Explain charges")],
          model: modelAt("specialist-large", specialistServer)
        })
        const triage = yield* Agent.make({
          id: "triage",
          roles: [
            Role.make({
              identity: { name: "triage", goal: "Answer, asking billing", domain: "support" },
              actions: {
                ask_specialist: Compose.agent(specialist, {
                  description: "Ask billing",
                  parameters: { question: Schema.String },
                  prompt: ({ question }) => question
                })
              }
            })
          ],
          model: modelAt("triage-mini", triageServer)
        })
        // Neither agent needs a LanguageModel of its caller, and its composed action needs none either.
        expectTypeOf<Effect.Services<ReturnType<typeof triage.chat>>>().toEqualTypeOf<never>()
        expectTypeOf<Agent.TurnServices<typeof specialist>>().toEqualTypeOf<never>()
        const result = yield* triage.chat("Why was I charged twice?")
        assert.strictEqual(
          result._tag === "Completed" ? result.text : result._tag,
          "It is a hold; it drops within three days."
        )
        assert.deepStrictEqual(yield* modelsSeen(triageServer), ["triage-mini", "triage-mini"])
        assert.deepStrictEqual(yield* modelsSeen(specialistServer), ["specialist-large"])
        assert.deepStrictEqual(yield* usersSeen(specialistServer), ["Why two charges?"])
        assert.deepStrictEqual(Object.keys(result._tag === "Completed" ? (result.agents ?? {}) : {}).sort(), [
          "specialist",
          "triage"
        ])
      }).pipe(Effect.scoped)
    )
  )

  it.live("a handoff: the specialist answers the customer on its own endpoint, streamed too", () =>
    Effect.gen(function* () {
      const triageServer = yield* Server.make([
        Server.toolCalls([{ name: "transfer_to_billing", arguments: {} }]),
        Server.toolCalls([{ name: "transfer_to_billing", arguments: {} }])
      ])
      const specialistServer = yield* Server.make([
        Server.reply("Your refund left on Monday."),
        Server.reply("Your refund left on Monday, streamed.")
      ])
      const specialist = yield* Agent.make({
        id: "billing",
        roles: [desk("billing", "Explain refunds")],
        model: modelAt("specialist-large", specialistServer)
      })
      const triage = yield* Agent.make({
        id: "triage",
        roles: [
          Role.make({
            identity: { name: "triage", goal: "Route customers", domain: "support" },
            actions: { transfer_to_billing: Compose.handoff(specialist) }
          })
        ],
        model: modelAt("triage-mini", triageServer)
      })
      const result = yield* triage.chat("Where is my refund?")
      assert.deepStrictEqual(
        [result._tag, result._tag === "Completed" ? [result.agent, result.text] : []],
        ["Completed", ["billing", "Your refund left on Monday."]]
      )
      const events = yield* Stream.runCollect(triage.chatStream("Where is my refund now?"))
      const finished = events.at(-1)
      assert.strictEqual(
        finished?._tag === "TurnFinished" && finished.result._tag === "Completed" ? finished.result.text : "",
        "Your refund left on Monday, streamed."
      )
      assert.deepStrictEqual(yield* modelsSeen(triageServer), ["triage-mini", "triage-mini"])
      assert.deepStrictEqual(yield* modelsSeen(specialistServer), ["specialist-large", "specialist-large"])
    }).pipe(Effect.scoped)
  )

  it.live("an agent's llm action uses its model; a model in context serves only the agent without one", () =>
    Effect.gen(function* () {
      const ownServer = yield* Server.make([Server.reply("Pack layers."), Server.reply("Bring an umbrella.")])
      const contextServer = yield* Server.make([Server.reply("From the context model.")])
      const tips = Role.make({
        identity: { name: "tips", goal: "Give packing tips", domain: "travel" },
        actions: { tip: Action.llm({ description: "A packing tip", parameters: { city: Schema.String } }) }
      })
      const own = yield* Agent.make({ id: "own", roles: [tips], model: modelAt("own-model", ownServer) })
      const plain = yield* Agent.make({ id: "plain", roles: [tips] })
      expectTypeOf<Effect.Services<ReturnType<typeof own.execute>>>().toEqualTypeOf<never>()
      expectTypeOf<Effect.Services<ReturnType<typeof plain.execute>>>().toEqualTypeOf<LanguageModel.LanguageModel>()
      const inContext = modelAt("context-model", contextServer)
      // The agent with its own model keeps it even where another model is in context.
      assert.strictEqual(yield* own.executeAction("tip", { city: "Oslo" }), "Pack layers.")
      assert.strictEqual(
        yield* own.executeAction("tip", { city: "Bergen" }).pipe(Effect.provide(inContext)),
        "Bring an umbrella."
      )
      assert.strictEqual(
        yield* plain.executeAction("tip", { city: "Oslo" }).pipe(Effect.provide(inContext)),
        "From the context model."
      )
      assert.deepStrictEqual(yield* modelsSeen(ownServer), ["own-model", "own-model"])
      assert.deepStrictEqual(yield* modelsSeen(contextServer), ["context-model"])
    }).pipe(Effect.scoped)
  )

  it.live("a model layer is built once, in the agent's scope; a service value is used as it is", () =>
    Effect.gen(function* () {
      let builds = 0
      const scripted = yield* ScriptedModel.make([ScriptedModel.reply("one"), ScriptedModel.reply("two")])
      const counted = Layer.effect(
        LanguageModel.LanguageModel,
        Effect.sync(() => {
          builds++
          return scripted.model
        })
      )
      const layered = yield* Agent.make({ id: "layered", roles: [desk("desk", "Answer")], model: counted })
      const texts = [yield* layered.chat("first"), yield* layered.chat("second")].map((result) =>
        result._tag === "Completed" ? result.text : result._tag
      )
      assert.deepStrictEqual([texts, builds], [["one", "two"], 1])
      const other = yield* ScriptedModel.make([ScriptedModel.reply("three")])
      const valued = yield* Agent.make({ id: "valued", roles: [desk("desk", "Answer")], model: other.model })
      const answer = yield* valued.chat("third")
      assert.strictEqual(answer._tag === "Completed" ? answer.text : answer._tag, "three")
      assert.strictEqual((yield* other.requests).length, 1)
    }).pipe(Effect.scoped)
  )

  it.live("MCP sampling on the agent's behalf uses the agent's own model, with none in context", () =>
    Effect.gen(function* () {
      const server = yield* McpHttpServer.start
      const sampler = yield* Server.make([Server.reply("Lisbon")])
      const agent = yield* Agent.make({
        id: "sampling-agent",
        roles: [
          Role.make({
            identity: { name: "remote", goal: "Use remote tools", domain: "remote" },
            actions: { remote: Action.mcpTool({ description: "remote", server: server.url }) }
          })
        ],
        model: modelAt("sampling-model", sampler)
      })
      const answer = JSON.parse(String(yield* agent.executeAction("remote", { tool: "sample", arguments: {} })))
      assert.deepStrictEqual(answer.content, { type: "text", text: "Lisbon" })
      assert.deepStrictEqual(yield* modelsSeen(sampler), ["sampling-model"])
    }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))
  )
})

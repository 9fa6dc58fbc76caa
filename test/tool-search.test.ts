/**
 * A catalog's size never fails a turn (C76): 300 MCP tools from three servers, through the real `openai` SDK,
 * against a local Chat Completions endpoint that refuses — as OpenAI does — a request carrying more than 128
 * tools. Past the openai layer's declared limit the turn offers a search tool; the model searches, the tools
 * it picks are loaded for the rest of the turn and called through the same pipeline (authority and approval
 * as always), and no request passes the limit. Without tool search (`toolSearch: false`) the same turn fails
 * as the provider refuses it.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Action, Agent, Role } from "@rolecraft/core"
import { ChatCompletionsServer, InMemoryMcp } from "@rolecraft/testing"
import { Effect, Layer } from "effect"
import { openAiOn } from "./support/openai.ts"

const topics = [
  "weather",
  "calendar",
  "invoice",
  "ticket",
  "deploy",
  "backup",
  "email",
  "payroll",
  "inventory",
  "search"
]

/** A server listing 100 tools (`<topic>_<verb>_<n>`), each described, recording the calls it receives. */
const catalog = (server: string, received: Array<string>) => () => {
  const mcp = new Server({ name: server, version: "1.0.0" }, { capabilities: { tools: {} } })
  mcp.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: Array.from({ length: 100 }, (_, i) => {
      const topic = topics[i % topics.length]
      return {
        name: `${topic}_${server}_${i}`,
        description: `${topic} operation ${i} of the ${server} service`,
        inputSchema: { type: "object" as const, properties: { id: { type: "string" } } }
      }
    })
  }))
  mcp.setRequestHandler(CallToolRequestSchema, (request) => {
    received.push(`${server}/${request.params.name}`)
    return { content: [{ type: "text" as const, text: `${request.params.name} done` }] }
  })
  return mcp
}

interface Body {
  readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string } }>
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string | null }>
}

/** What OpenAI answers a request carrying more than 128 tools. */
const tooMany = (body: Body) =>
  (body.tools?.length ?? 0) > 128
    ? ChatCompletionsServer.error(400, {
        message: `Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length ${body.tools?.length} instead.`
      })
    : undefined

const setup = (options: { readonly approval: boolean }) => {
  const received: Array<string> = []
  const servers = ["alpha", "beta", "gamma"] as const
  const actions = Object.fromEntries(
    servers.map((server) => {
      const action = Action.mcpTool({ description: `The ${server} service`, server: `memory://${server}` })
      return [
        server,
        options.approval && server === "gamma"
          ? action.pipe(Action.requireApproval({ reason: "gamma changes things" }))
          : action
      ]
    })
  )
  const role = Role.make({ identity: { name: "ops", goal: "Operate", domain: "ops" }, actions })
  const mcp = InMemoryMcp.layer(
    Object.fromEntries(servers.map((server) => [`memory://${server}`, catalog(server, received)]))
  )
  return { role, mcp, received }
}

const names = (body: Body) => (body.tools ?? []).map((tool) => tool.function.name)

describe("C76: a catalog of 300 MCP tools against a provider that takes 128", () => {
  it.live("the turn completes through tool search; no request passes the limit", () => {
    const { role, mcp, received } = setup({ approval: false })
    return Effect.gen(function* () {
      const server = yield* ChatCompletionsServer.make([
        ChatCompletionsServer.respond(
          (request) =>
            tooMany(request.body as Body) ??
            ChatCompletionsServer.toolCalls([
              { id: "s1", name: "tool_search", arguments: { query: "invoice beta", limit: 3 } }
            ])
        ),
        ChatCompletionsServer.respond((request) => {
          const body = request.body as Body
          const offered = names(body)
          return (
            tooMany(body) ??
            ChatCompletionsServer.toolCalls([
              {
                id: "c1",
                name: offered.find((name) => name.startsWith("beta_invoice")) ?? "none",
                arguments: { id: "7" }
              }
            ])
          )
        }),
        ChatCompletionsServer.respond(
          (request) => tooMany(request.body as Body) ?? ChatCompletionsServer.reply("Invoice handled.")
        )
      ])
      const agent = yield* Agent.make({ id: "ops", roles: [role] })
      const result = yield* agent.chat("Handle invoice 7 on beta").pipe(Effect.provide(openAiOn(server)))
      assert.strictEqual(result._tag, "Completed")
      const bodies = (yield* server.requests).map((request) => request.body as Body)
      assert.strictEqual(bodies.length, 3)
      for (const body of bodies) assert.isAtMost(body.tools?.length ?? 0, 128)
      // The first request offers the search tool alone; the second the search tool and what it loaded.
      assert.deepStrictEqual(names(bodies[0] as Body), ["tool_search"])
      const second = names(bodies[1] as Body)
      assert.strictEqual(second[0], "tool_search")
      assert.strictEqual(second.length, 4)
      assert.isTrue(second.slice(1).every((name) => name.includes("invoice")))
      assert.isTrue(second.slice(1).some((name) => name.startsWith("beta_invoice")))
      const searchAnswer = bodies[1]?.messages.find((message) => message.role === "tool")?.content ?? ""
      assert.include(searchAnswer, "beta_invoice")
      // The picked tool ran on its own server.
      assert.strictEqual(received.length, 1)
      assert.match(received[0] ?? "", /^beta\/invoice_beta_\d+$/)
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(mcp, NodeHttpClient.layerUndici)))
  })

  it.live("a loaded tool still needs its approval", () => {
    const { role, mcp, received } = setup({ approval: true })
    return Effect.gen(function* () {
      const server = yield* ChatCompletionsServer.make([
        ChatCompletionsServer.toolCalls([
          { id: "s1", name: "tool_search", arguments: { query: "deploy gamma", limit: 1 } }
        ]),
        ChatCompletionsServer.respond((request) => {
          const offered = names(request.body as Body)
          return ChatCompletionsServer.toolCalls([{ id: "c1", name: offered[1] ?? "none", arguments: {} }])
        })
      ])
      const agent = yield* Agent.make({ id: "ops", roles: [role] })
      const result = yield* agent.chat("Deploy on gamma").pipe(Effect.provide(openAiOn(server)))
      assert.strictEqual(result._tag, "AwaitingApproval")
      if (result._tag !== "AwaitingApproval") return
      assert.strictEqual(result.pending[0]?.action, "gamma")
      assert.match(result.pending[0]?.tool ?? "", /^deploy_gamma_\d+$/)
      assert.deepStrictEqual(received, [])
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(mcp, NodeHttpClient.layerUndici)))
  })

  it.live("without tool search the provider refuses the 300 tools", () => {
    const { role, mcp } = setup({ approval: false })
    return Effect.gen(function* () {
      const server = yield* ChatCompletionsServer.make([
        ChatCompletionsServer.respond((request) => tooMany(request.body as Body) ?? ChatCompletionsServer.reply("fine"))
      ])
      const agent = yield* Agent.make({ id: "ops", roles: [role] })
      const failed = yield* Effect.flip(agent.chat("hi", { toolSearch: false }).pipe(Effect.provide(openAiOn(server))))
      assert.include(failed.message, "array too long")
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(mcp, NodeHttpClient.layerUndici)))
  })

  it.live("a small catalog is sent whole; toolSearch: true offers it through the search tool anyway", () => {
    const { role, mcp } = setup({ approval: false })
    return Effect.gen(function* () {
      const small = Role.make({
        identity: { name: "one", goal: "One", domain: "ops" },
        actions: {
          beta: Action.mcpTool({
            description: "beta",
            server: "memory://beta",
            tools: ["invoice_beta_2", "email_beta_6"]
          })
        }
      })
      void role
      const server = yield* ChatCompletionsServer.make([
        ChatCompletionsServer.reply("a"),
        ChatCompletionsServer.reply("b")
      ])
      const agent = yield* Agent.make({ id: "one", roles: [small] })
      yield* agent.chat("hi").pipe(Effect.provide(openAiOn(server)))
      yield* agent.chat("hi", { toolSearch: true }).pipe(Effect.provide(openAiOn(server)))
      const [first, second] = (yield* server.requests).map((request) => names(request.body as Body))
      assert.deepStrictEqual(first, ["beta_invoice_beta_2", "beta_email_beta_6"])
      assert.deepStrictEqual(second, ["tool_search"])
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(mcp, NodeHttpClient.layerUndici)))
  })
})

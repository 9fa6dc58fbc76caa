/**
 * Calls whose order matters run in the model's order (C77), through the real `openai` SDK against a local
 * Chat Completions endpoint: an action marked `Action.serial` (or some tools of an mcpTool action) runs alone —
 * after the calls before it, before the calls after it — whatever the turn's concurrency; `parallelToolCalls:
 * false` is sent as `parallel_tool_calls: false` and runs the reply's calls one at a time; nothing is sent by
 * default. Answers are written in the calls' order either way.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Action, Agent, type Chat, Role } from "@rolecraft/core"
import { ChatCompletionsServer, InMemoryMcp } from "@rolecraft/testing"
import { Effect, Layer, Schema } from "effect"
import { openAiOn } from "./support/openai.ts"

/** The files the calls share, and the order they started and finished in. */
const files = () => {
  const written = new Map<string, string>()
  const log: Array<string> = []
  const write = (path: string) =>
    Effect.gen(function* () {
      log.push(`start write ${path}`)
      yield* Effect.sleep("150 millis")
      written.set(path, `content of ${path}`)
      log.push(`end write ${path}`)
      return `wrote ${path}`
    })
  const review = (path: string) =>
    Effect.sync(() => {
      log.push(`review ${path}`)
      return written.get(path) ?? "nothing written"
    })
  return { written, log, write, review }
}

const role = (state: ReturnType<typeof files>, serialWrite: boolean) => {
  const write = Action.local({
    description: "Write a file",
    parameters: { path: Schema.String },
    run: ({ path }) => state.write(path)
  })
  return Role.make({
    identity: { name: "writer", goal: "Write and review", domain: "docs" },
    actions: {
      write: serialWrite ? write.pipe(Action.serial()) : write,
      review: Action.local({
        description: "Review a file",
        parameters: { path: Schema.String },
        run: ({ path }) => state.review(path)
      })
    }
  })
}

const script = [
  ChatCompletionsServer.toolCalls([
    { id: "call_1", name: "write", arguments: { path: "003.md" } },
    { id: "call_2", name: "review", arguments: { path: "003.md" } }
  ]),
  ChatCompletionsServer.reply("done")
]

const run = (serialWrite: boolean, options: Chat.ChatOptions) =>
  Effect.gen(function* () {
    const state = files()
    const server = yield* ChatCompletionsServer.make(script)
    const agent = yield* Agent.make({ id: "writer", roles: [role(state, serialWrite)] })
    yield* agent.chat("Write 003.md, then review it", options).pipe(Effect.provide(openAiOn(server)))
    const requests = yield* server.requests
    const bodies = requests.map((request) => request.body as Record<string, unknown>)
    const answers = (
      (bodies[1]?.messages ?? []) as ReadonlyArray<{ role: string; tool_call_id?: string; content: string }>
    )
      .filter((message) => message.role === "tool")
      .map((message) => [message.tool_call_id, message.content])
    return { state, bodies, answers }
  }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

describe("C77: declared order is kept", () => {
  const table = [
    { name: "default concurrency, nothing marked", serial: false, options: {}, ordered: false, sent: undefined },
    { name: "concurrency 1", serial: false, options: { concurrency: 1 }, ordered: true, sent: undefined },
    {
      name: "write marked serial, concurrency 4",
      serial: true,
      options: { concurrency: 4 },
      ordered: true,
      sent: undefined
    },
    {
      name: "parallelToolCalls false",
      serial: false,
      options: { parallelToolCalls: false },
      ordered: true,
      sent: false
    },
    { name: "parallelToolCalls true", serial: false, options: { parallelToolCalls: true }, ordered: false, sent: true }
  ] as const
  for (const row of table) {
    it.live(`${row.name}: review ${row.ordered ? "reads what write wrote" : "runs beside write"}`, () =>
      Effect.map(run(row.serial, row.options), ({ state, bodies, answers }) => {
        assert.deepStrictEqual(
          state.log,
          row.ordered
            ? ["start write 003.md", "end write 003.md", "review 003.md"]
            : ["start write 003.md", "review 003.md", "end write 003.md"]
        )
        // Answers in the calls' order, whatever order they finished in.
        assert.deepStrictEqual(
          answers.map(([id]) => id),
          ["call_1", "call_2"]
        )
        assert.include(answers[1]?.[1], row.ordered ? "content of 003.md" : "nothing written")
        // What the provider is told matches what runs: only when asked.
        assert.strictEqual(bodies[0]?.parallel_tool_calls, row.sent)
        assert.isFalse(Object.hasOwn(bodies[0] ?? {}, "parallel_tool_calls") && row.sent === undefined)
      })
    )
  }

  it.live("a serial call is a barrier: calls before it finish first, calls after it start after it", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const step = (name: string, ms: number) =>
        Effect.gen(function* () {
          log.push(`start ${name}`)
          yield* Effect.sleep(`${ms} millis`)
          log.push(`end ${name}`)
          return name
        })
      const act = (name: string, ms: number) =>
        Action.local({ description: name, parameters: {}, run: () => step(name, ms) })
      const server = yield* ChatCompletionsServer.make([
        ChatCompletionsServer.toolCalls([
          { id: "c1", name: "a", arguments: {} },
          { id: "c2", name: "b", arguments: {} },
          { id: "c3", name: "barrier", arguments: {} },
          { id: "c4", name: "c", arguments: {} }
        ]),
        ChatCompletionsServer.reply("done")
      ])
      const agent = yield* Agent.make({
        id: "order",
        roles: [
          Role.make({
            identity: { name: "order", goal: "Order", domain: "tests" },
            actions: {
              a: act("a", 60),
              b: act("b", 20),
              barrier: act("barrier", 20).pipe(Action.serial()),
              c: act("c", 1)
            }
          })
        ]
      })
      yield* agent.chat("go").pipe(Effect.provide(openAiOn(server)))
      // a and b side by side; the barrier after both; c after the barrier.
      assert.deepStrictEqual(log, [
        "start a",
        "start b",
        "end b",
        "end a",
        "start barrier",
        "end barrier",
        "start c",
        "end c"
      ])
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
  )

  it.live("an mcpTool action's named tools run alone; its others side by side", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const factory = () => {
        const mcp = new Server({ name: "fs", version: "1.0.0" }, { capabilities: { tools: {} } })
        mcp.setRequestHandler(ListToolsRequestSchema, () => ({
          tools: ["write_file", "read_a", "read_b"].map((name) => ({ name, inputSchema: { type: "object" as const } }))
        }))
        mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
          log.push(`start ${request.params.name}`)
          await new Promise((resolve) => setTimeout(resolve, request.params.name === "write_file" ? 80 : 30))
          log.push(`end ${request.params.name}`)
          return { content: [{ type: "text" as const, text: "ok" }] }
        })
        return mcp
      }
      const server = yield* ChatCompletionsServer.make([
        ChatCompletionsServer.toolCalls([
          { id: "c1", name: "fs_write_file", arguments: {} },
          { id: "c2", name: "fs_read_a", arguments: {} },
          { id: "c3", name: "fs_read_b", arguments: {} }
        ]),
        ChatCompletionsServer.reply("done")
      ])
      const agent = yield* Agent.make({
        id: "fs",
        roles: [
          Role.make({
            identity: { name: "fs", goal: "Files", domain: "tests" },
            actions: {
              fs: Action.mcpTool({ description: "Files", server: "memory://fs" }).pipe(
                Action.serial({ tools: ["write_file"] })
              )
            }
          })
        ]
      })
      yield* agent
        .chat("go")
        .pipe(Effect.provide(Layer.merge(openAiOn(server), InMemoryMcp.layer({ "memory://fs": factory }))))
      assert.deepStrictEqual(log.slice(0, 2), ["start write_file", "end write_file"])
      assert.deepStrictEqual(log.slice(2, 4).sort(), ["start read_a", "start read_b"])
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
  )

  it("the openai layer declares its profile: 128 tools, parallel_tool_calls", async () => {
    const { OpenAiLanguageModel } = await import("@rolecraft/openai")
    assert.deepStrictEqual(OpenAiLanguageModel.profile, { toolLimit: 128, parallelCalls: "parallel_tool_calls" })
  })
})

/**
 * Chat turns through the real `openai` SDK against a local OpenAI-compatible
 * endpoint (`ChatCompletionsServer`, a `node:http` server answering
 * `/v1/chat/completions` from a script): tool calls of every kind in one turn
 * (local, webService against a local HTTP service, an llm action, an MCP tool
 * of server-everything over stdio), the chat cases C01, C02, C06, C07 (a real
 * MCP server), C10, C11, approval pause and resume, a 429 then a success under
 * the chat's retry policy, a 500 with no retry, and the step limit — each
 * checked on what crossed the wire.
 */
import { Server as McpServer } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Action, ActionError, Agent, Chat, type LanguageModel, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer as Server, InMemoryMcp } from "@rolecraft/testing"
import { Effect, Layer, Redacted, Schema } from "effect"
import * as LocalServer from "../packages/core/test/support/LocalServer.ts"
import { fixture } from "../packages/core/test/support/TravelRole.ts"
import { everything } from "./fixtures/mcp.ts"

interface WireMessage {
  readonly role: string
  readonly content: string | null
  readonly tool_call_id?: string
  readonly tool_calls?: ReadonlyArray<{
    readonly id: string
    readonly function: { readonly name: string; readonly arguments: string }
  }>
}

interface WireBody {
  readonly model: string
  readonly messages: ReadonlyArray<WireMessage>
  readonly tools?: ReadonlyArray<{
    readonly type: string
    readonly function: { readonly name: string; readonly parameters: unknown; readonly strict: boolean }
  }>
}

const bodies = (requests: ReadonlyArray<Server.Recorded>) => requests.map((request) => request.body as WireBody)

const toolAnswers = (body: WireBody | undefined) =>
  (body?.messages ?? []).flatMap((message) =>
    message.role === "tool" ? [[message.tool_call_id ?? "", message.content ?? ""] as const] : []
  )

const errorOf = (content: string | undefined) =>
  (JSON.parse(content ?? "null") as { readonly error: { readonly category: string; readonly message: string } }).error

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion
})

type Counts = ReturnType<typeof fixture>["counts"]

/**
 * One agent with a fresh travel role (its roles: `[travel]` unless `options`
 * says otherwise), and the openai layer pointed at a local endpoint answering
 * `script`.
 */
const turn = <A, E>(
  script: ReadonlyArray<Server.Step>,
  // The cast below says the actions need nothing: a test that uses a webService or mcpTool action provides
  // its HttpClient or McpClient around the whole turn.
  f: (agent: Agent.Agent<any, never>, counts: Counts) => Effect.Effect<A, E, LanguageModel.LanguageModel>,
  options?: (travel: Role.Any) => Partial<Agent.Options<ReadonlyArray<Role.Any>>>
) =>
  Effect.gen(function* () {
    const { travel, counts } = fixture()
    const server = yield* Server.make(script)
    const agent = yield* Agent.make({ id: "wire", roles: [travel], ...options?.(travel) })
    const layer = OpenAiLanguageModel.layer({
      model: "gpt-test",
      apiKey: Redacted.make("sk-test-key"),
      baseURL: server.baseURL,
      timeout: "10 seconds"
    })
    const result = yield* Effect.provide(f(agent as unknown as Agent.Agent<any, never>, counts), layer)
    return { result, counts, requests: yield* server.requests, remaining: yield* server.remaining }
  }).pipe(Effect.scoped)

function expectTag<T extends Chat.ChatResult["_tag"]>(
  result: Chat.ChatResult,
  tag: T
): asserts result is Extract<Chat.ChatResult, { readonly _tag: T }> {
  assert.strictEqual(result._tag, tag, JSON.stringify(result))
}

/** A low-level MCP server listing `tools` exactly as given, recording the arguments of every call. */
const mcpRecorder = (
  tools: ReadonlyArray<{ readonly name: string; readonly inputSchema: object }>,
  received: Array<unknown>
) =>
  InMemoryMcp.layer({
    "memory://tools": () => {
      const server = new McpServer({ name: "tools", version: "1.0.0" }, { capabilities: { tools: {} } })
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: tools as Array<{ name: string; inputSchema: { type: "object" } }>
      }))
      server.setRequestHandler(CallToolRequestSchema, (request) => {
        received.push({ tool: request.params.name, arguments: request.params.arguments })
        return { content: [{ type: "text" as const, text: `ran ${request.params.name}` }] }
      })
      return server
    }
  })

describe("chat turns through the openai SDK against a local endpoint", () => {
  it.live("one turn calls a local action, a webService, an llm action and an MCP tool, then answers", () =>
    Effect.gen(function* () {
      const weather = yield* LocalServer.start((request, response) => {
        const city = new URL(request.target, "http://localhost").searchParams.get("city")
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ city, temp: 21 }))
      })
      const tools = Role.make({
        identity: { name: "tools", goal: "Help", domain: "general" },
        actions: {
          temperature: Action.webService({
            description: "Current temperature in a city",
            parameters: { city: Schema.String },
            endpoint: `${weather.url}/v1/current`
          }),
          summarize: Action.llm({ description: "Summarise the text", parameters: { text: Schema.String } })
        }
      })
      const { result, requests, remaining } = yield* turn(
        [
          Server.toolCalls(
            [
              { name: "nights", arguments: { checkIn: "2026-11-02", checkOut: "2026-11-05" } },
              { name: "temperature", arguments: { city: "Vienna" } },
              { name: "summarize", arguments: { text: "A long text about Vienna in November." } },
              { name: "everything_echo", arguments: { message: "hi" } }
            ],
            { usage: usage(100, 30) }
          ),
          Server.reply("Vienna is cold in November.", { usage: usage(20, 6) }),
          Server.reply("3 nights in Vienna at 21 °C; echo said hi.", { usage: usage(180, 12) })
        ],
        (agent) => agent.chat("Plan my Vienna trip", { system: "Be brief." }),
        (travel) => ({ roles: [travel, tools], mcpServers: { everything } })
      ).pipe(Effect.provide(Layer.merge(NodeHttpClient.layerUndici, McpClientSdk.layer())))
      expectTag(result, "Completed")
      assert.strictEqual(result.text, "3 nights in Vienna at 21 °C; echo said hi.")
      assert.strictEqual(result.steps, 2)
      // the llm action's model call is part of the turn's usage
      assert.deepStrictEqual(result.usage, { inputTokens: 300, outputTokens: 48, totalTokens: 348 })
      assert.strictEqual(remaining, 0)
      const [first, summarize, last] = bodies(requests)
      const offered = first?.tools?.map((tool) => tool.function.name) ?? []
      assert.includeMembers(offered, ["nights", "temperature", "summarize", "everything_echo"])
      assert.isTrue(first?.tools?.every((tool) => tool.type === "function" && tool.function.strict === false))
      assert.isUndefined(summarize?.tools, "an llm action's own call offers no tools")
      assert.deepStrictEqual(toolAnswers(last), [
        ["call_1", "3"],
        ["call_2", '{"city":"Vienna","temp":21}'],
        ["call_3", "Vienna is cold in November."],
        ["call_4", "Echo: hi"]
      ])
      assert.deepStrictEqual(last?.messages.slice(0, 2), [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Plan my Vienna trip" }
      ])
      assert.deepStrictEqual(
        last?.messages[2]?.tool_calls?.map((call) => call.id),
        ["call_1", "call_2", "call_3", "call_4"]
      )
      assert.strictEqual(weather.received.length, 1)
      assert.strictEqual(weather.received[0]?.query, "city=Vienna")
    }).pipe(Effect.scoped)
  )

  it.live("C01, C02: empty, non-object and malformed arguments are answered on the wire; only valid calls run", () =>
    Effect.gen(function* () {
      const { result, requests, counts } = yield* turn(
        [
          Server.toolCalls([
            { name: "ping", arguments: "" },
            { name: "nights", arguments: "" },
            { name: "nights", arguments: "null" },
            { name: "nights", arguments: "[]" },
            { name: "nights", arguments: '{"checkIn":"a"}{"checkIn":"b"}' },
            { name: "nights", arguments: "{lat: 48.2, lon:" }
          ]),
          Server.reply("ok")
        ],
        (agent) => agent.chat("Go")
      )
      expectTag(result, "Completed")
      const answers = toolAnswers(bodies(requests)[1])
      assert.deepStrictEqual(
        answers.map(([id]) => id),
        ["call_1", "call_2", "call_3", "call_4", "call_5", "call_6"]
      )
      assert.strictEqual(answers[0]?.[1], "pong")
      const errors = answers.slice(1).map(([, content]) => errorOf(content))
      assert.isTrue(errors.every((error) => error.category === "VALIDATION"))
      assert.match(errors[0]?.message ?? "", /checkIn: missing/)
      assert.match(errors[1]?.message ?? "", /arguments must be a JSON object, got null/)
      assert.match(errors[2]?.message ?? "", /arguments must be a JSON object, got an array/)
      assert.match(errors[3]?.message ?? "", /not valid JSON.*received: \{"checkIn":"a"\}\{"checkIn":"b"\}/)
      assert.match(errors[4]?.message ?? "", /not valid JSON.*received: \{lat: 48\.2, lon:/)
      assert.deepStrictEqual([counts.ping, counts.nights], [1, 0])
    })
  )

  it.live(
    "C06: a tool never offered is NOT_FOUND with the offered names; the same failing call every step ends at maxSteps",
    () =>
      Effect.gen(function* () {
        const unknown = yield* turn(
          [Server.toolCalls([{ name: "execute_python", arguments: { code: "1" } }]), Server.reply("sorry")],
          (agent) => agent.chat("Go")
        )
        expectTag(unknown.result, "Completed")
        const error = errorOf(toolAnswers(bodies(unknown.requests)[1])[0]?.[1])
        assert.deepStrictEqual(error, {
          category: "NOT_FOUND",
          message:
            "No tool named execute_python was offered; the tools offered are: nights, add, ping, distance, book, broken, slow"
        })
        const again = Server.toolCalls([{ name: "broken" }])
        const looping = yield* turn([again, again, again], (agent) => agent.chat("Go", { maxSteps: 3 }))
        expectTag(looping.result, "StepLimitReached")
        assert.strictEqual(looping.result.steps, 3)
        assert.strictEqual(looping.counts.broken, 3)
        assert.strictEqual(looping.requests.length, 3)
        assert.deepStrictEqual(errorOf(toolAnswers(bodies(looping.requests)[2]).at(-1)?.[1]), {
          category: "EXECUTION",
          message: "broken: the upstream refused"
        })
      })
  )

  it.live("C07, C11: an MCP tool without properties and awkward names are offered valid, and routed back", () => {
    const received: Array<unknown> = []
    const long = `hosting_restartNode.jsApplicationV1_${"y".repeat(50)}`
    return Effect.gen(function* () {
      const { result, requests } = yield* turn(
        [
          Server.respond((request) => {
            const names = ((request.body as WireBody).tools ?? []).map((tool) => tool.function.name)
            return Server.toolCalls([
              { name: "srv_get_server_version", arguments: "" },
              { name: "srv_calendar_respondToEvent", arguments: { accept: true } },
              { name: names.find((name) => name.startsWith("srv_hosting")) ?? "missing", arguments: "" }
            ])
          }),
          Server.reply("done")
        ],
        (agent) => agent.chat("Go", { concurrency: 1 }),
        () => ({ mcpServers: { srv: "memory://tools" } })
      ).pipe(
        Effect.provide(
          mcpRecorder(
            [
              { name: "get_server_version", inputSchema: { type: "object" } },
              {
                name: "calendar.respondToEvent",
                inputSchema: { type: "object", properties: { accept: { type: "boolean" } } }
              },
              { name: long, inputSchema: { type: "object" } }
            ],
            received
          )
        )
      )
      expectTag(result, "Completed")
      const tools = bodies(requests)[0]?.tools ?? []
      const version = tools.find((tool) => tool.function.name === "srv_get_server_version")
      assert.deepStrictEqual(version?.function.parameters, { type: "object", properties: {} })
      assert.isTrue(tools.every((tool) => /^[a-zA-Z0-9_-]{1,64}$/.test(tool.function.name)))
      assert.deepStrictEqual(received, [
        { tool: "get_server_version", arguments: {} },
        { tool: "calendar.respondToEvent", arguments: { accept: true } },
        { tool: long, arguments: {} }
      ])
    })
  })

  it.live("C10: numbers sent as strings are converted before the action runs", () =>
    Effect.gen(function* () {
      const { result, requests } = yield* turn(
        [
          Server.toolCalls([
            { name: "add", arguments: { a: "1458", b: " 42 " } },
            { name: "add", arguments: { a: "3.5", b: "1" } },
            { name: "add", arguments: { a: true, b: "1" } }
          ]),
          Server.reply("1500")
        ],
        (agent) => agent.chat("Add")
      )
      expectTag(result, "Completed")
      const answers = toolAnswers(bodies(requests)[1])
      assert.strictEqual(answers[0]?.[1], '{"sum":1500}')
      assert.strictEqual(errorOf(answers[1]?.[1]).category, "VALIDATION")
      assert.match(errorOf(answers[1]?.[1]).message, /a: .*integer/)
      assert.strictEqual(errorOf(answers[2]?.[1]).category, "VALIDATION")
    })
  )

  it.live("an approval pause answers the step's other calls; resuming sends the approved call's result", () =>
    Effect.gen(function* () {
      const { result, requests, counts } = yield* turn(
        [
          Server.toolCalls([
            { name: "book", arguments: { hotel: "Ritz" } },
            { name: "ping", arguments: "" }
          ]),
          Server.reply("Booked the Ritz.")
        ],
        (agent, counts) =>
          Effect.gen(function* () {
            const paused = yield* agent.chat("Book the Ritz")
            expectTag(paused, "AwaitingApproval")
            assert.deepStrictEqual(
              paused.state.messages.flatMap((message) => (message.role === "tool" ? [message.toolCallId] : [])),
              ["call_2"]
            )
            assert.strictEqual(counts.book, 0)
            assert.strictEqual(counts.ping, 1)
            const state = JSON.parse(JSON.stringify(paused.state)) as Chat.PausedState
            return yield* agent.resume(state, { call_1: Chat.approve("ann") })
          })
      )
      expectTag(result, "Completed")
      assert.strictEqual(counts.book, 1)
      assert.deepStrictEqual(toolAnswers(bodies(requests)[1]), [
        ["call_1", "booked Ritz"],
        ["call_2", "pong"]
      ])
    })
  )

  it.live("a refusal fails the turn EXECUTION 'the model refused' with the refusal's text", () =>
    Effect.gen(function* () {
      const { result } = yield* turn([Server.reply(null, { refusal: "I can't help with that." })], (agent) =>
        Effect.flip(agent.chat("Do something bad"))
      )
      assert.strictEqual(result._tag, "ExecutionFailure")
      assert.strictEqual(result.message, "chat: the model refused: I can't help with that.")
      assert.strictEqual(result._tag === "ExecutionFailure" ? result.excerpt : undefined, "I can't help with that.")
    })
  )

  it.live("a 429 then a success under the chat's retry policy", () =>
    Effect.gen(function* () {
      const { result, requests } = yield* turn(
        [
          Server.error(429, { message: "Rate limit reached", headers: { "retry-after-ms": "40" } }),
          Server.reply("Hi!")
        ],
        (agent) => agent.chat("Hi", { retry: { maxAttempts: 1 } })
      )
      expectTag(result, "Completed")
      assert.strictEqual(result.text, "Hi!")
      assert.strictEqual(requests.length, 2)
    })
  )

  it.live("a 500 with no retry policy fails the turn with TRANSIENT", () =>
    Effect.gen(function* () {
      const { result, requests } = yield* turn([Server.error(500), Server.reply("never")], (agent) =>
        Effect.flip(agent.chat("Hi"))
      )
      assert.instanceOf(result, ActionError.TransientFailure)
      assert.deepStrictEqual([result.category, result.status, result.action], ["TRANSIENT", 500, "chat"])
      assert.strictEqual(requests.length, 1)
    })
  )
})

/**
 * The Anthropic layer through the real `@anthropic-ai/sdk` against a local
 * Messages API endpoint (`MessagesServer`, a `node:http` server on
 * 127.0.0.1): the request the SDK sends (system, tools, tool_choice,
 * cache_control, thinking, output_config), a chat turn with two parallel tool
 * calls and signed thinking, generated and streamed, whose thinking blocks go
 * back byte for byte; usage with cache reads and writes in the one
 * convention; stop reasons (max_tokens, refusal, pause_turn continued); and
 * errors by category (429 with its wait, 529, 400/401/403/404, an error
 * inside a 200 stream), the API key never shown.
 */
import { assert, describe, it } from "@effect/vitest"
import { ActionError, Agent, Chat, LanguageModel } from "@rolecraft/core"
import { AnthropicLanguageModel } from "@rolecraft/anthropic"
import { MessagesServer as Server } from "@rolecraft/testing"
import { Duration, Effect, Redacted, Stream } from "effect"
import { fixture } from "../../core/test/support/TravelRole.ts"

const apiKey = "sk-ant-test-secret-key-123"

const layerFor = (baseURL: string, options?: Partial<AnthropicLanguageModel.Options>) =>
  AnthropicLanguageModel.layer({
    model: "claude-test",
    apiKey: Redacted.make(apiKey),
    baseURL,
    timeout: "10 seconds",
    ...options
  })

interface WireBody {
  readonly model: string
  readonly max_tokens: number
  readonly system?: ReadonlyArray<Record<string, unknown>>
  readonly tools?: ReadonlyArray<Record<string, unknown>>
  readonly tool_choice?: unknown
  readonly thinking?: unknown
  readonly output_config?: unknown
  readonly stream?: boolean
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: ReadonlyArray<Record<string, unknown>> }>
}

const bodies = (requests: ReadonlyArray<Server.Recorded>) => requests.map((request) => request.body as WireBody)

const thinkingA = { thinking: "Two dates, so count nights; and add the prices.", signature: "EqQBCkYIBRgCKkA+sig/A==" }
const redactedB = { redacted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" }

/** A turn of two parallel calls after signed thinking, then an answer; a cached prefix on the second step. */
const script = (): ReadonlyArray<Server.Step> => [
  Server.toolUse(
    [
      { id: "toolu_nights", name: "nights", input: { checkIn: "2026-05-12", checkOut: "2026-05-15" } },
      { id: "toolu_add", name: "add", input: { a: 120, b: 80 } }
    ],
    {
      text: "Let me work that out.",
      thinking: [thinkingA, redactedB],
      usage: { input_tokens: 40, cache_creation_input_tokens: 2000, output_tokens: 90 }
    }
  ),
  Server.reply("Three nights, 200 in all.", {
    thinking: [{ thinking: "Both answers are in.", signature: "sig-second" }],
    usage: {
      input_tokens: 60,
      cache_read_input_tokens: 2000,
      output_tokens: 30,
      output_tokens_details: { thinking_tokens: 12 }
    }
  })
]

const turn = (streamed: boolean) =>
  Effect.gen(function* () {
    const { travel, counts } = fixture()
    const server = yield* Server.make(script())
    const agent = yield* Agent.make({ id: "claude", roles: [travel] })
    const events: Array<Chat.ChatEvent> = []
    const run = streamed
      ? Effect.map(
          Stream.runForEach(agent.chatStream("Nights 12 to 15 May, and 120 + 80?", { system: "Be brief." }), (event) =>
            Effect.sync(() => events.push(event))
          ),
          () => (events.at(-1) as Extract<Chat.ChatEvent, { _tag: "TurnFinished" }>).result
        )
      : agent.chat("Nights 12 to 15 May, and 120 + 80?", { system: "Be brief." })
    const result = yield* Effect.provide(
      run,
      layerFor(server.baseURL, { thinking: { type: "enabled", budgetTokens: 1024 }, maxTokens: 4000 })
    )
    return { result, counts, events, requests: yield* server.requests }
  }).pipe(Effect.scoped)

describe("AnthropicLanguageModel (real @anthropic-ai/sdk, local Messages API endpoint)", () => {
  for (const streamed of [false, true]) {
    it.live(
      `${streamed ? "streamed" : "generated"}: two parallel tool calls after signed thinking, the blocks sent back unchanged`,
      () =>
        Effect.gen(function* () {
          const { result, counts, events, requests } = yield* turn(streamed)
          assert.strictEqual(result._tag, "Completed", JSON.stringify(result))
          const completed = result as Chat.Completed
          assert.strictEqual(completed.text, "Three nights, 200 in all.")
          assert.strictEqual(counts.nights, 1)
          assert.strictEqual(counts.add, 1)
          // Cache reads and writes are parts of the input, reasoning of the output: never on top.
          assert.deepStrictEqual(completed.usage, {
            inputTokens: 40 + 2000 + 60 + 2000,
            outputTokens: 120,
            totalTokens: 4100 + 120,
            cachedInputTokens: 2000,
            cacheWriteInputTokens: 2000,
            reasoningTokens: 12
          })
          const [first, second] = bodies(requests)
          assert.strictEqual(requests.length, 2)
          assert.strictEqual(requests[0]?.headers.authorization, `Bearer ${apiKey}`)
          assert.strictEqual(first?.stream === true, streamed)
          assert.deepStrictEqual(first?.thinking, { type: "enabled", budget_tokens: 1024 })
          assert.strictEqual(first?.max_tokens, 4000)
          // The cache rule: after the tools, after the system prompt, on the conversation's last block.
          assert.deepStrictEqual(first?.system, [
            { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }
          ])
          const tools = first?.tools ?? []
          assert.isTrue(tools.length >= 2)
          assert.deepStrictEqual(
            tools.map((tool) => tool.cache_control),
            tools.map((_, i) => (i === tools.length - 1 ? { type: "ephemeral" } : undefined))
          )
          assert.isTrue(tools.every((tool) => typeof tool.input_schema === "object"))
          // The second request: the assistant message with its signed thinking first, exactly as sent, then the
          // text and both calls; both results in one user message.
          const assistant = second?.messages[1]
          assert.deepStrictEqual(assistant, {
            role: "assistant",
            content: [
              { type: "thinking", thinking: thinkingA.thinking, signature: thinkingA.signature },
              { type: "redacted_thinking", data: redactedB.redacted },
              { type: "text", text: "Let me work that out." },
              {
                type: "tool_use",
                id: "toolu_nights",
                name: "nights",
                input: { checkIn: "2026-05-12", checkOut: "2026-05-15" }
              },
              { type: "tool_use", id: "toolu_add", name: "add", input: { a: 120, b: 80 } }
            ]
          })
          const results = second?.messages[2]
          assert.strictEqual(results?.role, "user")
          assert.deepStrictEqual(
            results?.content.map((block) => [block.type, block.tool_use_id, block.content]),
            [
              ["tool_result", "toolu_nights", "3"],
              ["tool_result", "toolu_add", '{"sum":200}']
            ]
          )
          assert.deepStrictEqual(results?.content.at(-1)?.cache_control, { type: "ephemeral" })
          // The thinking is reasoning, never text; the kept message carries the blocks for the next turn.
          const kept = completed.messages.filter((message) => message.role === "assistant")
          assert.deepStrictEqual(kept[0]?.providerData, {
            anthropic: {
              thinking: [
                { type: "thinking", thinking: thinkingA.thinking, signature: thinkingA.signature },
                { type: "redacted_thinking", data: redactedB.redacted }
              ]
            }
          })
          if (streamed) {
            const reasoning = events.flatMap((event) => (event._tag === "ReasoningDelta" ? [event.delta] : []))
            assert.strictEqual(reasoning.join(""), `${thinkingA.thinking}Both answers are in.`)
          }
        })
    )
  }

  it.live("a thread's next turn sends the last turn's thinking back with its signature", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const server = yield* Server.make([
        Server.reply("Hello.", { thinking: [{ thinking: "Greet.", signature: "sig-1" }] }),
        Server.reply("Again.")
      ])
      const agent = yield* Agent.make({ id: "claude", roles: [travel] })
      const layer = layerFor(server.baseURL, { thinking: { type: "adaptive" } })
      const first = yield* Effect.provide(agent.chat("Hi"), layer)
      assert.strictEqual(first._tag, "Completed")
      // The history goes through JSON, as a stored thread would.
      const stored = JSON.parse(JSON.stringify((first as Chat.Completed).messages))
      yield* Effect.provide(agent.chat([...stored, { role: "user", content: "Hi again" }]), layer)
      const [, second] = bodies(yield* server.requests)
      assert.deepStrictEqual(second?.thinking, { type: "adaptive" })
      assert.deepStrictEqual(second?.messages[1], {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Greet.", signature: "sig-1" },
          { type: "text", text: "Hello." }
        ]
      })
    })
  )

  it.live(
    "an approval pause keeps the signed thinking in the paused state; the resumed request sends it unchanged",
    () =>
      Effect.gen(function* () {
        const { travel, counts } = fixture()
        const server = yield* Server.make([
          Server.toolUse([{ id: "toolu_book", name: "book", input: { hotel: "Ritz" } }], {
            thinking: [{ thinking: "Booking needs a yes.", signature: "sig-paused" }, redactedB]
          }),
          Server.reply("Booked the Ritz.")
        ])
        const agent = yield* Agent.make({ id: "claude", roles: [travel] })
        const layer = layerFor(server.baseURL, { thinking: { type: "enabled", budgetTokens: 1024 } })
        const paused = yield* Effect.provide(agent.chat("Book the Ritz"), layer)
        assert.strictEqual(paused._tag, "AwaitingApproval", JSON.stringify(paused))
        // The paused state goes through JSON, as a stored one would.
        const state = JSON.parse(JSON.stringify((paused as Chat.AwaitingApproval).state)) as Chat.PausedState
        const resumed = yield* Effect.provide(agent.resume(state, { toolu_book: Chat.approve("ann") }), layer)
        assert.strictEqual(resumed._tag, "Completed", JSON.stringify(resumed))
        assert.strictEqual(counts.book, 1)
        const [, second] = bodies(yield* server.requests)
        assert.deepStrictEqual(second?.messages[1]?.content.slice(0, 2), [
          { type: "thinking", thinking: "Booking needs a yes.", signature: "sig-paused" },
          { type: "redacted_thinking", data: redactedB.redacted }
        ])
        assert.deepStrictEqual(second?.messages[2]?.content[0]?.tool_use_id, "toolu_book")
      })
  )

  it.live("tool_choice (no parallel calls as disable_parallel_tool_use), output_config, temperature, cache: none", () =>
    Effect.gen(function* () {
      const server = yield* Server.make([
        Server.reply('{"n":1}'),
        Server.reply("x"),
        Server.reply("y"),
        Server.reply("z")
      ])
      const model = yield* Effect.provide(
        Effect.service(LanguageModel.LanguageModel),
        layerFor(server.baseURL, { cache: "none" })
      )
      const tool: LanguageModel.Tool = {
        name: "nights",
        description: "Count nights",
        parameters: { type: "object", properties: { n: { type: "integer" } } },
        strict: true
      }
      const messages = [
        { role: "system" as const, content: "Sys." },
        { role: "user" as const, content: "Go" }
      ]
      yield* model.generate({
        messages,
        temperature: 0.2,
        responseFormat: { name: "n", schema: { type: "object", properties: { n: { type: "integer" } } }, strict: true }
      })
      yield* model.generate({ messages, tools: [tool], toolChoice: "required" })
      yield* model.generate({ messages, tools: [tool], toolChoice: { tool: "nights" }, parallelToolCalls: false })
      yield* model.generate({ messages, tools: [tool], parallelToolCalls: false })
      const [a, b, c, d] = bodies(yield* server.requests)
      assert.deepStrictEqual(a?.output_config, {
        format: { type: "json_schema", schema: { type: "object", properties: { n: { type: "integer" } } } }
      })
      assert.strictEqual((a as unknown as { temperature: number }).temperature, 0.2)
      assert.deepStrictEqual(a?.system, [{ type: "text", text: "Sys." }])
      assert.deepStrictEqual(a?.messages, [{ role: "user", content: [{ type: "text", text: "Go" }] }])
      assert.deepStrictEqual(b?.tool_choice, { type: "any" })
      assert.deepStrictEqual(b?.tools, [
        { name: "nights", description: "Count nights", input_schema: tool.parameters, strict: true }
      ])
      assert.deepStrictEqual(c?.tool_choice, { type: "tool", name: "nights", disable_parallel_tool_use: true })
      assert.deepStrictEqual(d?.tool_choice, { type: "auto", disable_parallel_tool_use: true })
      assert.strictEqual(model.profile?.parallelCalls, "disable_parallel_tool_use")
    })
  )

  for (const streamed of [false, true]) {
    it.live(
      `${streamed ? "streamed" : "generated"}: pause_turn is continued with the paused content, usage summed`,
      () =>
        Effect.gen(function* () {
          const paused = {
            id: "msg_paused",
            type: "message",
            role: "assistant",
            model: "claude-test",
            content: [
              { type: "text", text: "Searching… " },
              { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "lisbon trams" } }
            ],
            stop_reason: "pause_turn",
            stop_sequence: null,
            usage: { input_tokens: 10, output_tokens: 4 }
          }
          const server = yield* Server.make([
            Server.message(paused),
            Server.reply("Tram 28.", { usage: { input_tokens: 20, output_tokens: 3 } })
          ])
          const model = yield* Effect.provide(Effect.service(LanguageModel.LanguageModel), layerFor(server.baseURL))
          const request = { messages: [{ role: "user" as const, content: "Trams?" }] }
          const response = streamed
            ? yield* LanguageModel.collect(model.stream(request))
            : yield* model.generate(request)
          assert.strictEqual(response.text, "Searching… Tram 28.")
          assert.strictEqual(response.finishReason, "stop")
          assert.deepStrictEqual(response.usage, { inputTokens: 30, outputTokens: 7, totalTokens: 37 })
          const [, second] = bodies(yield* server.requests)
          assert.deepStrictEqual(second?.messages.at(-1), { role: "assistant", content: paused.content })
        })
    )
  }

  it.live("a thinking budget not under max_tokens, or under 1024, is VALIDATION naming it, and nothing is sent", () =>
    Effect.gen(function* () {
      const server = yield* Server.make([])
      for (const [budgetTokens, maxTokens] of [
        [4096, 4096],
        [512, 4096]
      ] as const) {
        const model = yield* Effect.provide(
          Effect.service(LanguageModel.LanguageModel),
          layerFor(server.baseURL, { thinking: { type: "enabled", budgetTokens }, maxTokens })
        )
        const request = { messages: [{ role: "user" as const, content: "Hi" }] }
        for (const error of [
          yield* Effect.flip(model.generate(request)),
          yield* Effect.flip(LanguageModel.collect(model.stream(request)))
        ]) {
          assert.strictEqual(error._tag, "ValidationError")
          assert.include(error.message, "thinking.budgetTokens")
        }
      }
      assert.strictEqual((yield* server.requests).length, 0)
    })
  )

  it.live("max_tokens is the length cut, and a refusal is its own outcome with the API's explanation", () =>
    Effect.gen(function* () {
      const server = yield* Server.make([
        Server.reply("It was a dark and", { stopReason: "max_tokens", usage: { input_tokens: 5, output_tokens: 8 } }),
        Server.reply("", {
          stopReason: "refusal",
          stopDetails: { type: "refusal", category: "cyber", explanation: "Blocked under the usage policy." }
        })
      ])
      const model = yield* Effect.provide(Effect.service(LanguageModel.LanguageModel), layerFor(server.baseURL))
      const cut = yield* model.generate({ messages: [{ role: "user", content: "Story" }], maxTokens: 8 })
      assert.strictEqual(cut.finishReason, "length")
      const refused = yield* model.generate({ messages: [{ role: "user", content: "Bad" }] })
      assert.strictEqual(refused.finishReason, "content_filter")
      assert.strictEqual(refused.refusal, "Blocked under the usage policy.")
    })
  )

  const errorCases: ReadonlyArray<{
    readonly name: string
    readonly step: Server.Step
    readonly tag: string
    readonly status?: number
    readonly retryAfter?: number
    readonly streamOnly?: boolean
  }> = [
    {
      name: "429 with retry-after",
      step: Server.error(429, { headers: { "retry-after": "3" } }),
      tag: "TransientFailure",
      status: 429,
      retryAfter: 3000
    },
    { name: "529 overloaded_error", step: Server.error(529), tag: "TransientFailure", status: 529 },
    { name: "500 api_error", step: Server.error(500), tag: "TransientFailure", status: 500 },
    { name: "400 invalid_request_error", step: Server.error(400), tag: "ExecutionFailure", status: 400 },
    { name: "401 authentication_error", step: Server.error(401), tag: "ExecutionFailure", status: 401 },
    { name: "403 permission_error", step: Server.error(403), tag: "ExecutionFailure", status: 403 },
    { name: "404 not_found_error", step: Server.error(404), tag: "ExecutionFailure", status: 404 },
    {
      name: "an overloaded_error event inside a 200 stream",
      step: Server.events([
        {
          type: "message_start",
          message: {
            id: "m",
            type: "message",
            role: "assistant",
            model: "x",
            content: [],
            usage: { input_tokens: 1, output_tokens: 1 }
          }
        },
        { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }
      ]),
      tag: "TransientFailure",
      streamOnly: true
    },
    {
      name: "an invalid_request_error event inside a 200 stream",
      step: Server.events([{ type: "error", error: { type: "invalid_request_error", message: "bad" } }]),
      tag: "ExecutionFailure",
      streamOnly: true
    },
    {
      name: "a stream cut before message_stop",
      step: Server.cut(Server.reply("one two three four"), { after: 3 }),
      tag: "TransientFailure",
      streamOnly: true
    }
  ]
  for (const { name, step, tag, status, retryAfter, streamOnly } of errorCases) {
    for (const streamed of streamOnly === true ? [true] : [false, true]) {
      it.live(`${name} (${streamed ? "streamed" : "generated"}): ${tag}, the key never shown`, () =>
        Effect.gen(function* () {
          const server = yield* Server.make([step])
          const model = yield* Effect.provide(Effect.service(LanguageModel.LanguageModel), layerFor(server.baseURL))
          const request = { messages: [{ role: "user" as const, content: `Say ${apiKey}` }] }
          const error = yield* Effect.flip(
            streamed ? LanguageModel.collect(model.stream(request)) : model.generate(request)
          )
          assert.strictEqual(error._tag, tag, error.message)
          assert.isTrue(ActionError.isActionError(error))
          if (status !== undefined && "status" in error) assert.strictEqual(error.status, status)
          if (retryAfter !== undefined) {
            const wait = (error as ActionError.TransientFailure).retryAfter
            assert.strictEqual(wait === undefined ? undefined : Duration.toMillis(wait), retryAfter)
          }
          assert.notInclude(JSON.stringify({ message: error.message, error }), apiKey)
        })
      )
    }
  }
})

/**
 * effect/ai → Rolecraft: an effect/ai LanguageModel (scripted, built by effect/ai's
 * own LanguageModel.make) drives a real agent.chat turn whose tool calls run through
 * Rolecraft's pipeline; AiError reasons map to the nine categories.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import { EffectAiModel } from "@rolecraft/effect-ai"
import { Duration, Effect, Layer, Schema, Stream } from "effect"
import { AiError, Prompt, type Response, Tool } from "effect/ai"
import { finish, scripted, text, toolCall } from "./support/ScriptedAiModel.ts"

const travel = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  actions: {
    nights: Action.local({
      description: "Count the nights between two dates",
      parameters: { checkIn: Schema.String, checkOut: Schema.String },
      run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
    }),
    guests: Action.local({
      description: "Guests per room",
      parameters: { rooms: Schema.Int },
      run: ({ rooms }) => rooms * 2
    })
  }
})

const toolResults = (prompt: Prompt.Prompt) =>
  prompt.content.flatMap((message) =>
    message.role === "tool"
      ? message.content.flatMap((part) =>
          part.type === "tool-result"
            ? [{ id: part.id, name: part.name, result: part.result, isFailure: part.isFailure }]
            : []
        )
      : []
  )

describe("EffectAiModel", () => {
  it.effect("an effect/ai model drives a chat turn; its tool calls run through Rolecraft's pipeline", () =>
    Effect.gen(function* () {
      const model = scripted([
        [
          toolCall("c1", "nights", { checkIn: "2026-11-02", checkOut: "2026-11-05" }),
          toolCall("c2", "guests", { rooms: "2" }),
          toolCall("c3", "nights", { checkIn: "2026-11-02" }),
          toolCall("c4", "teleport", {}),
          finish("tool-calls", 10, 4)
        ],
        [
          { type: "response-metadata", modelId: "scripted-1" },
          text("Three nights, four guests."),
          finish("stop", 20, 6)
        ]
      ])
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const result = yield* agent
        .chat("How many nights?")
        .pipe(Effect.provide(EffectAiModel.layer({ name: "scripted" }).pipe(Layer.provide(model.layer))))

      assert.strictEqual(result._tag, "Completed")
      if (result._tag !== "Completed") return
      assert.strictEqual(result.text, "Three nights, four guests.")
      assert.deepStrictEqual(result.usage, { inputTokens: 30, outputTokens: 10, totalTokens: 40 })
      assert.strictEqual(result.steps, 2)
      assert.strictEqual(result.finishReason, "stop")
      assert.strictEqual(model.remaining(), 0)

      // What effect/ai was asked: Rolecraft's projected schemas, its own resolution off.
      const first = model.requests[0]
      assert.deepStrictEqual(
        first?.tools.map((tool) => tool.name),
        ["nights", "guests"]
      )
      assert.deepStrictEqual(first?.tools[0] && Tool.getJsonSchema(first.tools[0]), {
        type: "object",
        properties: { checkIn: { type: "string" }, checkOut: { type: "string" } },
        required: ["checkIn", "checkOut"]
      })
      assert.strictEqual(first?.toolCallValidation, "deferred")
      assert.strictEqual(first?.prompt.content[0]?.role, "system")

      // Every call answered once, by the pipeline: converted, refused or not found.
      const answers = toolResults(model.requests[1]?.prompt ?? Prompt.empty)
      assert.deepStrictEqual(
        answers.map(({ id, name, isFailure }) => ({ id, name, isFailure })),
        [
          { id: "c1", name: "nights", isFailure: false },
          { id: "c2", name: "guests", isFailure: false },
          { id: "c3", name: "nights", isFailure: true },
          { id: "c4", name: "teleport", isFailure: true }
        ]
      )
      assert.strictEqual(answers[0]?.result, 3)
      assert.strictEqual(answers[1]?.result, 4)
      const categoryOf = (result: unknown) => (result as { error: { category: string } }).error.category
      assert.strictEqual(categoryOf(answers[2]?.result), "VALIDATION")
      assert.strictEqual(categoryOf(answers[3]?.result), "NOT_FOUND")
    })
  )

  it.effect(
    "usage falls back to the sum of its parts, keeps cache reads and reasoning as parts, and the model id",
    () =>
      Effect.gen(function* () {
        const model = scripted([
          [
            { type: "response-metadata", modelId: "scripted-2" },
            text("hi"),
            {
              type: "finish",
              reason: "unknown",
              usage: { inputTokens: { uncached: 3, cacheRead: 2 }, outputTokens: { text: 4, reasoning: 1 } }
            }
          ]
        ])
        const rolecraft = yield* EffectAiModel.make({ name: "scripted" }).pipe(Effect.provide(model.layer))
        const response = yield* rolecraft.generate({ messages: [{ role: "user", content: "hi" }] })
        assert.deepStrictEqual(response, {
          text: "hi",
          toolCalls: [],
          usage: { inputTokens: 5, outputTokens: 5, totalTokens: 10, cachedInputTokens: 2, reasoningTokens: 1 },
          finishReason: "stop",
          model: "scripted-2"
        })
      })
  )

  const http = (status: number, headers: Record<string, string> = {}) => ({ response: { status, headers } })
  const cases: ReadonlyArray<
    readonly [string, AiError.AiErrorReason, string, { status?: number; retryAfter?: Duration.Duration }]
  > = [
    [
      "rate limit with its retryAfter",
      new AiError.RateLimitError({ retryAfter: Duration.seconds(2) }),
      "TRANSIENT",
      {
        retryAfter: Duration.seconds(2)
      }
    ],
    [
      "rate limit with a Retry-After header",
      new AiError.RateLimitError({ http: http(429, { "retry-after": "7" }) }),
      "TRANSIENT",
      {
        status: 429,
        retryAfter: Duration.seconds(7)
      }
    ],
    [
      "provider 5xx",
      new AiError.InternalProviderError({ description: "down", http: http(503) }),
      "TRANSIENT",
      { status: 503 }
    ],
    [
      "connection lost",
      new AiError.NetworkError({ reason: "TransportError", method: "POST", url: "http://x" }),
      "TRANSIENT",
      {}
    ],
    ["bad key", new AiError.AuthenticationError({ kind: "InvalidKey", http: http(401) }), "EXECUTION", { status: 401 }],
    ["content policy", new AiError.ContentPolicyError({ description: "no" }), "EXECUTION", {}],
    ["invalid request", new AiError.InvalidRequestError({ parameter: "temperature" }), "VALIDATION", {}],
    ["unknown tool", new AiError.ToolNotFoundError({ toolName: "x", availableTools: ["nights"] }), "NOT_FOUND", {}]
  ]
  for (const [name, reason, category, extra] of cases) {
    it.effect(`an AiError maps to its category: ${name} is ${category}`, () =>
      Effect.gen(function* () {
        const model = scripted([AiError.make({ module: "Scripted", method: "generateText", reason })])
        const rolecraft = yield* EffectAiModel.make().pipe(Effect.provide(model.layer))
        const error = yield* Effect.flip(
          rolecraft.generate({ messages: [{ role: "user", content: "hi" }], action: "summarize" })
        )
        assert.strictEqual(error.category, category)
        assert.strictEqual(error.action, "summarize")
        assert.strictEqual("status" in error ? error.status : undefined, extra.status)
        const retryAfter = "retryAfter" in error ? error.retryAfter : undefined
        assert.deepStrictEqual(
          retryAfter && Duration.toMillis(retryAfter),
          extra.retryAfter && Duration.toMillis(extra.retryAfter)
        )
      })
    )
  }

  it.effect("an llm action runs on an effect/ai model, with no tools and its usage reported", () =>
    Effect.gen(function* () {
      const model = scripted([[text("A short summary."), finish("stop", 7, 3)]])
      const writer = Role.make({
        identity: { name: "writer", goal: "Write", domain: "text" },
        actions: { summarize: Action.llm({ description: "Summarize the text", parameters: { text: Schema.String } }) }
      })
      const agent = yield* Agent.make({ id: "writer", roles: [writer] })
      const response = yield* agent
        .execute({ action: "summarize", params: { text: "long text" } })
        .pipe(Effect.provide(EffectAiModel.layer().pipe(Layer.provide(model.layer))))
      assert.isTrue(response.success)
      assert.strictEqual(response.value, "A short summary.")
      assert.deepStrictEqual(response.usage, { inputTokens: 7, outputTokens: 3, totalTokens: 10 })
      assert.deepStrictEqual(model.requests[0]?.tools, [])
    })
  )

  it.effect("streams through effect/ai's streamText: text and tool call deltas, a whole call, then the answer", () =>
    Effect.gen(function* () {
      const model = scripted(
        [],
        [
          [
            { type: "response-metadata", modelId: "streamer-1" },
            { type: "text-delta", id: "t", delta: "Let me " },
            { type: "text-delta", id: "t", delta: "check." },
            { type: "tool-params-start", id: "c1", name: "nights" },
            { type: "tool-params-delta", id: "c1", delta: '{"checkIn":"2026-11-02",' },
            { type: "tool-params-delta", id: "c1", delta: '"checkOut":"2026-11-05"}' },
            { type: "tool-call", id: "c1", name: "nights", params: { checkIn: "2026-11-02", checkOut: "2026-11-05" } },
            { type: "tool-call", id: "c2", name: "guests", params: { rooms: 2 } },
            finish("tool-calls", 9, 7) as Response.StreamPartEncoded
          ]
        ]
      )
      const tool = (name: string) => ({
        name,
        key: name,
        description: name,
        parameters: { type: "object" as const, properties: {} },
        strict: false
      })
      const rolecraft = yield* EffectAiModel.make({ name: "scripted" }).pipe(Effect.provide(model.layer))
      const parts = yield* Stream.runCollect(
        rolecraft.stream({ messages: [{ role: "user", content: "hi" }], tools: [tool("nights"), tool("guests")] })
      )
      const deltas = parts.flatMap((part) => (part._tag === "TextDelta" ? [part.delta] : []))
      assert.deepStrictEqual(deltas, ["Let me ", "check."])
      const finished = parts[parts.length - 1]
      assert.strictEqual(finished?._tag, "Finished")
      if (finished?._tag !== "Finished") return
      assert.deepStrictEqual(finished.response, {
        text: "Let me check.",
        toolCalls: [
          { id: "c1", name: "nights", arguments: '{"checkIn":"2026-11-02","checkOut":"2026-11-05"}' },
          { id: "c2", name: "guests", arguments: '{"rooms":2}' }
        ],
        usage: { inputTokens: 9, outputTokens: 7, totalTokens: 16 },
        finishReason: "tool_calls",
        model: "streamer-1"
      })
    })
  )

  it.effect("a streamed chat turn over an effect/ai model: deltas as they come, tool calls through the pipeline", () =>
    Effect.gen(function* () {
      const model = scripted(
        [],
        [
          [
            { type: "tool-call", id: "c1", name: "nights", params: { checkIn: "2026-11-02", checkOut: "2026-11-05" } },
            finish("tool-calls", 10, 4) as Response.StreamPartEncoded
          ],
          [
            { type: "text-delta", id: "t", delta: "Three " },
            { type: "text-delta", id: "t", delta: "nights." },
            finish("stop", 20, 6) as Response.StreamPartEncoded
          ]
        ]
      )
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const events = yield* Stream.runCollect(
        agent
          .chatStream("How many nights?")
          .pipe(Stream.provide(EffectAiModel.layer({ name: "scripted" }).pipe(Layer.provide(model.layer))))
      )
      const deltas = events.flatMap((event) => (event._tag === "TextDelta" ? [event.delta] : []))
      assert.deepStrictEqual(deltas, ["Three ", "nights."])
      const last = events[events.length - 1]
      assert.strictEqual(last?._tag, "TurnFinished")
      if (last?._tag !== "TurnFinished") return
      assert.strictEqual(last.result._tag, "Completed")
      if (last.result._tag !== "Completed") return
      assert.strictEqual(last.result.text, "Three nights.")
      assert.deepStrictEqual(last.result.usage, { inputTokens: 30, outputTokens: 10, totalTokens: 40 })
      assert.isTrue(last.result.messages.some((message) => message.role === "tool" && message.content === "3"))
    })
  )
})

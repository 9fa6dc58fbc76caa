import { assert, describe, it } from "@effect/vitest"
import type { LanguageModel, ModelResponse } from "@rolecraft/core"
import { ChatCompletionsServer as Server } from "@rolecraft/testing"
import { Cause, Effect, Exit, Redacted, Stream } from "effect"
import * as OpenAiLanguageModel from "../src/OpenAiLanguageModel.ts"

const ask: LanguageModel.Request = {
  messages: [{ role: "user", content: "Find me a hotel" }],
  action: "ask"
}

// The real openai SDK streaming from the local endpoint; every part and the server's record of each request.
const streamed = (script: ReadonlyArray<Server.Step>, request: LanguageModel.Request = ask) =>
  Effect.gen(function* () {
    const server = yield* Server.make(script)
    const model = yield* OpenAiLanguageModel.make({
      model: "gpt-test",
      apiKey: Redacted.make("sk-test-key"),
      baseURL: server.baseURL
    })
    const parts: Array<ModelResponse.StreamPart> = []
    const exit = yield* Effect.exit(
      Stream.runForEach(model.stream(request), (part) => Effect.sync(() => parts.push(part)))
    )
    return { parts, exit, requests: yield* server.requests, server, model }
  })

const finished = (parts: ReadonlyArray<ModelResponse.StreamPart>) => {
  const last = parts.at(-1)
  assert.strictEqual(last?._tag, "Finished")
  return (last as Extract<ModelResponse.StreamPart, { _tag: "Finished" }>).response
}

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  assert.isTrue(Exit.isFailure(exit))
  const reason = Exit.isFailure(exit) ? exit.cause.reasons.find(Cause.isFailReason) : undefined
  assert.isDefined(reason)
  return (reason as Cause.Fail<E>).error
}

const chunk = (delta: object, finishReason: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 0,
  model: "gpt-test",
  choices: [{ index: 0, delta, finish_reason: finishReason }]
})

describe("OpenAiLanguageModel streaming (real openai SDK, local SSE endpoint)", () => {
  it.live(
    "streams with stream_options.include_usage: the text arrives in pieces, usage comes from the last chunk",
    () =>
      Effect.gen(function* () {
        const { parts, exit, requests } = yield* streamed([
          Server.reply("Hotel Lisboa has rooms.", {
            usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 }
          })
        ])
        assert.isTrue(Exit.isSuccess(exit))
        const body = requests[0]?.body as Record<string, unknown>
        assert.strictEqual(body.stream, true)
        assert.deepStrictEqual(body.stream_options, { include_usage: true })
        const deltas = parts.flatMap((part) => (part._tag === "TextDelta" ? [part.delta] : []))
        assert.deepStrictEqual(deltas, ["Hotel ", "Lisboa ", "has ", "rooms."])
        assert.deepStrictEqual(finished(parts), {
          text: "Hotel Lisboa has rooms.",
          toolCalls: [],
          usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17 },
          finishReason: "stop",
          model: "gpt-test"
        })
        assert.strictEqual(requests[0]?.outcome, "answered")
      }).pipe(Effect.scoped)
  )

  it.live(
    "tool calls: ids and names only on the first fragment, two calls starting in one chunk, arguments in pieces",
    () =>
      Effect.gen(function* () {
        const { parts, exit } = yield* streamed([
          Server.toolCalls([
            { id: "call_a", name: "searchHotels", arguments: { city: "Lisbon", nights: 2 } },
            { id: "call_b", name: "searchHotels", arguments: { city: "Porto", nights: 1 } }
          ])
        ])
        assert.isTrue(Exit.isSuccess(exit))
        const started = parts.filter((part) => part._tag === "ToolCallArgumentsStarted")
        assert.deepStrictEqual(started, [
          { _tag: "ToolCallArgumentsStarted", index: 0, id: "call_a", name: "searchHotels" },
          { _tag: "ToolCallArgumentsStarted", index: 1, id: "call_b", name: "searchHotels" }
        ])
        const pieces = parts.filter((part) => part._tag === "ToolCallArgumentsDelta" && part.id === "call_a")
        assert.isAbove(pieces.length, 1)
        assert.deepStrictEqual(finished(parts).toolCalls, [
          { id: "call_a", name: "searchHotels", arguments: '{"city":"Lisbon","nights":2}' },
          { id: "call_b", name: "searchHotels", arguments: '{"city":"Porto","nights":1}' }
        ])
        assert.strictEqual(finished(parts).finishReason, "tool_calls")
      }).pipe(Effect.scoped)
  )

  it.live("two fragments of one call sharing an index in the first chunk, the name arriving after the id", () =>
    Effect.gen(function* () {
      const { parts, exit } = yield* streamed([
        Server.chunks([
          chunk({
            role: "assistant",
            tool_calls: [
              { index: 0, id: "call_x", type: "function", function: { arguments: "" } },
              { index: 0, function: { arguments: '{"city"' } }
            ]
          }),
          chunk({ tool_calls: [{ index: 0, function: { name: "searchHotels", arguments: ':"Faro"}' } }] }),
          chunk({}, "tool_calls"),
          { ...chunk({}), choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }
        ])
      ])
      assert.isTrue(Exit.isSuccess(exit))
      assert.deepStrictEqual(
        parts.filter((part) => part._tag !== "Finished"),
        [
          { _tag: "ToolCallArgumentsStarted", index: 0, id: "call_x", name: "searchHotels" },
          { _tag: "ToolCallArgumentsDelta", index: 0, id: "call_x", delta: '{"city":"Faro"}' }
        ]
      )
      assert.deepStrictEqual(finished(parts).usage, { inputTokens: 3, outputTokens: 4, totalTokens: 7 })
    }).pipe(Effect.scoped)
  )

  it.live("a socket closed mid-answer is TRANSIENT: no finish reason, no usage, nothing finished", () =>
    Effect.gen(function* () {
      const { parts, exit, requests } = yield* streamed([
        Server.cut(Server.reply("Hotel Lisboa has rooms at 90 euros a night.", { usage: { prompt_tokens: 1 } }), {
          after: 3
        })
      ])
      const error = failureOf(exit)
      assert.strictEqual(error.category, "TRANSIENT")
      assert.isTrue(error.retryable)
      assert.deepStrictEqual(
        parts.map((part) => part._tag),
        ["TextDelta", "TextDelta"]
      )
      assert.strictEqual(requests[0]?.outcome, "cut")
    }).pipe(Effect.scoped)
  )

  it.live("a stream that stalls is aborted by interruption: the server sees the client close its socket", () =>
    Effect.gen(function* () {
      const server = yield* Server.make([Server.stall(Server.reply("Hotel Lisboa has rooms."), { after: 2 })])
      const model = yield* OpenAiLanguageModel.make({ model: "gpt-test", baseURL: server.baseURL })
      // Pull until the first text delta has arrived, then stop: the stall is under way.
      const first = yield* Stream.runHead(Stream.filter(model.stream(ask), (part) => part._tag === "TextDelta"))
      assert.deepStrictEqual(first._tag === "Some" ? first.value : undefined, { _tag: "TextDelta", delta: "Hotel " })
      // The close reaches the server asynchronously: wait for it (bounded), without timing anything.
      let outcome = "pending"
      for (let i = 0; i < 200 && outcome === "pending"; i++) {
        yield* Effect.sleep("10 millis")
        outcome = (yield* server.requests)[0]?.outcome ?? "pending"
      }
      assert.strictEqual(outcome, "aborted")
    }).pipe(Effect.scoped)
  )

  it.live("a malformed chunk is EXECUTION naming the field; a chunk that is not JSON is EXECUTION", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [chunk({ tool_calls: [{ index: "zero" }] }), "choices[0].delta.tool_calls[0].index is not an integer >= 0"],
        [chunk({ content: 42 }), "choices[0].delta.content is not a string"],
        [{ ...chunk({}), choices: "none" }, "choices is not an array"],
        [
          chunk({ tool_calls: [{ index: 0, function: { name: ["x"] } }] }),
          "tool_calls[0].function.name is not a string"
        ],
        ["{not json", "malformed"]
      ]
      for (const [sent, field] of cases) {
        const { exit } = yield* streamed([Server.chunks([chunk({ content: "ok" }), sent, chunk({}, "stop")])])
        const error = failureOf(exit)
        assert.strictEqual(error.category, "EXECUTION", field)
        assert.include(error.message, field)
      }
    }).pipe(Effect.scoped)
  )

  it.live("a tool call whose fragments never completed (no name) is EXECUTION and never returned", () =>
    Effect.gen(function* () {
      const { parts, exit } = yield* streamed([
        Server.chunks([
          chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "book", arguments: "{}" } }] }),
          chunk({ tool_calls: [{ index: 1, id: "call_2", function: { arguments: '{"hotel":' } }] }),
          chunk({}, "tool_calls")
        ])
      ])
      const error = failureOf(exit)
      assert.strictEqual(error.category, "EXECUTION")
      assert.include(error.message, "tool call at index 1")
      assert.isFalse(parts.some((part) => part._tag === "Finished"))
    }).pipe(Effect.scoped)
  )

  it.live("an HTTP error before the stream starts maps as for generate (429 TRANSIENT)", () =>
    Effect.gen(function* () {
      const { exit } = yield* streamed([Server.error(429, { headers: { "retry-after": "2" } })])
      const error = failureOf(exit)
      assert.strictEqual(error.category, "TRANSIENT")
      assert.strictEqual(error._tag === "TransientFailure" ? error.status : undefined, 429)
    }).pipe(Effect.scoped)
  )
})

/**
 * One rule in every reader of a provider's answer: a value that a later chunk or part leaves empty — absent,
 * `null` or `""` — never replaces a value an earlier one gave, and a later value given replaces it. A table of
 * every field a reader joins (model, finish reason, input and output counts, a tool call's id and name) ×
 * (absent, `null`, `""`, a value), drawn as sequences of chunks and run through every reader: the core stream
 * reader over provider chunks, the chat completions stream through the real `openai` SDK, effect/ai's parts
 * through the bridge, and the non-streamed bodies (a body whose model is empty names no model, so the span
 * names the request's).
 */
import { assert, describe, it } from "@effect/vitest"
import { LanguageModel, type ModelResponse } from "@rolecraft/core"
import { EffectAiModel } from "@rolecraft/effect-ai"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { Effect, Layer, Redacted, Stream } from "effect"
import { LanguageModel as AiLanguageModel, type Response as AiResponse } from "effect/ai"
import * as fc from "fast-check"

type State<A> =
  | { readonly _tag: "absent" }
  | { readonly _tag: "null" }
  | { readonly _tag: "empty" }
  | { readonly _tag: "value"; readonly value: A }

const empties = [{ _tag: "absent" }, { _tag: "null" }, { _tag: "empty" }] as const

const stateOf = <A>(values: fc.Arbitrary<A>, allowEmptyString = true): fc.Arbitrary<State<A>> =>
  fc.oneof(
    fc.constantFrom(...empties.filter((e) => allowEmptyString || e._tag !== "empty")),
    values.map((value) => ({ _tag: "value", value }) as const)
  )

/** One chunk: what it says of each field. The first chunk gives every field a value. */
interface Chunk {
  readonly model: State<string>
  readonly finish: State<string>
  readonly input: State<number>
  readonly output: State<number>
  readonly callId: State<never>
  readonly callName: State<never>
  readonly piece: string
}

const emptyOnly = fc.constantFrom(...empties) as fc.Arbitrary<State<never>>

const later: fc.Arbitrary<Chunk> = fc.record({
  model: stateOf(fc.constantFrom("gpt-b", "gpt-c")),
  finish: stateOf(fc.constantFrom("stop", "length")),
  // A count is a number or nothing: `""` is a malformed count, refused by name.
  input: stateOf(fc.nat({ max: 500 }), false),
  output: stateOf(fc.nat({ max: 500 }), false),
  callId: emptyOnly,
  callName: emptyOnly,
  piece: fc.constantFrom("", "a", "b")
})

const first: Chunk = {
  model: { _tag: "value", value: "gpt-a" },
  finish: { _tag: "value", value: "tool_calls" },
  input: { _tag: "value", value: 7 },
  output: { _tag: "value", value: 3 },
  callId: { _tag: "absent" },
  callName: { _tag: "absent" },
  piece: "x"
}

const traces = fc.array(later, { maxLength: 6 }).map((rest) => [first, ...rest])

const lastGiven = <A>(trace: ReadonlyArray<Chunk>, field: (chunk: Chunk) => State<A>): A => {
  let known: A | undefined
  for (const chunk of trace) {
    const state = field(chunk)
    if (state._tag === "value") known = state.value
  }
  return known as A
}

/** What every reader must read from a trace. */
const expected = (trace: ReadonlyArray<Chunk>) => {
  const inputTokens = lastGiven(trace, (c) => c.input)
  const outputTokens = lastGiven(trace, (c) => c.output)
  const finish = lastGiven(trace, (c) => c.finish) as ModelResponse.FinishReason
  return {
    model: lastGiven(trace, (c) => c.model),
    finishReason: finish,
    usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
    toolCalls: [{ id: "call_1", name: "lookup", arguments: trace.map((c) => c.piece).join("") }]
  }
}

const wireOf = <A>(state: State<A>): A | null | "" | undefined =>
  state._tag === "value" ? state.value : state._tag === "null" ? null : state._tag === "empty" ? "" : undefined

/** The field set as the chunk gives it: left out when absent. */
const field = <K extends string, A>(key: K, state: State<A>) =>
  state._tag === "absent" ? {} : ({ [key]: wireOf(state) } as Record<K, A | null | "">)

const providerChunks = (trace: ReadonlyArray<Chunk>): ReadonlyArray<ModelResponse.ProviderChunk> =>
  trace.map((chunk, i) => ({
    ...field("model", chunk.model),
    ...field("finishReason", chunk.finish),
    ...(chunk.input._tag === "absent" && chunk.output._tag === "absent"
      ? {}
      : { usage: { ...field("inputTokens", chunk.input), ...field("outputTokens", chunk.output) } }),
    toolCalls: [
      i === 0
        ? { index: 0, id: "call_1", name: "lookup", arguments: chunk.piece }
        : { index: 0, ...field("id", chunk.callId), ...field("name", chunk.callName), arguments: chunk.piece }
    ]
  })) as ReadonlyArray<ModelResponse.ProviderChunk>

const wireChunks = (trace: ReadonlyArray<Chunk>): ReadonlyArray<unknown> =>
  trace.map((chunk, i) => ({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    ...field("model", chunk.model),
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [
            i === 0
              ? { index: 0, id: "call_1", type: "function", function: { name: "lookup", arguments: chunk.piece } }
              : {
                  index: 0,
                  ...field("id", chunk.callId),
                  function: { ...field("name", chunk.callName), arguments: chunk.piece }
                }
          ]
        },
        ...field("finish_reason", chunk.finish)
      }
    ],
    ...(chunk.input._tag === "absent" && chunk.output._tag === "absent"
      ? {}
      : { usage: { ...field("prompt_tokens", chunk.input), ...field("completion_tokens", chunk.output) } })
  }))

const aiFinish: Readonly<Record<string, AiResponse.FinishReason>> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool-calls"
}

/** effect/ai's parts: the model on metadata parts, one finish part per chunk with a reason or a count. */
const aiParts = (trace: ReadonlyArray<Chunk>): ReadonlyArray<AiResponse.StreamPartEncoded> =>
  trace.flatMap((chunk, i): ReadonlyArray<AiResponse.StreamPartEncoded> => {
    const model = chunk.model
    const parts: Array<AiResponse.StreamPartEncoded> = []
    // effect/ai has no `null` model: a null is a part without one.
    if (model._tag !== "absent") {
      parts.push(
        model._tag === "value"
          ? { type: "response-metadata", modelId: model.value }
          : model._tag === "empty"
            ? { type: "response-metadata", modelId: "" }
            : { type: "response-metadata" }
      )
    }
    if (i === 0) parts.push({ type: "tool-params-start", id: "call_1", name: "lookup" })
    if (chunk.piece !== "") parts.push({ type: "tool-params-delta", id: "call_1", delta: chunk.piece })
    const count = (state: State<number>) => (state._tag === "value" ? { total: state.value } : {})
    if (chunk.finish._tag !== "absent" || chunk.input._tag !== "absent" || chunk.output._tag !== "absent") {
      parts.push({
        type: "finish",
        reason: chunk.finish._tag === "value" ? (aiFinish[chunk.finish.value] as AiResponse.FinishReason) : "unknown",
        usage: { inputTokens: count(chunk.input), outputTokens: count(chunk.output) }
      } as AiResponse.StreamPartEncoded)
    }
    return parts
  })

const numRuns = 300

const finished = (parts: ReadonlyArray<ModelResponse.StreamPart>) => {
  const last = parts.at(-1)
  assert.strictEqual(last?._tag, "Finished")
  const { text: _text, ...response } = (last as Extract<ModelResponse.StreamPart, { _tag: "Finished" }>).response
  return response
}

describe("an empty value never overwrites a known one, in every reader", () => {
  it.effect("the core stream reader over provider chunks", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(traces, async (trace) => {
          const model = LanguageModel.make({ stream: () => Stream.fromIterable(providerChunks(trace)) })
          const parts = await Effect.runPromise(Stream.runCollect(model.stream({ messages: [] })))
          assert.deepStrictEqual(finished(parts), expected(trace))
        }),
        { numRuns }
      )
    )
  )

  it.live("the chat completions stream, through the openai SDK", () =>
    Effect.gen(function* () {
      let body = ""
      const model = yield* Effect.provide(
        Effect.service(LanguageModel.LanguageModel),
        OpenAiLanguageModel.layer({
          model: "gpt-request",
          apiKey: Redacted.make("sk-known-key"),
          baseURL: "http://model.invalid/v1",
          fetch: async () => new Response(body, { headers: { "content-type": "text/event-stream" } })
        })
      )
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(traces, async (trace) => {
            // Azure ends without `[DONE]`: the response simply ends.
            body = wireChunks(trace)
              .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
              .join("")
            const parts = await Effect.runPromise(Stream.runCollect(model.stream({ messages: [] })))
            assert.deepStrictEqual(finished(parts), expected(trace))
          }),
          { numRuns }
        )
      )
    })
  )

  it.effect("effect/ai's parts, through the bridge", () =>
    Effect.gen(function* () {
      let parts: ReadonlyArray<AiResponse.StreamPartEncoded> = []
      const ai = Layer.effect(
        AiLanguageModel.LanguageModel,
        AiLanguageModel.make({
          generateText: () => Effect.die(new Error("not generated")),
          streamText: () => Stream.suspend(() => Stream.fromIterable(parts))
        })
      )
      const model = yield* EffectAiModel.make({ name: "scripted" }).pipe(Effect.provide(ai))
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(traces, async (trace) => {
            parts = aiParts(trace)
            const read = await Effect.runPromise(Stream.runCollect(model.stream({ messages: [] })))
            assert.deepStrictEqual(finished(read), expected(trace))
          }),
          { numRuns }
        )
      )
    })
  )

  it.live("a non-streamed body: an empty model names no model; the span names the request's", () =>
    Effect.gen(function* () {
      for (const state of [...empties, { _tag: "value", value: "gpt-body" } as const]) {
        const completion = {
          id: "chatcmpl-1",
          object: "chat.completion",
          created: 1,
          ...field("model", state),
          choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
        }
        const layer = OpenAiLanguageModel.layer({
          model: "gpt-request",
          apiKey: Redacted.make("sk-known-key"),
          baseURL: "http://model.invalid/v1",
          fetch: async () => Response.json(completion)
        })
        const fromWire = yield* Effect.provide(
          Effect.flatMap(Effect.service(LanguageModel.LanguageModel), (model) => model.generate({ messages: [] })),
          layer
        )
        const fromProvider = yield* LanguageModel.make(() => ({ text: "ok", ...field("model", state) })).generate({
          messages: []
        })
        const model = state._tag === "value" ? state.value : undefined
        assert.strictEqual(fromWire.model, model, state._tag)
        assert.strictEqual(fromProvider.model, model, state._tag)
      }
    })
  )
})

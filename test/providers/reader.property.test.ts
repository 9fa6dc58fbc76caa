/**
 * The stream reader, proven on every chunking: a reference answer (text, reasoning, several tool calls, usage,
 * a finish reason) is sent as a chat completions stream in the ways real servers vary it, cut at arbitrary points
 * in its text, reasoning and arguments and at arbitrary bytes of the wire, and read through the real `openai` SDK
 * and `@rolecraft/openai` (over an in-memory `fetch`); what is read equals the reference, part by part.
 *
 * What varies, as servers do (see docs/providers.md): a call's id and name on its first fragment only or on every
 * fragment; the fragments of several calls one call after another or interleaved (each call begun in order); `index` present, absent (Mistral) or the same for calls with distinct ids; later fragments with an
 * empty id (Alibaba); a role-only first chunk, chunks with empty `choices` (Azure's first), usage in a last
 * `choices: []` chunk, on the finishing chunk, on every chunk and growing (Perplexity), inside the choice
 * (Moonshot) or twice (Groq's `x_groq`); with or without `[DONE]`; the finish reason early, late, twice, or
 * followed by a `null` one (OpenRouter); content as a string or as a list of parts; reasoning as
 * `reasoning_content`, `reasoning` or thinking parts.
 *
 * 1,000 runs here; `node scripts/fault-properties.ts` runs 100,000 (READER_RUNS).
 */
import { assert, describe, it } from "@effect/vitest"
import { LanguageModel, type ModelResponse } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { Effect, Redacted, Stream } from "effect"
import * as fc from "fast-check"

const numRuns = Number(process.env.READER_RUNS ?? 1000)
// 1,000 runs take seconds; the nightly 100,000 take minutes (READER_TIMEOUT_MS, set by the script).
const timeout = Number(process.env.READER_TIMEOUT_MS ?? 120_000)

interface Call {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

interface Reference {
  readonly text: string
  readonly reasoning: string
  readonly calls: ReadonlyArray<Call>
  readonly usage: { readonly prompt: number; readonly completion: number }
  readonly finish: "stop" | "length" | "tool_calls"
}

interface Dialect {
  readonly reasoningField: "reasoning_content" | "reasoning" | "thinking"
  readonly contentAsParts: boolean
  readonly idAndName: "first" | "every"
  readonly index: "present" | "absent" | "shared"
  readonly emptyIdLater: boolean
  readonly interleave: boolean
  readonly roleChunk: boolean
  readonly emptyChoices: number
  readonly usage: "last" | "finish" | "cumulative" | "choice" | "twice"
  readonly done: boolean
  readonly finish: "early" | "late" | "twice" | "nullAfter"
}

/** Text with the odd characters a wire carries: multi-byte, astral, quotes, escapes, line ends. */
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom("a", " ", "é", "語", "🙂", '"', "\\", "\n", "\r", "\u2028", "{", "}"),
    fc.string({ maxLength: 1 })
  ),
  maxLength: 30
})

const call = (n: number): fc.Arbitrary<Call> =>
  fc.record({
    id: fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/).map((id) => `call_${n}_${id}`),
    name: fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,10}$/),
    arguments: fc.oneof(fc.constant(""), fc.json({ maxDepth: 2 }), text)
  })

const reference: fc.Arbitrary<Reference> = fc
  .record({
    text,
    reasoning: text,
    calls: fc.integer({ min: 0, max: 4 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => call(i)))),
    usage: fc.record({ prompt: fc.nat({ max: 100_000 }), completion: fc.nat({ max: 100_000 }) }),
    cut: fc.boolean()
  })
  .map(({ cut, ...rest }) => ({ ...rest, finish: rest.calls.length > 0 ? "tool_calls" : cut ? "length" : "stop" }))

const dialect: fc.Arbitrary<Dialect> = fc.record({
  reasoningField: fc.constantFrom("reasoning_content", "reasoning", "thinking"),
  contentAsParts: fc.boolean(),
  idAndName: fc.constantFrom("first", "every"),
  index: fc.constantFrom("present", "absent", "shared"),
  emptyIdLater: fc.boolean(),
  interleave: fc.boolean(),
  roleChunk: fc.boolean(),
  emptyChoices: fc.nat({ max: 2 }),
  usage: fc.constantFrom("last", "finish", "cumulative", "choice", "twice"),
  done: fc.boolean(),
  finish: fc.constantFrom("early", "late", "twice", "nullAfter")
})

/** `value` cut into pieces at the given code-unit points (an empty string stays one empty piece). */
const cutAt = (value: string, points: ReadonlyArray<number>): ReadonlyArray<string> => {
  const at = [...new Set(points.map((point) => point % (value.length + 1)))].sort((a, b) => a - b)
  const pieces: Array<string> = []
  let from = 0
  for (const point of at) {
    if (point > from) pieces.push(value.slice(from, point))
    from = Math.max(from, point)
  }
  pieces.push(value.slice(from))
  return pieces.filter((piece, i) => piece !== "" || (i === 0 && value === ""))
}

type Event =
  | { readonly kind: "text"; readonly piece: string }
  | { readonly kind: "reasoning"; readonly piece: string }
  | { readonly kind: "call"; readonly call: number; readonly piece: string; readonly first: boolean }

/** A stream's deltas: each event one delta, in an order every server could send (see the module's header). */
const deltasOf = (ref: Reference, d: Dialect, cuts: ReadonlyArray<number>, order: ReadonlyArray<number>) => {
  const lanes: Array<Array<Event>> = []
  if (ref.reasoning !== "") lanes.push(cutAt(ref.reasoning, cuts).map((piece) => ({ kind: "reasoning", piece })))
  if (ref.text !== "")
    lanes.push(
      cutAt(
        ref.text,
        cuts.map((c) => c * 7)
      ).map((piece) => ({ kind: "text", piece }))
    )
  // Calls may interleave only when every fragment says which call it is: a distinct index, or its own id.
  const attributable = d.index === "present" || (d.index === "absent" && d.idAndName === "every" && !d.emptyIdLater)
  const callLane = (i: number): Array<Event> =>
    cutAt(
      ref.calls[i]?.arguments ?? "",
      cuts.map((c) => c * 3 + i)
    ).map((piece, k) => ({
      kind: "call",
      call: i,
      piece,
      first: k === 0
    }))
  if (d.interleave && attributable) for (let i = 0; i < ref.calls.length; i++) lanes.push(callLane(i))
  else if (ref.calls.length > 0) lanes.push(ref.calls.flatMap((_, i) => callLane(i)))
  // Merge the lanes in an arbitrary order, each lane's own order kept; calls begin in their order (servers begin
  // call 1 after call 0, even when they interleave their arguments).
  const events: Array<Event> = []
  let begun = 0
  let k = 0
  while (lanes.some((lane) => lane.length > 0)) {
    const open = lanes.filter((lane) => {
      const head = lane[0]
      return head !== undefined && !(head.kind === "call" && head.first && head.call > begun)
    })
    const lane = open[(order[k++ % Math.max(order.length, 1)] ?? 0) % open.length] as Array<Event>
    const event = lane.shift() as Event
    if (event.kind === "call" && event.first) begun += 1
    events.push(event)
  }
  return events.map((event) => deltaOf(event, ref, d))
}

const deltaOf = (event: Event, ref: Reference, d: Dialect): Readonly<Record<string, unknown>> => {
  switch (event.kind) {
    case "text":
      return { content: d.contentAsParts ? [{ type: "text", text: event.piece }] : event.piece }
    case "reasoning":
      return d.reasoningField === "thinking"
        ? { content: [{ type: "thinking", thinking: [{ type: "text", text: event.piece }] }] }
        : { [d.reasoningField]: event.piece, content: d.contentAsParts ? [] : null }
    case "call": {
      const call = ref.calls[event.call] as Call
      const whole = event.first || d.idAndName === "every"
      const id = whole ? call.id : d.emptyIdLater ? "" : undefined
      const fragment = {
        ...(d.index === "present" ? { index: event.call } : d.index === "shared" ? { index: 0 } : {}),
        ...(id === undefined ? {} : { id }),
        ...(whole ? { type: "function" } : {}),
        function: { ...(whole ? { name: call.name } : {}), arguments: event.piece }
      }
      return { tool_calls: [fragment] }
    }
  }
}

const wireUsage = (ref: Reference, share = 1) => {
  const prompt = ref.usage.prompt
  const completion = Math.round(ref.usage.completion * share)
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

/** The whole stream as server-sent events. */
const sseOf = (ref: Reference, d: Dialect, deltas: ReadonlyArray<Readonly<Record<string, unknown>>>, early: number) => {
  type Chunk = Record<string, unknown>
  const base = () => ({ id: "chatcmpl-prop", object: "chat.completion.chunk", created: 1, model: "m" })
  const choice = (delta: Readonly<Record<string, unknown>>, finish: string | null): Chunk => ({
    index: 0,
    delta,
    finish_reason: finish
  })
  const chunks: Array<Chunk> = []
  for (let i = 0; i < d.emptyChoices; i++) chunks.push({ ...base(), id: "", model: "", choices: [], usage: null })
  if (d.roleChunk) chunks.push({ ...base(), choices: [choice({ role: "assistant", content: "" }, null)] })
  // The finish reason on a delta's chunk (early, twice), on a chunk of its own after them (late, twice,
  // nullAfter), and for nullAfter a last chunk whose finish reason is null again.
  const onDelta = d.finish === "early" || d.finish === "twice" ? early % Math.max(deltas.length, 1) : -1
  deltas.forEach((delta, i) => {
    chunks.push({ ...base(), choices: [choice(delta, i === onDelta ? ref.finish : null)] })
  })
  if (d.finish !== "early" || deltas.length === 0) chunks.push({ ...base(), choices: [choice({}, ref.finish)] })
  const finishing = chunks.findLast(
    (chunk) => (chunk.choices as Array<Chunk>)[0]?.finish_reason === ref.finish
  ) as Chunk
  if (d.finish === "nullAfter") chunks.push({ ...base(), usage: wireUsage(ref), choices: [choice({}, null)] })
  const final = wireUsage(ref)
  switch (d.usage) {
    case "cumulative":
      chunks.forEach((chunk, i) => {
        if (chunk.id !== "") chunk.usage = wireUsage(ref, (i + 1) / chunks.length)
      })
      break
    case "finish":
      finishing.usage = final
      break
    case "choice":
      ;(finishing.choices as Array<Chunk>)[0] = { ...(finishing.choices as Array<Chunk>)[0], usage: final }
      break
    case "twice":
      finishing.usage = final
      finishing.x_groq = { id: "req", usage: final }
      chunks.push({ ...base(), choices: [], usage: final })
      break
    case "last":
      chunks.push({ ...base(), choices: [], usage: final })
      break
  }
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + (d.done ? "data: [DONE]\n\n" : "")
}

/** `bytes` as a body arriving in pieces cut at the given byte offsets. */
const bodyOf = (bytes: Uint8Array, cuts: ReadonlyArray<number>) => {
  const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let from = 0
      for (const point of [...at, bytes.length]) {
        if (point > from) controller.enqueue(bytes.slice(from, point))
        from = point
      }
      controller.close()
    }
  })
}

describe("the stream reader, on every chunking", () => {
  it.live(
    `reads every dialect's stream of a reference answer as that answer (${numRuns} runs)`,
    () =>
      Effect.gen(function* () {
        let next: () => ReadableStream<Uint8Array> = () => bodyOf(new Uint8Array(), [])
        const model = yield* Effect.provide(
          Effect.service(LanguageModel.LanguageModel),
          OpenAiLanguageModel.layer({
            model: "m",
            apiKey: Redacted.make("sk-property-key"),
            baseURL: "http://model.invalid/v1",
            fetch: async () => new Response(next(), { headers: { "content-type": "text/event-stream" } })
          })
        )
        const encoder = new TextEncoder()
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(
              reference,
              dialect,
              fc.array(fc.nat(), { maxLength: 8 }),
              fc.array(fc.nat(), { maxLength: 12 }),
              fc.array(fc.nat(), { maxLength: 6 }),
              fc.nat(),
              async (ref, d, cuts, order, byteCuts, early) => {
                const wire = encoder.encode(sseOf(ref, d, deltasOf(ref, d, cuts, order), early))
                next = () =>
                  bodyOf(
                    wire,
                    byteCuts.map((cut) => cut * 13)
                  )
                const parts = await Effect.runPromise(Stream.runCollect(model.stream({ messages: [] })))
                const last = parts.at(-1)
                assert.strictEqual(last?._tag, "Finished")
                const { model: _model, ...response } = (last as Extract<ModelResponse.StreamPart, { _tag: "Finished" }>)
                  .response
                const total = ref.usage.prompt + ref.usage.completion
                assert.deepStrictEqual(response, {
                  text: ref.text,
                  toolCalls: ref.calls,
                  usage: { inputTokens: ref.usage.prompt, outputTokens: ref.usage.completion, totalTokens: total },
                  finishReason: ref.finish,
                  ...(ref.reasoning === "" ? {} : { reasoning: ref.reasoning, reasoningField: d.reasoningField })
                })
                const joined = (tag: string, index?: number) =>
                  parts
                    .filter(
                      (part) => part._tag === tag && (index === undefined || ("index" in part && part.index === index))
                    )
                    .map((part) => ("delta" in part ? part.delta : ""))
                    .join("")
                assert.strictEqual(joined("TextDelta"), ref.text)
                assert.strictEqual(joined("ReasoningDelta"), ref.reasoning)
                const started = parts.filter((part) => part._tag === "ToolCallArgumentsStarted")
                assert.deepStrictEqual(
                  started.map((part) => [part.index, part.id, part.name]).sort((a, b) => Number(a[0]) - Number(b[0])),
                  ref.calls.map((call, i) => [i, call.id, call.name])
                )
                ref.calls.forEach((call, i) => {
                  assert.strictEqual(joined("ToolCallArgumentsDelta", i), call.arguments)
                })
              }
            ),
            { numRuns }
          )
        )
      }),
    timeout
  )
})

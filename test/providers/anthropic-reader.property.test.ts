/**
 * The Anthropic stream reader does not depend on how a response was cut into pieces: every recorded stream of
 * the corpus, its bytes (as the API frames its events) written over a real socket on 127.0.0.1 in pieces cut at
 * arbitrary byte offsets — inside an event, a line ending or a multi-byte character — and read by the real
 * `@anthropic-ai/sdk` through the layer, gives the answer its expectation says: text, reasoning, tool calls,
 * usage, stop reason and the signed thinking blocks.
 */
import { assert, describe, it } from "@effect/vitest"
import { LanguageModel } from "@rolecraft/core"
import { AnthropicLanguageModel } from "@rolecraft/anthropic"
import { LocalHttpServer } from "@rolecraft/testing"
import { Effect, Redacted } from "effect"
import fc from "fast-check"
import * as Corpus from "./anthropicCorpus.ts"

const numRuns = Number(process.env.READER_RUNS ?? 60)

/** Every recorded stream's first response, as the bytes the API sends. */
const streams = Corpus.recordings
  .filter((recording) => recording.expected.kind === "stream")
  .map((recording) => ({
    name: recording.name,
    bytes: Buffer.from(Corpus.framed(Corpus.responsesOf(recording.body)[0] ?? []), "utf8"),
    step: recording.expected.steps[0] as Corpus.Step
  }))

/** `bytes` cut at `offsets` (each taken modulo the length; repeats and order do not matter). */
const piecesOf = (bytes: Buffer, offsets: ReadonlyArray<number>): ReadonlyArray<Buffer> => {
  const cuts = [...new Set(offsets.map((offset) => offset % bytes.length))]
    .filter((cut) => cut > 0)
    .sort((a, b) => a - b)
  const pieces: Array<Buffer> = []
  let from = 0
  for (const cut of [...cuts, bytes.length]) {
    pieces.push(bytes.subarray(from, cut))
    from = cut
  }
  return pieces
}

/** Serves `pieces` as one event stream, each piece written on its own turn of the event loop. */
const serving = (pieces: ReadonlyArray<Buffer>) =>
  LocalHttpServer.serve((request, response) => {
    request.resume()
    request.on("end", () => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      const write = (i: number) => {
        if (i >= pieces.length) {
          response.end()
          return
        }
        response.write(pieces[i])
        setImmediate(() => write(i + 1))
      }
      write(0)
    })
  })

const readWith = (pieces: ReadonlyArray<Buffer>) =>
  Effect.gen(function* () {
    const { url } = yield* serving(pieces)
    const model = yield* Effect.provide(
      Effect.service(LanguageModel.LanguageModel),
      AnthropicLanguageModel.layer({ model: "claude-replay", apiKey: Redacted.make("sk-ant-reader"), baseURL: url })
    )
    return yield* LanguageModel.collect(model.stream({ messages: [{ role: "user", content: "go" }] }))
  }).pipe(Effect.scoped)

describe("the Anthropic stream reader, on every chunking", () => {
  it.live(`reads every recorded stream cut at arbitrary bytes as its expectation says (${numRuns} runs)`, () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...streams),
          fc.array(fc.nat(), { maxLength: 40 }),
          async ({ bytes, step }, offsets) => {
            const response = await Effect.runPromise(readWith(piecesOf(bytes, offsets)))
            assert.strictEqual(response.text, step.text)
            assert.strictEqual(response.reasoning, step.reasoning === "" ? undefined : step.reasoning)
            assert.deepStrictEqual(
              response.toolCalls.map((call) => ({ id: call.id, name: call.name, input: JSON.parse(call.arguments) })),
              step.toolCalls
            )
            assert.deepStrictEqual(response.usage, Corpus.usageOf(step))
            assert.strictEqual(response.finishReason, Corpus.finishOf[step.stopReason ?? ""])
            assert.deepStrictEqual(
              response.providerData,
              step.thinkingBlocks.length === 0 ? undefined : { anthropic: { thinking: step.thinkingBlocks } }
            )
          }
        ),
        { numRuns }
      )
    )
  )
})

/**
 * Every model call is bounded, against real local servers through the real `openai` SDK and `@rolecraft/openai`:
 * C46 — a stream that goes silent, or only sends keep-alive comments, ends at the layer's `timeout` (the whole
 * call) or its `idleTimeout` (between chunks) as TIMEOUT, a non-streamed body that stalls after its headers too,
 * and the HTTP request is aborted; C47 — a reply past `maxReplyCharacters`, in one huge delta, in many small ones,
 * in tool-call arguments or reasoning, or as a huge non-streamed body, fails EXECUTION naming the cap while it is
 * read, and the request is aborted before the server could send it all.
 */
import type * as http from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type Chat, Role } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { Duration, Effect, Exit, Redacted, Schema, Stream } from "effect"
import * as LocalServer from "../../packages/core/test/support/LocalServer.ts"

type Options = Omit<OpenAiLanguageModel.Options, "baseURL" | "apiKey" | "model">

const layerFor = (server: LocalServer.LocalServer, options: Options) =>
  OpenAiLanguageModel.layer({
    model: "gpt-test",
    apiKey: Redacted.make("sk-limits-key"),
    baseURL: `${server.url}/v1`,
    ...options
  })

const chunk = (delta: Readonly<Record<string, unknown>>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

const sseHead = (response: http.ServerResponse) =>
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })

/** Writes `piece` until `total` bytes were written or the client went away (respecting backpressure). */
const pour = (response: http.ServerResponse, piece: string, total: number, end: string, written: { bytes: number }) => {
  const write = () => {
    while (written.bytes < total) {
      if (response.destroyed) return
      written.bytes += Buffer.byteLength(piece)
      if (!response.write(piece)) {
        response.once("drain", write)
        return
      }
    }
    response.end(end)
  }
  write()
}

const agentOf = Effect.gen(function* () {
  const role = Role.make({
    identity: { name: "desk", goal: "Answer", domain: "desk" },
    actions: {
      lookup: Action.local({ description: "Look a word up", parameters: { word: Schema.String }, run: () => "found" }),
      explain: Action.llm({ description: "Answer a question", parameters: { question: Schema.String } })
    }
  })
  return (yield* Agent.make({ id: "limits", roles: [role] })) as unknown as Agent.Agent<any, never>
})

const streamed = (agent: Agent.Agent<any, never>, options?: Chat.ChatStreamOptions) =>
  Stream.runDrain(agent.chatStream("Hi", { maxSteps: 2, ...options }))

/** The typed failure of `effect`, which must end within `within` (a hang fails the test with a clear message). */
const failureWithin = <A, E, R>(effect: Effect.Effect<A, E, R>, within: Duration.Input) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(
      Effect.timeoutOrElse(effect, {
        duration: within,
        orElse: () => Effect.die(new Error(`still running after ${Duration.format(Duration.fromInputUnsafe(within))}`))
      })
    )
    assert.isTrue(Exit.isFailure(exit), String(exit))
    const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
    assert.strictEqual(reason?._tag, "Fail", String(exit))
    return (reason as { readonly error: { readonly category: string; readonly message: string } }).error
  })

describe("C46: a streamed call has a deadline and an idle limit", () => {
  it.live(
    "a stream that sends one chunk and goes silent ends at the layer's timeout, TIMEOUT, the request aborted",
    () =>
      Effect.gen(function* () {
        const server = yield* LocalServer.start((_request, response) => {
          sseHead(response)
          response.write(chunk({ role: "assistant", content: "Hel" }))
        })
        const agent = yield* agentOf
        const error = yield* failureWithin(
          Effect.provide(streamed(agent), layerFor(server, { timeout: "2 seconds" })),
          "15 seconds"
        )
        assert.strictEqual(error.category, "TIMEOUT")
        assert.include(error.message, "did not finish within 2s (timeout)")
        yield* server.waitForAborted(1)
      }).pipe(Effect.scoped)
  )

  it.live("a stream that only sends a keep-alive comment every 200 ms ends at the layer's timeout", () =>
    Effect.gen(function* () {
      const timers: Array<NodeJS.Timeout> = []
      const server = yield* LocalServer.start((_request, response) => {
        sseHead(response)
        response.write(chunk({ role: "assistant", content: "" }))
        timers.push(setInterval(() => response.write(": keep-alive\n\n"), 200))
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => timers.forEach(clearInterval)))
      const agent = yield* agentOf
      const error = yield* failureWithin(
        Effect.provide(streamed(agent), layerFor(server, { timeout: "2 seconds" })),
        "15 seconds"
      )
      assert.strictEqual(error.category, "TIMEOUT")
      yield* server.waitForAborted(1)
    }).pipe(Effect.scoped)
  )

  it.live("the idle limit ends a stream silent between chunks well before the deadline, naming idleTimeout", () =>
    Effect.gen(function* () {
      const server = yield* LocalServer.start((_request, response) => {
        sseHead(response)
        response.write(chunk({ role: "assistant", content: "Hel" }))
        setTimeout(() => response.destroyed || response.write(chunk({ content: "lo" })), 300)
      })
      const agent = yield* agentOf
      const layer = layerFor(server, { timeout: "60 seconds", idleTimeout: "1 second" })
      const error = yield* failureWithin(Effect.provide(streamed(agent), layer), "15 seconds")
      assert.strictEqual(error.category, "TIMEOUT")
      assert.include(error.message, "sent nothing for 1s (idleTimeout)")
      yield* server.waitForAborted(1)
    }).pipe(Effect.scoped)
  )

  it.live("the chat's modelTimeout bounds a streamed step as well", () =>
    Effect.gen(function* () {
      const server = yield* LocalServer.start((_request, response) => {
        sseHead(response)
        response.write(chunk({ role: "assistant", content: "Hel" }))
      })
      const agent = yield* agentOf
      const error = yield* failureWithin(
        Effect.provide(streamed(agent, { modelTimeout: "1 second" }), layerFor(server, {})),
        "15 seconds"
      )
      assert.strictEqual(error.category, "TIMEOUT")
      yield* server.waitForAborted(1)
    }).pipe(Effect.scoped)
  )

  it.live("a non-streamed answer whose body stalls after its headers ends at the timeout (an llm action)", () =>
    Effect.gen(function* () {
      const server = yield* LocalServer.start((_request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.write(
          '{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hel'
        )
      })
      const agent = yield* agentOf
      const error = yield* failureWithin(
        Effect.provide(agent.executeAction("explain", { question: "Hi?" }), layerFor(server, { timeout: "2 seconds" })),
        "15 seconds"
      )
      assert.strictEqual(error.category, "TIMEOUT")
      yield* server.waitForAborted(1)
    }).pipe(Effect.scoped)
  )
})

describe("C47: a reply's size is capped while it is read", () => {
  const cap = { maxReplyCharacters: 100_000 }

  it.live("one 50 MB text delta: EXECUTION naming the cap, the stream aborted before it was all sent", () =>
    Effect.gen(function* () {
      const written = { bytes: 0 }
      const total = 50 * 1024 * 1024
      const server = yield* LocalServer.start((_request, response) => {
        sseHead(response)
        response.write(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"`)
        pour(response, "x".repeat(64 * 1024), total, '"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n', written)
      })
      const agent = yield* agentOf
      const error = yield* failureWithin(Effect.provide(streamed(agent), layerFor(server, cap)), "20 seconds")
      assert.strictEqual(error.category, "EXECUTION")
      assert.include(error.message, "larger than maxReplyCharacters (100,000 characters)")
      yield* server.waitForAborted(1, 5000)
      assert.isBelow(written.bytes, total / 2)
    }).pipe(Effect.scoped)
  )

  it.live("many small deltas past the cap, in text, tool-call arguments or reasoning: EXECUTION, aborted", () =>
    Effect.gen(function* () {
      const deltas: ReadonlyArray<(piece: string) => Readonly<Record<string, unknown>>> = [
        (piece) => ({ content: piece }),
        (piece) => ({ reasoning_content: piece }),
        (piece) => ({ tool_calls: [{ index: 0, id: "call_1", function: { name: "lookup", arguments: piece } }] })
      ]
      const server = yield* LocalServer.start((request, response) => {
        const make = deltas[server.received.length - 1] as (piece: string) => Readonly<Record<string, unknown>>
        void request
        sseHead(response)
        pour(response, chunk(make("y".repeat(1000))), 50 * 1024 * 1024, "data: [DONE]\n\n", { bytes: 0 })
      })
      const agent = yield* agentOf
      for (let i = 0; i < deltas.length; i++) {
        const error = yield* failureWithin(Effect.provide(streamed(agent), layerFor(server, cap)), "20 seconds")
        assert.strictEqual(error.category, "EXECUTION")
        assert.include(error.message, "larger than maxReplyCharacters (100,000 characters")
        yield* server.waitForAborted(i + 1, 5000)
      }
    }).pipe(Effect.scoped)
  )

  it.live("a 200 MB non-streamed completion: EXECUTION naming the cap, the body aborted (chat and llm action)", () =>
    Effect.gen(function* () {
      const total = 200 * 1024 * 1024
      const writes: Array<{ bytes: number }> = []
      const server = yield* LocalServer.start((_request, response) => {
        const written = { bytes: 0 }
        writes.push(written)
        response.writeHead(200, { "content-type": "application/json" })
        response.write(
          '{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"'
        )
        pour(response, "z".repeat(64 * 1024), total, '"},"finish_reason":"stop"}]}', written)
      })
      const agent = yield* agentOf
      const layer = layerFor(server, cap)
      for (const call of [agent.chat("Hi"), agent.executeAction("explain", { question: "Hi?" })]) {
        const error = yield* failureWithin(Effect.provide(call, layer), "20 seconds")
        assert.strictEqual(error.category, "EXECUTION")
        assert.include(error.message, "larger than maxReplyCharacters (100,000 characters)")
      }
      yield* server.waitForAborted(2, 5000)
      for (const written of writes) assert.isBelow(written.bytes, total / 4)
    }).pipe(Effect.scoped)
  )

  it.live("a reply under the cap, streamed in many chunks, is read whole", () =>
    Effect.gen(function* () {
      const server = yield* LocalServer.start((_request, response) => {
        sseHead(response)
        for (let i = 0; i < 500; i++) response.write(chunk({ content: "a".repeat(100) }))
        response.end(`${chunk({}, "stop")}data: [DONE]\n\n`)
      })
      const agent = yield* agentOf
      const events: Array<Chat.ChatEvent> = []
      yield* Effect.provide(
        Stream.runForEach(agent.chatStream("Hi"), (event) => Effect.sync(() => events.push(event))),
        layerFor(server, cap)
      )
      const result = (events.at(-1) as Extract<Chat.ChatEvent, { _tag: "TurnFinished" }>).result as Chat.Completed
      assert.strictEqual(result.text.length, 50_000)
    }).pipe(Effect.scoped)
  )
})

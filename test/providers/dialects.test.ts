/**
 * What providers send differently, on the wire, through the real `openai` SDK and `@rolecraft/openai` against a
 * local server: Mistral's stream (C57: tool-call fragments without `index`, content as a list of parts), reasoning
 * in every field providers send it (C58: its own part and event, kept on the assistant message, sent back only
 * where the dialect needs it), an error event inside a stream answered 200, and which failures a chat turn's retry
 * policy retries. Recorded traffic (test/fixtures/providers) where the corpus has it; the in-stream error events
 * are written here in OpenRouter's and OpenAI's shapes (the corpus holds none).
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type Chat, Role } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { Effect, Exit, Redacted, Schema, Stream } from "effect"
import * as Corpus from "./corpus.ts"

const recording = (name: string): Corpus.Recording => {
  const found = Corpus.recordings.find((entry) => entry.name === name)
  if (found === undefined) throw new Error(`no recording ${name}`)
  return found
}

const layerFor = (url: string) =>
  OpenAiLanguageModel.layer({ model: "gpt-test", apiKey: Redacted.make("sk-dialect-key"), baseURL: `${url}/v1` })

const weatherAgent = Effect.gen(function* () {
  const ran: Array<unknown> = []
  const role = Role.make({
    identity: { name: "forecaster", goal: "Tell the weather", domain: "weather" },
    actions: {
      weather: Action.local({
        description: "The weather in a place",
        parameters: { location: Schema.optional(Schema.String), city: Schema.optional(Schema.String) },
        run: (params) => {
          ran.push(params)
          return { sky: "clear" }
        }
      }),
      explain: Action.llm({ description: "Answer a question", parameters: { question: Schema.String } })
    }
  })
  const agent = yield* Agent.make({ id: "dialects", roles: [role] })
  return { agent: agent as unknown as Agent.Agent<any, never>, ran }
})

const streamTurn = (agent: Agent.Agent<any, never>, options?: Chat.ChatStreamOptions) => {
  const events: Array<Chat.ChatEvent> = []
  return Effect.map(
    Stream.runForEach(agent.chatStream("What is the weather?", { maxSteps: 3, ...options }), (event) =>
      Effect.sync(() => events.push(event))
    ),
    () => events
  )
}

const failureOf = (exit: Exit.Exit<unknown, unknown>) => {
  assert.isTrue(Exit.isFailure(exit), String(exit))
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  assert.strictEqual(reason?._tag, "Fail", `a typed failure, not a defect: ${String(exit)}`)
  return (
    reason as { readonly error: { readonly category: string; readonly message: string; readonly status?: number } }
  ).error
}

describe("C57: Mistral's stream and content parts", () => {
  it.live("a streamed tool call without `index` runs and is answered under its id", () =>
    Effect.gen(function* () {
      const server = yield* Corpus.serve([
        Corpus.replay(recording("mistral/mistral-tool-call.chunks.txt")),
        Corpus.done(true)
      ])
      const { agent, ran } = yield* weatherAgent
      const events = yield* Effect.provide(streamTurn(agent), layerFor(server.url))
      const finished = events.at(-1) as Extract<Chat.ChatEvent, { _tag: "TurnFinished" }>
      assert.strictEqual(finished.result._tag, "Completed")
      assert.deepStrictEqual(ran, [{ location: "San Francisco" }])
      const sent = Corpus.requestsOf(server)[1]?.messages
      assert.deepStrictEqual(
        sent?.flatMap((message) => message.tool_calls ?? []).map((call) => call.id),
        ["gSIMJiOkT"]
      )
      assert.deepStrictEqual(
        sent?.filter((message) => message.role === "tool").map((message) => message.tool_call_id),
        ["gSIMJiOkT"]
      )
    }).pipe(Effect.scoped)
  )

  it.live("content as a list of thinking and text parts: the text is the answer, the thinking is reasoning", () =>
    Effect.gen(function* () {
      const server = yield* Corpus.serve([
        Corpus.replay(recording("mistral/mistral-reasoning.json")),
        Corpus.replay(recording("mistral/mistral-reasoning.chunks.txt")),
        Corpus.replay(recording("mistral/mistral-reasoning.json"))
      ])
      const { agent } = yield* weatherAgent
      const layer = layerFor(server.url)
      const chat = (yield* Effect.provide(agent.chat("2+2?"), layer)) as Chat.Completed
      assert.strictEqual(chat.text, "2 + 2 = 4")
      assert.strictEqual(chat.reasoning, "The user is asking for 2+2. This is basic arithmetic. 2+2=4.")
      const events = yield* Effect.provide(streamTurn(agent), layer)
      const text = events.flatMap((event) => (event._tag === "TextDelta" ? [event.delta] : [])).join("")
      const thought = events.flatMap((event) => (event._tag === "ReasoningDelta" ? [event.delta] : [])).join("")
      assert.strictEqual(text, "2 + 2 = 4")
      assert.include(thought, "2+2=4")
      // an llm action answers with the text alone
      assert.strictEqual(
        yield* Effect.provide(agent.executeAction("explain", { question: "2+2?" }), layer),
        "2 + 2 = 4"
      )
    }).pipe(Effect.scoped)
  )
})

describe("C58: reasoning is its own part, kept, and sent back where the dialect needs it", () => {
  it.live(
    "DeepSeek's reasoning_content: ReasoningDelta events, kept on the message, sent back with its tool call",
    () =>
      Effect.gen(function* () {
        const stream = recording("deepseek/deepseek-tool-call.chunks.txt")
        const server = yield* Corpus.serve([Corpus.replay(stream), Corpus.done(true)])
        const { agent } = yield* weatherAgent
        const events = yield* Effect.provide(streamTurn(agent), layerFor(server.url))
        const thought = events.flatMap((event) => (event._tag === "ReasoningDelta" ? [event.delta] : [])).join("")
        assert.strictEqual(thought, stream.expected.reasoning)
        const text = events.flatMap((event) => (event._tag === "TextDelta" ? [event.delta] : [])).join("")
        assert.strictEqual(text, "done", "reasoning never mixed into the answer")
        const finished = (events.at(-1) as Extract<Chat.ChatEvent, { _tag: "TurnFinished" }>).result as Chat.Completed
        const kept = finished.messages.find((message) => message.role === "assistant")
        assert.strictEqual(kept?.role === "assistant" ? kept.reasoning : undefined, stream.expected.reasoning)
        const sent = Corpus.requestsOf(server)[1]?.messages.find((message) => message.role === "assistant")
        assert.strictEqual(sent?.reasoning_content, stream.expected.reasoning)
      }).pipe(Effect.scoped)
  )

  it.live(
    "reasoning a provider sends as `reasoning` (Groq, Cerebras) is kept but not sent back: they refuse the field",
    () =>
      Effect.gen(function* () {
        const reply = recording("cerebras/cerebras-structured-output-tools.1.json")
        const server = yield* Corpus.serve([Corpus.replay(reply), Corpus.done(false)])
        const role = Role.make({
          identity: { name: "tools", goal: "Help", domain: "any" },
          actions: {
            nonUsefulTool: Action.local({
              description: "Does nothing useful",
              parameters: { reason: Schema.optional(Schema.Unknown) },
              run: () => "nothing"
            })
          }
        })
        const agent = yield* Agent.make({ id: "cerebras", roles: [role] })
        const result = (yield* Effect.provide(
          agent.chat("go", { maxSteps: 3 }),
          layerFor(server.url)
        )) as Chat.Completed
        const kept = result.messages.find((message) => message.role === "assistant")
        assert.strictEqual(kept?.role === "assistant" ? kept.reasoning : undefined, reply.expected.reasoning)
        assert.strictEqual(kept?.role === "assistant" ? kept.reasoningField : undefined, "reasoning")
        const sent = Corpus.requestsOf(server)[1]?.messages.find((message) => message.role === "assistant") as
          | Readonly<Record<string, unknown>>
          | undefined
        assert.isDefined(sent?.tool_calls)
        assert.notProperty(sent, "reasoning_content")
        assert.notProperty(sent, "reasoning")
      }).pipe(Effect.scoped)
  )

  it.live("an llm action's answer is the text, never the reasoning", () =>
    Effect.gen(function* () {
      const reply = recording("deepseek/deepseek-reasoning.json")
      const server = yield* Corpus.serve([Corpus.replay(reply)])
      const { agent } = yield* weatherAgent
      const answer = yield* Effect.provide(
        agent.executeAction("explain", { question: "r in strawberry?" }),
        layerFor(server.url)
      )
      assert.strictEqual(answer, reply.expected.text)
    }).pipe(Effect.scoped)
  )
})

describe("OpenRouter's and OpenAI's shapes the corpus lacks", () => {
  it.live(
    "url_citation annotations are citations; reasoning_details does not double the reasoning; comments pass",
    () =>
      Effect.gen(function* () {
        const annotation = {
          type: "url_citation",
          url_citation: {
            url: "https://example.com/a",
            title: "A",
            content: "An excerpt",
            start_index: 0,
            end_index: 5
          }
        }
        const server = yield* Corpus.serve([
          (response) => {
            // OpenRouter: comments while processing, `reasoning` with its copy in `reasoning_details`, annotations first
            response.writeHead(200, { "content-type": "text/event-stream" })
            response.write(": OPENROUTER PROCESSING\n\n")
            const chunk = (delta: object, finish: string | null = null) =>
              `data: ${JSON.stringify({ id: "gen-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
            response.write(chunk({ role: "assistant", content: "", annotations: [annotation] }))
            response.write(
              chunk({
                role: "assistant",
                reasoning: "Look it up.",
                reasoning_details: [{ type: "reasoning.text", text: "Look it up." }]
              })
            )
            response.write(": OPENROUTER PROCESSING\n\n")
            response.write(chunk({ role: "assistant", content: "It is A." }, "stop"))
            response.end("data: [DONE]\n\n")
          },
          // OpenAI: annotations on the message of a whole answer
          Corpus.body(
            JSON.stringify({
              id: "chatcmpl-1",
              object: "chat.completion",
              choices: [
                {
                  index: 0,
                  message: { role: "assistant", content: "It is A.", annotations: [annotation] },
                  finish_reason: "stop"
                }
              ]
            })
          )
        ])
        const { agent } = yield* weatherAgent
        const layer = layerFor(server.url)
        const events = yield* Effect.provide(streamTurn(agent), layer)
        const streamed = (events.at(-1) as Extract<Chat.ChatEvent, { _tag: "TurnFinished" }>).result as Chat.Completed
        const cited = [{ url: "https://example.com/a", title: "A", content: "An excerpt", startIndex: 0, endIndex: 5 }]
        assert.strictEqual(streamed.text, "It is A.")
        assert.strictEqual(streamed.reasoning, "Look it up.")
        assert.deepStrictEqual(streamed.citations, cited)
        const generated = (yield* Effect.provide(agent.chat("Which?"), layer)) as Chat.Completed
        assert.deepStrictEqual(generated.citations, cited)
      }).pipe(Effect.scoped)
  )
})

/** A stream that sends `before` chunks, then an error event (a top-level `error`), as a server answering 200. */
const errorInStream = (error: Readonly<Record<string, unknown>>): Corpus.Answer =>
  Corpus.sse(
    [
      {
        id: "gen-1",
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta: { role: "assistant", content: "Let" } }]
      },
      {
        id: "gen-1",
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta: {}, finish_reason: "error" }],
        error
      }
    ]
      .map((chunk) => JSON.stringify(chunk))
      .join("\n"),
    { done: false }
  )

describe("an error event inside a stream answered 200", () => {
  it.live("is classified by its code when that is an HTTP status, else by its type", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [Readonly<Record<string, unknown>>, string, number | undefined]> = [
        // OpenRouter: the upstream provider failed (numeric code), or the request was refused
        [{ code: 502, message: "Provider returned error" }, "TRANSIENT", 502],
        [{ code: 429, message: "Rate limit exceeded upstream" }, "TRANSIENT", 429],
        [{ code: 400, message: "Input is too long" }, "EXECUTION", 400],
        // OpenAI: a server error in the middle of a stream
        [
          { message: "The server had an error while processing your request.", type: "server_error" },
          "TRANSIENT",
          undefined
        ],
        [{ message: "Invalid prompt", type: "invalid_request_error", code: "invalid_prompt" }, "EXECUTION", undefined]
      ]
      const server = yield* Corpus.serve(cases.map(([error]) => errorInStream(error)))
      const { agent } = yield* weatherAgent
      for (const [error, category, status] of cases) {
        const failure = failureOf(yield* Effect.exit(Effect.provide(streamTurn(agent), layerFor(server.url))))
        assert.strictEqual(failure.category, category, failure.message)
        assert.strictEqual(failure.status, status)
        assert.include(failure.message, String(error.message))
      }
    }).pipe(Effect.scoped)
  )

  it.live("a transient one is retried by the turn's retry policy; the retried step streams again", () =>
    Effect.gen(function* () {
      const server = yield* Corpus.serve([
        errorInStream({ code: 502, message: "Provider returned error" }),
        Corpus.replay(recording("xai/xai-text.chunks.txt"))
      ])
      const { agent } = yield* weatherAgent
      const events = yield* Effect.provide(
        streamTurn(agent, { retry: { maxAttempts: 1, initialDelay: "1 millis" } }),
        layerFor(server.url)
      )
      const result = (events.at(-1) as Extract<Chat.ChatEvent, { _tag: "TurnFinished" }>).result as Chat.Completed
      assert.strictEqual(result.text, recording("xai/xai-text.chunks.txt").expected.text)
      assert.strictEqual(events.filter((event) => event._tag === "StepStarted").length, 2)
      assert.strictEqual(server.received.length, 2)
    }).pipe(Effect.scoped)
  )
})

describe("which failures a chat turn retries", () => {
  const ok = recording("openai/issue-15789-step-2.chunks.txt")
  const refusal = recording("openai/reasoning-model-legacy-parameter-error.json")
  const cases: ReadonlyArray<readonly [string, Corpus.Answer, boolean]> = [
    ["429 with retry-after-ms", Corpus.body(refusal.body, 429, { "retry-after-ms": "5" }), true],
    ["408", Corpus.body(refusal.body, 408), true],
    ["500", Corpus.body(refusal.body, 500), true],
    ["503 with Retry-After: 0", Corpus.body(refusal.body, 503, { "retry-after": "0" }), true],
    ["a connection closed before any answer", (response) => response.socket?.destroy(), true],
    ["400 (the recorded refusal)", Corpus.body(refusal.body, 400), false],
    ["401", Corpus.body(refusal.body, 401), false],
    ["404", Corpus.body(refusal.body, 404), false]
  ]
  for (const [name, first, retried] of cases) {
    it.live(`${name}: ${retried ? "retried, then the recorded answer" : "not retried"}`, () =>
      Effect.gen(function* () {
        const server = yield* Corpus.serve([first, Corpus.replay(ok)])
        const { agent } = yield* weatherAgent
        const exit = yield* Effect.exit(
          Effect.provide(
            streamTurn(agent, { retry: { maxAttempts: 2, initialDelay: "1 millis" } }),
            layerFor(server.url)
          )
        )
        if (retried) {
          assert.isTrue(Exit.isSuccess(exit), String(exit))
          assert.strictEqual(server.received.length, 2)
        } else {
          const failure = failureOf(exit)
          assert.strictEqual(failure.category, "EXECUTION")
          assert.include(failure.message, "Unsupported parameter: 'max_tokens'")
          assert.strictEqual(server.received.length, 1)
        }
      }).pipe(Effect.scoped)
    )
  }
})

/**
 * Recorded real traffic of OpenAI-compatible providers (test/fixtures/providers: the AI SDK's recorded fixtures,
 * see SOURCES.md), replayed from a local HTTP server on 127.0.0.1 to the real `openai` SDK through
 * `@rolecraft/openai`. Each recording runs as a model call (streamed when it was recorded as a stream) and inside
 * a chat turn (`agent.chat`, or `agent.chatStream` for a stream) with a local action for every tool it calls, and
 * is checked against its expectation file — written from the recording, not from Rolecraft: text, every tool call
 * (id, name, arguments), usage, finish reason, refusal, reasoning and citations. Error bodies are served with their
 * status and with every odd status a server sends; each ends in its category, and is retried when it should be.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type Chat, LanguageModel, type ModelResponse, Role } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { Effect, Exit, Redacted, Schema, Stream } from "effect"
import * as Corpus from "./corpus.ts"

const layerFor = (baseURL: string) =>
  OpenAiLanguageModel.layer({
    model: "gpt-test",
    apiKey: Redacted.make("sk-corpus-key"),
    baseURL,
    timeout: "10 seconds"
  })

const ask: LanguageModel.Request = { messages: [{ role: "user", content: "go" }], action: "corpus" }

const known = new Set(["stop", "length", "tool_calls", "content_filter"])

/** The finish reason a recorded one reads as. */
const finishOf = (expected: Corpus.Expectation): ModelResponse.FinishReason =>
  expected.finishReason === null
    ? expected.toolCalls.length > 0
      ? "tool_calls"
      : "stop"
    : known.has(expected.finishReason)
      ? (expected.finishReason as ModelResponse.FinishReason)
      : "other"

const fields: Readonly<Record<string, string>> = {
  reasoning_content: "reasoning_content",
  reasoning: "reasoning",
  "content[].thinking": "thinking"
}

/** The citations a recording's `citations` (URLs) and `url_citation` annotations read as. */
const citationsOf = (expected: Corpus.Expectation): ReadonlyArray<ModelResponse.Citation> | undefined => {
  const citations: Array<ModelResponse.Citation> = []
  for (const annotation of expected.annotations ?? []) {
    const body = (annotation.url_citation ?? annotation) as Readonly<Record<string, unknown>>
    if (annotation.type !== "url_citation" || typeof body.url !== "string") continue
    citations.push({
      url: body.url,
      ...(typeof body.title === "string" ? { title: body.title } : {}),
      ...(typeof body.content === "string" ? { content: body.content } : {}),
      ...(typeof body.start_index === "number" ? { startIndex: body.start_index } : {}),
      ...(typeof body.end_index === "number" ? { endIndex: body.end_index } : {})
    })
  }
  for (const url of expected.citations ?? []) citations.push({ url })
  return citations.length === 0 ? undefined : citations
}

/** The answer a recording's expectation describes, as `ModelResponse.Response` (its `model` aside). */
const responseOf = (expected: Corpus.Expectation): Omit<ModelResponse.Response, "model"> => {
  const reasoning = expected.reasoning === null || expected.reasoning === "" ? undefined : expected.reasoning
  const usage = expected.usage
  const citations = citationsOf(expected)
  return {
    text: expected.text,
    toolCalls: expected.toolCalls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
    usage: {
      inputTokens: usage?.promptTokens ?? 0,
      outputTokens: usage?.completionTokens ?? 0,
      totalTokens: usage?.totalTokens ?? (usage?.promptTokens ?? 0) + (usage?.completionTokens ?? 0),
      // The details the recording sent, as parts of the totals (never added to them).
      ...(typeof usage?.cachedTokens === "number" ? { cachedInputTokens: usage.cachedTokens } : {}),
      ...(typeof usage?.reasoningTokens === "number" ? { reasoningTokens: usage.reasoningTokens } : {})
    },
    finishReason: finishOf(expected),
    ...(expected.refusal === null ? {} : { refusal: expected.refusal }),
    ...(reasoning === undefined
      ? {}
      : { reasoning, reasoningField: fields[expected.reasoningSources[0] ?? ""] ?? "unknown" }),
    ...(citations === undefined ? {} : { citations })
  }
}

const withoutModel = ({ model: _model, ...rest }: ModelResponse.Response) => rest

const joined = (parts: ReadonlyArray<{ readonly _tag: string; readonly delta?: string }>, tag: string) =>
  parts
    .filter((part) => part._tag === tag)
    .map((part) => part.delta)
    .join("")

const failureOf = (exit: Exit.Exit<unknown, unknown>) => {
  assert.isTrue(Exit.isFailure(exit), String(exit))
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  assert.strictEqual(reason?._tag, "Fail", `a typed failure, not a defect: ${String(exit)}`)
  return (reason as { readonly error: { readonly category: string; readonly message: string } }).error as {
    readonly category: string
    readonly message: string
    readonly status?: number
    readonly retryAfter?: unknown
  }
}

const answers = Corpus.recordings.filter((recording) => recording.expected.kind !== "error")
const errors = Corpus.recordings.filter((recording) => recording.expected.kind === "error")

describe("the recorded corpus", () => {
  it("holds at least 40 recordings from at least 8 providers", () => {
    const providers = new Set(Corpus.recordings.map((recording) => recording.expected.provider))
    assert.isAtLeast(Corpus.recordings.length, 40)
    assert.isAtLeast(providers.size, 8)
  })
})

describe("every recorded answer, as a model call", () => {
  for (const recording of answers) {
    it.live(recording.name, () =>
      Effect.gen(function* () {
        const server = yield* Corpus.serve([Corpus.replay(recording)])
        const model = yield* Effect.provide(Effect.service(LanguageModel.LanguageModel), layerFor(`${server.url}/v1`))
        const expected = responseOf(recording.expected)
        if (recording.expected.kind === "stream") {
          const parts = yield* Stream.runCollect(model.stream(ask))
          const last = parts.at(-1)
          assert.strictEqual(last?._tag, "Finished")
          const response = (last as Extract<ModelResponse.StreamPart, { _tag: "Finished" }>).response
          assert.deepStrictEqual(withoutModel(response), expected)
          assert.strictEqual(joined(parts, "TextDelta"), recording.expected.text)
          assert.strictEqual(joined(parts, "ReasoningDelta"), expected.reasoning ?? "")
          const started = parts.filter((part) => part._tag === "ToolCallArgumentsStarted")
          assert.deepStrictEqual(
            started.map((part) => [part.id, part.name]),
            expected.toolCalls.map((call) => [call.id, call.name])
          )
        } else {
          assert.deepStrictEqual(withoutModel(yield* model.generate(ask)), expected)
        }
        assert.strictEqual(Corpus.requestsOf(server)[0]?.stream === true, recording.expected.kind === "stream")
      }).pipe(Effect.scoped)
    )
  }
})

/** An agent with one local action for every tool a recording calls, recording the arguments each call got. */
const agentFor = (recording: Corpus.Recording) => {
  const ran: Array<readonly [string, unknown]> = []
  const actions: Record<string, Action.Any> = {}
  for (const call of recording.expected.toolCalls) {
    const keys = Object.keys(call.arguments.trim() === "" ? {} : (JSON.parse(call.arguments) as object))
    actions[call.name] = Action.local({
      description: `The recorded ${call.name} tool`,
      parameters: Object.fromEntries(keys.map((key) => [key, Schema.optional(Schema.Unknown)])),
      run: (params: unknown) => {
        ran.push([call.name, params])
        return { ok: true }
      }
    })
  }
  const role = Role.make({ identity: { name: "replay", goal: "Answer", domain: "corpus" }, actions })
  return Effect.map(Agent.make({ id: "corpus", roles: [role] }), (agent) => ({
    agent: agent as unknown as Agent.Agent<any, never>,
    ran
  }))
}

describe("every recorded answer, inside a chat turn", () => {
  for (const recording of answers) {
    const streamed = recording.expected.kind === "stream"
    it.live(`${recording.name} (${streamed ? "agent.chatStream" : "agent.chat"})`, () =>
      Effect.gen(function* () {
        const expected = responseOf(recording.expected)
        const calls = expected.toolCalls
        const server = yield* Corpus.serve(
          calls.length === 0 ? [Corpus.replay(recording)] : [Corpus.replay(recording), Corpus.done(streamed)]
        )
        const { agent, ran } = yield* agentFor(recording)
        const events: Array<Chat.ChatEvent> = []
        const turn = streamed
          ? Effect.map(
              Stream.runForEach(agent.chatStream("go", { maxSteps: 3 }), (event) =>
                Effect.sync(() => events.push(event))
              ),
              () => (events.at(-1) as Extract<Chat.ChatEvent, { _tag: "TurnFinished" }>).result
            )
          : agent.chat("go", { maxSteps: 3 })
        const result = yield* Effect.provide(turn, layerFor(`${server.url}/v1`))
        assert.strictEqual(result._tag, "Completed", JSON.stringify(result))
        const completed = result as Chat.Completed
        // The recorded step is kept in the history as it was answered: its text, calls and reasoning.
        const assistant = completed.messages.find((message) => message.role === "assistant")
        assert.deepStrictEqual<unknown>(assistant, {
          role: "assistant",
          content: expected.text,
          ...(calls.length === 0 ? {} : { toolCalls: calls }),
          ...(expected.reasoning === undefined
            ? {}
            : { reasoning: expected.reasoning, reasoningField: expected.reasoningField })
        })
        if (streamed) {
          const first = events.filter((event) => "step" in event && event.step === 1)
          assert.strictEqual(joined(first as never, "TextDelta"), expected.text)
          assert.strictEqual(joined(first as never, "ReasoningDelta"), expected.reasoning ?? "")
          assert.deepStrictEqual(
            first.flatMap((event) =>
              event._tag === "ToolCallArgumentsStarted" ? [[event.toolCallId, event.tool]] : []
            ),
            calls.map((call) => [call.id, call.name])
          )
        }
        if (calls.length === 0) {
          assert.strictEqual(completed.text, expected.text)
          assert.strictEqual(completed.finishReason, expected.finishReason)
          assert.strictEqual(completed.reasoning, expected.reasoning)
          assert.deepStrictEqual(completed.citations, expected.citations)
          assert.deepStrictEqual(completed.usage, expected.usage)
          return
        }
        // Every recorded call ran with its arguments, and went back to the model under its id, reasoning included
        // where the dialect needs it (reasoning_content), answered by one tool message.
        assert.strictEqual(completed.text, "done")
        assert.deepStrictEqual(
          ran.map(([name, params]) => JSON.stringify([name, params])).sort(),
          calls.map((call) => JSON.stringify([call.name, JSON.parse(call.arguments)])).sort()
        )
        const next = Corpus.requestsOf(server)[1]
        const sent = next?.messages.find((message) => message.role === "assistant")
        assert.deepStrictEqual(
          sent?.tool_calls?.map((call) => ({
            id: call.id,
            name: call.function.name,
            arguments: call.function.arguments
          })),
          calls
        )
        assert.strictEqual(
          sent?.reasoning_content,
          expected.reasoningField === "reasoning_content" ? expected.reasoning : undefined
        )
        assert.deepStrictEqual(
          next?.messages.filter((message) => message.role === "tool").map((message) => message.tool_call_id),
          calls.map((call) => call.id)
        )
      }).pipe(Effect.scoped)
    )
  }
})

const transient = [408, 429, 500, 502, 503, 504]
const refused = [400, 401, 403, 404, 409, 422]

describe("every recorded error body, under every status a server answers with", () => {
  for (const recording of errors) {
    const message = recording.expected.error?.[0]?.message ?? ""
    it.live(recording.name, () =>
      Effect.gen(function* () {
        const statuses = [Corpus.statusOf(recording), ...transient, ...refused]
        const server = yield* Corpus.serve(
          statuses.map((status) =>
            Corpus.body(recording.body, status, status === 429 ? { "retry-after-ms": "1500" } : undefined)
          )
        )
        const model = yield* Effect.provide(Effect.service(LanguageModel.LanguageModel), layerFor(`${server.url}/v1`))
        for (const status of statuses) {
          const error = failureOf(yield* Effect.exit(model.generate(ask)))
          const category = transient.includes(status) ? "TRANSIENT" : "EXECUTION"
          assert.strictEqual(error.category, category, `${status}: ${error.message}`)
          assert.strictEqual(error.status, status)
          assert.include(error.message, message.slice(0, 120))
          if (status === 429)
            assert.deepStrictEqual(error.retryAfter, LanguageModel.retryAfter({ "retry-after-ms": "1500" }, 0))
        }
      }).pipe(Effect.scoped)
    )
  }
})

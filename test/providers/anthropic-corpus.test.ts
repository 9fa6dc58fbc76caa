/**
 * The recorded Anthropic corpus, replayed through the real `@anthropic-ai/sdk` from 127.0.0.1: each recording
 * (a whole message or a stream) as a model call, and as the first step of `agent.chat` (a whole message) or
 * `agent.chatStream` (a stream), checked against its expectation — the text, the thinking as reasoning, the
 * signed thinking blocks kept for the next request, the tool calls, the usage in the one convention, the stop
 * reason and a refusal — and, for a step that called tools, the next request: the assistant message sent back
 * with its thinking blocks unchanged and first, its calls under their ids, and every result in one user message.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type Chat, LanguageModel, type ModelResponse, Role } from "@rolecraft/core"
import { AnthropicLanguageModel } from "@rolecraft/anthropic"
import { MessagesServer } from "@rolecraft/testing"
import { Effect, Redacted, Schema, Stream } from "effect"
import * as Corpus from "./anthropicCorpus.ts"

const layerFor = (baseURL: string) =>
  AnthropicLanguageModel.layer({
    model: "claude-replay",
    apiKey: Redacted.make("sk-ant-corpus-key"),
    baseURL,
    timeout: "10 seconds"
  })

const ask: LanguageModel.Request = { messages: [{ role: "user", content: "go" }] }

const joined = (parts: ReadonlyArray<ModelResponse.StreamPart>, tag: "TextDelta" | "ReasoningDelta") =>
  parts.flatMap((part) => (part._tag === tag ? [part.delta] : [])).join("")

const recorded = Corpus.recordings.filter((recording) => recording.expected.provenance === "recorded")

/** The parts of a response a recording says, checked one by one. */
const check = (response: ModelResponse.Response, expected: Corpus.Step) => {
  assert.strictEqual(response.text, expected.text)
  assert.strictEqual(response.reasoning, expected.reasoning === "" ? undefined : expected.reasoning)
  assert.deepStrictEqual(
    response.toolCalls.map((call) => ({ id: call.id, name: call.name, input: JSON.parse(call.arguments) })),
    expected.toolCalls
  )
  assert.deepStrictEqual(response.usage, Corpus.usageOf(expected))
  assert.strictEqual(response.finishReason, Corpus.finishOf[expected.stopReason ?? ""])
  assert.deepStrictEqual(
    response.providerData,
    expected.thinkingBlocks.length === 0 ? undefined : { anthropic: { thinking: expected.thinkingBlocks } }
  )
  if (expected.stopReason === "refusal") {
    assert.strictEqual(response.refusal, expected.stopDetails?.explanation ?? "The model declined to answer.")
  } else assert.isUndefined(response.refusal)
  if (expected.model !== null) assert.strictEqual(response.model, expected.model)
}

describe("the recorded Anthropic corpus", () => {
  it("holds at least 25 recordings, streams and whole messages, with thinking, tool calls and cache reads", () => {
    assert.isAtLeast(recorded.length, 25)
    const kinds = new Set(recorded.map((recording) => recording.expected.kind))
    assert.deepStrictEqual([...kinds].sort(), ["json", "stream"])
    const steps = recorded.flatMap((recording) => recording.expected.steps)
    assert.isTrue(steps.some((step) => step.thinkingBlocks.length > 0))
    assert.isTrue(steps.some((step) => step.toolCalls.length >= 1))
    assert.isTrue(steps.some((step) => (step.usage.cache_read_input_tokens ?? 0) > 0))
  })
})

describe("every Anthropic recording, as a model call", () => {
  for (const recording of Corpus.recordings) {
    it.live(recording.name, () =>
      Effect.gen(function* () {
        const server = yield* MessagesServer.make(Corpus.replay(recording))
        const model = yield* Effect.provide(Effect.service(LanguageModel.LanguageModel), layerFor(server.baseURL))
        // One call per response the recording holds.
        for (const step of recording.expected.steps) {
          if (recording.expected.kind === "stream") {
            const parts = yield* Stream.runCollect(model.stream(ask))
            const last = parts.at(-1)
            assert.strictEqual(last?._tag, "Finished")
            check((last as Extract<ModelResponse.StreamPart, { _tag: "Finished" }>).response, step)
            assert.strictEqual(joined(parts, "TextDelta"), step.text)
            assert.strictEqual(joined(parts, "ReasoningDelta"), step.reasoning)
          } else {
            check(yield* model.generate(ask), step)
          }
        }
        const requests = yield* server.requests
        assert.strictEqual(requests.length, recording.expected.steps.length)
        assert.strictEqual(
          (requests[0]?.body as { stream?: boolean } | undefined)?.stream === true,
          recording.expected.kind === "stream"
        )
      }).pipe(Effect.scoped)
    )
  }
})

/** An agent with one local action for every tool a recording calls, recording the arguments each call got. */
const agentFor = (recording: Corpus.Recording) => {
  const ran: Array<readonly [string, unknown]> = []
  const actions: Record<string, Action.Any> = {}
  for (const call of recording.expected.steps.flatMap((step) => step.toolCalls)) {
    const keys = Object.keys(call.input as object)
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

interface SentMessage {
  readonly role: string
  readonly content: ReadonlyArray<Readonly<Record<string, unknown>>>
}

describe("every Anthropic recording, inside a chat turn", () => {
  for (const recording of recorded) {
    const streamed = recording.expected.kind === "stream"
    const { steps } = recording.expected
    const first = steps[0] as Corpus.Step
    const last = steps[steps.length - 1] as Corpus.Step
    const calls = steps.flatMap((step) => step.toolCalls)
    const answered = last.toolCalls.length > 0
    it.live(`${recording.name} (${streamed ? "agent.chatStream" : "agent.chat"})`, () =>
      Effect.gen(function* () {
        // Every recorded response answers one step of the turn, in order; a turn whose last recorded step called
        // tools ends with a plain answer written here.
        const server = yield* MessagesServer.make([
          ...Corpus.replay(recording),
          ...(answered ? [MessagesServer.reply("done")] : [])
        ])
        const { agent, ran } = yield* agentFor(recording)
        const events: Array<Chat.ChatEvent> = []
        const turn = streamed
          ? Effect.map(
              Stream.runForEach(agent.chatStream("go", { maxSteps: steps.length + 2 }), (event) =>
                Effect.sync(() => events.push(event))
              ),
              () => (events.at(-1) as Extract<Chat.ChatEvent, { _tag: "TurnFinished" }>).result
            )
          : agent.chat("go", { maxSteps: steps.length + 2 })
        const result = yield* Effect.provide(turn, layerFor(server.baseURL))
        assert.strictEqual(result._tag, "Completed", JSON.stringify(result))
        const completed = result as Chat.Completed
        const kept = completed.messages.find((message) => message.role === "assistant")
        assert.deepStrictEqual(
          kept?.providerData,
          first.thinkingBlocks.length === 0 ? undefined : { anthropic: { thinking: first.thinkingBlocks } }
        )
        const spent = steps.map(Corpus.usageOf)
        if (answered) spent.push({ inputTokens: 10, outputTokens: 5, totalTokens: 15 })
        assert.deepStrictEqual(completed.usage, spent.reduce(LanguageModel.addUsage))
        assert.strictEqual(completed.text, answered ? "done" : last.text)
        if (calls.length === 0) return
        assert.deepStrictEqual(
          ran.map(([name, params]) => JSON.stringify([name, params])).sort(),
          calls.map((call) => JSON.stringify([call.name, call.input])).sort()
        )
        const next = (yield* server.requests)[1]?.body as { readonly messages: ReadonlyArray<SentMessage> }
        const sent = next.messages.find((message) => message.role === "assistant")
        const thinking = first.thinkingBlocks
        // The signed thinking first and unchanged, then the text (if any) and the calls under their ids.
        assert.deepStrictEqual(sent?.content.slice(0, thinking.length), thinking)
        assert.deepStrictEqual(
          sent?.content.filter((block) => block.type === "tool_use"),
          first.toolCalls.map((call) => ({ type: "tool_use", id: call.id, name: call.name, input: call.input }))
        )
        const results = next.messages.at(-1)
        assert.deepStrictEqual(
          results?.content.map((block) => block.tool_use_id),
          first.toolCalls.map((call) => call.id)
        )
      }).pipe(Effect.scoped)
    )
  }
})

/**
 * Every recorded Responses API answer (test/fixtures/providers/recordings/openai-responses, from the AI SDK's
 * fixtures), served by `@rolecraft/testing`'s local Responses endpoint and read through the real `openai` SDK's
 * `responses` client and `OpenAiResponsesModel`: what is read equals what the recording's expectation (written
 * from the recording by scripts/providers-expected-responses.ts, not from Rolecraft) says — text, function calls,
 * reasoning summaries and the reasoning items kept to be sent back, usage with cached and reasoning tokens, the
 * finish reason (an incomplete response's reason), and errors by category. Items of the API's own tools are left
 * out. And a recorded multi-step turn with encrypted reasoning, replayed inside `agent.chatStream`: the tools run,
 * and every next request sends the reasoning items back, encrypted content and all, with `store: false`.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type Chat, LanguageModel, Role } from "@rolecraft/core"
import { OpenAiResponsesModel } from "@rolecraft/openai"
import { ResponsesServer } from "@rolecraft/testing"
import { Effect, Exit, Redacted, Schema, Stream } from "effect"

const root = join(import.meta.dirname, "../fixtures/providers")

interface Expected {
  readonly recording: string
  readonly kind: "stream" | "json" | "error"
  readonly text?: string
  readonly refusal?: string | null
  readonly toolCalls?: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>
  readonly reasoning?: string | null
  readonly reasoningItems?: { readonly count: number; readonly encrypted: number }
  readonly usage?: {
    readonly inputTokens: number | null
    readonly outputTokens: number | null
    readonly totalTokens: number | null
    readonly cachedInputTokens: number | null
    readonly reasoningTokens: number | null
  } | null
  readonly status?: string | null
  readonly incompleteReason?: string | null
  readonly error: { readonly message: string | null; readonly code: string | null } | null
}

const read = (path: string) => readFileSync(join(root, path), "utf8")

const eventsOf = (file: string): ReadonlyArray<{ readonly type: string }> =>
  read(`recordings/openai-responses/${file}`)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line))

const all: ReadonlyArray<Expected> = readdirSync(join(root, "expected/openai-responses"))
  .sort()
  .map((file) => JSON.parse(read(`expected/openai-responses/${file}`)) as Expected)

// Several responses in one file (a whole multi-step turn): replayed step by step in the chat test below.
const multiStep = (expected: Expected) =>
  expected.kind === "stream" &&
  eventsOf(expected.recording).filter((event) => event.type === "response.created").length > 1

const single = all.filter((expected) => !multiStep(expected))

const modelOn = (server: ResponsesServer.ResponsesServer) =>
  OpenAiResponsesModel.layer({
    model: "gpt-test",
    apiKey: Redacted.make("sk-responses-key"),
    baseURL: server.baseURL,
    timeout: "10 seconds"
  })

const stepOf = (expected: Expected): ResponsesServer.Step =>
  expected.kind === "stream"
    ? ResponsesServer.events(eventsOf(expected.recording))
    : ResponsesServer.body(read(`recordings/openai-responses/${expected.recording}`), {
        status: expected.kind === "error" ? 400 : 200
      })

const finishOf = (expected: Expected) =>
  expected.status === "incomplete"
    ? expected.incompleteReason === "content_filter"
      ? "content_filter"
      : "length"
    : (expected.toolCalls?.length ?? 0) > 0
      ? "tool_calls"
      : "stop"

describe("the recorded Responses API corpus", () => {
  it("holds at least 25 recordings, streamed and whole", () => {
    assert.isAtLeast(all.length, 25)
    assert.isAtLeast(single.filter((e) => e.kind === "stream").length, 10)
    assert.isAtLeast(single.filter((e) => e.kind === "json").length, 10)
  })

  for (const expected of single) {
    const streamed = expected.kind === "stream"
    it.live(`${expected.recording} (${streamed ? "stream" : "generate"})`, () =>
      Effect.gen(function* () {
        const server = yield* ResponsesServer.make([stepOf(expected)])
        const request: LanguageModel.Request = { messages: [{ role: "user", content: "go" }], action: "corpus" }
        const call = Effect.flatMap(Effect.service(LanguageModel.LanguageModel), (model) =>
          streamed
            ? Effect.map(Stream.runCollect(model.stream(request)), (parts) => {
                const last = parts.at(-1)
                return (last as Extract<typeof last, { _tag: "Finished" }>).response
              })
            : model.generate(request)
        )
        const exit = yield* Effect.exit(Effect.provide(call, modelOn(server)))
        const [sent] = yield* server.requests
        assert.strictEqual(sent?.path, "/v1/responses")
        assert.strictEqual((sent?.body as { readonly store: unknown } | undefined)?.store, false)
        if (expected.error !== null) {
          assert.isTrue(Exit.isFailure(exit), "an error recording fails the call")
          const failure = Exit.isFailure(exit) ? (exit.cause.reasons[0] as { readonly error?: any }).error : undefined
          assert.strictEqual(failure?.category, "EXECUTION")
          if (expected.error.message !== null) assert.include(failure?.message, expected.error.message)
          return
        }
        assert.isTrue(Exit.isSuccess(exit), String(exit))
        const response = Exit.isSuccess(exit) ? exit.value : undefined
        assert.strictEqual(response?.text, expected.text)
        assert.deepStrictEqual(
          response?.toolCalls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
          expected.toolCalls
        )
        assert.strictEqual(response?.reasoning, expected.reasoning ?? undefined)
        assert.strictEqual(response?.refusal, expected.refusal ?? undefined)
        assert.strictEqual(response?.finishReason, finishOf(expected))
        const usage = expected.usage
        if (usage !== null && usage !== undefined) {
          assert.deepStrictEqual(response?.usage, {
            inputTokens: usage.inputTokens ?? 0,
            outputTokens: usage.outputTokens ?? 0,
            totalTokens: usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0),
            ...(usage.cachedInputTokens === null ? {} : { cachedInputTokens: usage.cachedInputTokens }),
            ...(usage.reasoningTokens === null ? {} : { reasoningTokens: usage.reasoningTokens })
          })
        }
        const kept = response?.providerData?.[`openai.responses ${server.baseURL}`] as
          | { readonly reasoning?: ReadonlyArray<Record<string, unknown>> }
          | undefined
        const items = kept?.reasoning ?? []
        assert.strictEqual(items.length, expected.reasoningItems?.count ?? 0)
        assert.strictEqual(
          items.filter((item) => typeof item.encrypted_content === "string").length,
          expected.reasoningItems?.encrypted ?? 0
        )
      }).pipe(Effect.scoped)
    )
  }

  it.live("a recorded multi-step turn with encrypted reasoning, in agent.chatStream: reasoning goes back", () =>
    Effect.gen(function* () {
      const file = "openai-reasoning-encrypted-content.1.chunks.txt"
      const expected = all.find((e) => e.recording === file) as Expected
      const events = eventsOf(file)
      const steps: Array<Array<{ readonly type: string }>> = []
      for (const event of events) {
        if (event.type === "response.created") steps.push([])
        steps.at(-1)?.push(event)
      }
      const server = yield* ResponsesServer.make(steps.map((step) => ResponsesServer.events(step)))
      const ran: Array<unknown> = []
      const role = Role.make({
        identity: { name: "math", goal: "Calculate", domain: "math" },
        actions: {
          calculator: Action.local({
            description: "Adds or multiplies two numbers",
            parameters: { a: Schema.Number, b: Schema.Number, op: Schema.Literals(["add", "multiply"]) },
            run: ({ a, b, op }) => {
              ran.push({ a, b, op })
              return op === "add" ? a + b : a * b
            }
          })
        }
      })
      const agent = yield* Agent.make({ id: "math", roles: [role] })
      const turn = yield* Stream.runCollect(agent.chatStream("Compute (12 + 7) * 3 * 10")).pipe(
        Effect.provide(modelOn(server))
      )
      const last = turn.at(-1) as Extract<Chat.ChatEvent, { _tag: "TurnFinished" }>
      assert.strictEqual(last.result._tag, "Completed", JSON.stringify(last.result))
      assert.strictEqual((last.result as Chat.Completed).text, expected.text)
      assert.deepStrictEqual(
        ran,
        (expected.toolCalls ?? []).map((call) => JSON.parse(call.arguments))
      )
      const requests = yield* server.requests
      assert.strictEqual(requests.length, steps.length)
      // Each request after the first sends back every reasoning item so far, with its encrypted content,
      // before the calls it led to; and the calls' outputs.
      for (const request of requests.slice(1)) {
        const input = (request.body as { readonly input: ReadonlyArray<Record<string, unknown>> }).input
        const reasoning = input.filter((item) => item.type === "reasoning")
        assert.isAtLeast(reasoning.length, 1)
        for (const item of reasoning) assert.isString(item.encrypted_content)
        const firstCall = input.findIndex((item) => item.type === "function_call")
        assert.isBelow(input.indexOf(reasoning[0] as Record<string, unknown>), firstCall)
        const calls = input.filter((item) => item.type === "function_call").map((item) => item.call_id)
        const outputs = input.filter((item) => item.type === "function_call_output").map((item) => item.call_id)
        assert.deepStrictEqual(outputs, calls)
        assert.strictEqual((request.body as { readonly store: unknown }).store, false)
      }
    }).pipe(Effect.scoped)
  )

  it.live("no parallel calls is spelled parallel_tool_calls: false, and only beside tools; the profile says so", () =>
    Effect.gen(function* () {
      const done = { ...JSON.parse(read("recordings/openai-responses/openai-phase.1.json")) }
      const server = yield* ResponsesServer.make([ResponsesServer.body(done), ResponsesServer.body(done)])
      const tool: LanguageModel.Tool = {
        name: "lookup",
        description: "Looks a thing up",
        parameters: { type: "object", properties: {} },
        strict: false
      }
      const ask = (tools: ReadonlyArray<LanguageModel.Tool>) =>
        Effect.flatMap(Effect.service(LanguageModel.LanguageModel), (model) =>
          model.generate({ messages: [{ role: "user", content: "go" }], tools, parallelToolCalls: false })
        ).pipe(Effect.provide(modelOn(server)))
      yield* ask([tool])
      yield* ask([])
      const [withTools, without] = (yield* server.requests).map((request) => request.body as Record<string, unknown>)
      assert.strictEqual(withTools?.parallel_tool_calls, false)
      assert.isFalse(without !== undefined && "parallel_tool_calls" in without)
      assert.deepStrictEqual(OpenAiResponsesModel.profile, { toolLimit: 128, parallelCalls: "parallel_tool_calls" })
    }).pipe(Effect.scoped)
  )
})

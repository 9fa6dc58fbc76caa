import { assert, describe, it } from "@effect/vitest"
import { Action, type ActionError, Agent, LanguageModel, Role } from "@rolecraft/core"
import * as Toolkit from "../../core/src/internal/tool/toolkit.ts"
import { ChatCompletionsServer as Server, Telemetry } from "@rolecraft/testing"
import { Cause, ConfigProvider, Duration, Effect, Exit, Layer, Redacted, Schedule, Schema } from "effect"
import * as OpenAiLanguageModel from "../src/OpenAiLanguageModel.ts"

const identity = { name: "travel", goal: "Plan trips", domain: "travel" }

const packingTip = Action.llm({
  description: "Write a two-sentence packing tip for the trip",
  parameters: { destination: Schema.String, month: Schema.String },
  temperature: 0.3
})

const travel = (actions: Record<string, Action.Any>) => Role.make({ identity, actions })

const args = { destination: "Oslo", month: "November" }

// An agent over the real openai SDK talking to a local endpoint.
const withAgent = <A>(
  script: ReadonlyArray<Server.Step>,
  role: Role.Any,
  f: (
    agent: Agent.Agent,
    server: Server.ChatCompletionsServer
  ) => Effect.Effect<A, ActionError.ActionError | ActionError.RetrievalFailure>,
  options?: Partial<OpenAiLanguageModel.Options>
) =>
  Effect.gen(function* () {
    const server = yield* Server.make(script)
    const layer = OpenAiLanguageModel.layer({
      model: "gpt-test",
      apiKey: Redacted.make("sk-test-key"),
      baseURL: server.baseURL,
      ...options
    })
    const agent = yield* Agent.make({ id: "planner", roles: [role] })
    const result = yield* Effect.provide(f(agent as unknown as Agent.Agent, server), layer)
    return { result, requests: yield* server.requests }
  }).pipe(Effect.scoped)

const modelFor = (server: Server.ChatCompletionsServer, options?: Partial<OpenAiLanguageModel.Options>) =>
  OpenAiLanguageModel.make({
    model: "gpt-test",
    apiKey: Redacted.make("sk-test-key"),
    baseURL: server.baseURL,
    ...options
  })

const ask: LanguageModel.Request = { messages: [{ role: "user", content: "hi" }], action: "ask" }

describe("OpenAiLanguageModel (real openai SDK, local endpoint)", () => {
  it.live("a plain reply: the request the SDK sends, the text, and the usage in the ActionResponse", () =>
    Effect.gen(function* () {
      const { result, requests } = yield* withAgent(
        [
          Server.reply("Pack wool layers. Bring a rain shell.", {
            usage: { prompt_tokens: 31, completion_tokens: 9, total_tokens: 40 }
          })
        ],
        travel({ packingTip }),
        (agent) => Effect.map(agent.execute({ action: "packingTip", params: args }), (response) => response)
      )
      assert.strictEqual(result.value, "Pack wool layers. Bring a rain shell.")
      assert.deepStrictEqual(result.usage, { inputTokens: 31, outputTokens: 9, totalTokens: 40 })
      assert.strictEqual(requests.length, 1)
      const [request] = requests
      assert.strictEqual(request?.method, "POST")
      assert.strictEqual(request?.path, "/v1/chat/completions")
      assert.strictEqual(request?.headers.authorization, "Bearer sk-test-key")
      assert.deepStrictEqual(request?.body, {
        model: "gpt-test",
        messages: [
          {
            role: "user",
            content: "Write a two-sentence packing tip for the trip\n\nInput:\ndestination: Oslo\nmonth: November"
          }
        ],
        temperature: 0.3
      })
    })
  )

  it.live("no temperature is sent for -1, and the role's spec.model.name replaces the layer's model", () =>
    Effect.gen(function* () {
      const role = Role.make({
        identity,
        spec: { model: { name: "gpt-role" } },
        actions: { summarize: Action.llm({ description: "Summarise", parameters: { text: Schema.String } }) }
      })
      const { requests } = yield* withAgent([Server.reply("Short.")], role, (agent) =>
        agent.executeAction("summarize", { text: "Long text." })
      )
      assert.deepStrictEqual(requests[0]?.body, {
        model: "gpt-role",
        messages: [{ role: "user", content: "Summarise\n\nInput:\ntext: Long text." }]
      })
    })
  )

  it.live('tool calls come back with their ids and raw argument strings, "" and malformed included', () =>
    Effect.gen(function* () {
      const server = yield* Server.make([
        Server.toolCalls(
          [
            { id: "call_a", name: "nights", arguments: '{"checkIn":"2026-11-02","checkOut":"2026-11-05"}' },
            { id: "call_b", name: "get_server_version", arguments: "" },
            { id: "call_c", name: "search", arguments: '{"title":"a"}{"title":"b"}' }
          ],
          { usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 } }
        )
      ])
      const model = yield* modelFor(server)
      const kit = Toolkit.build([
        {
          key: "nights",
          description: "Count the nights",
          parameters: Schema.Struct({ checkIn: Schema.String, checkOut: Schema.String })
        },
        { key: "get_server_version", description: "Version", parameters: { type: "object" } },
        { key: "search", description: "Search", parameters: Schema.Struct({ title: Schema.String }), strict: true }
      ])
      const response = yield* model.generate({
        messages: [
          { role: "system", content: "Use tools." },
          { role: "user", content: "How many nights?" },
          { role: "assistant", content: "", toolCalls: [{ id: "call_0", name: "nights", arguments: "" }] },
          { role: "tool", toolCallId: "call_0", content: '{"error":{"category":"VALIDATION","message":"x"}}' }
        ],
        tools: kit.forModel,
        toolChoice: "required",
        action: "chat"
      })
      assert.deepStrictEqual(response, {
        text: "",
        toolCalls: [
          { id: "call_a", name: "nights", arguments: '{"checkIn":"2026-11-02","checkOut":"2026-11-05"}' },
          { id: "call_b", name: "get_server_version", arguments: "" },
          { id: "call_c", name: "search", arguments: '{"title":"a"}{"title":"b"}' }
        ],
        usage: { inputTokens: 50, outputTokens: 20, totalTokens: 70 },
        finishReason: "tool_calls",
        model: "gpt-test"
      })
      const [request] = yield* server.requests
      const body = (request?.body ?? {}) as Record<string, unknown>
      assert.deepStrictEqual(body.messages, [
        { role: "system", content: "Use tools." },
        { role: "user", content: "How many nights?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_0", type: "function", function: { name: "nights", arguments: "" } }]
        },
        { role: "tool", tool_call_id: "call_0", content: '{"error":{"category":"VALIDATION","message":"x"}}' }
      ])
      assert.strictEqual(body.tool_choice, "required")
      assert.deepStrictEqual(
        body.tools,
        kit.forModel.map((tool) => ({
          type: "function",
          function: { name: tool.name, description: tool.description, parameters: tool.parameters, strict: tool.strict }
        }))
      )
      assert.deepStrictEqual((body.tools as Array<{ function: { parameters: unknown } }>)[1]?.function.parameters, {
        type: "object",
        properties: {}
      })
    }).pipe(Effect.scoped)
  )

  it.live("arguments a compatible server sends already parsed come back as their JSON string", () =>
    Effect.gen(function* () {
      const completion = {
        id: "x",
        object: "chat.completion",
        created: 0,
        model: "local",
        choices: [
          {
            index: 0,
            finish_reason: "tool_calls",
            message: {
              role: "assistant",
              content: null,
              tool_calls: [
                { id: "c1", type: "function", function: { name: "nights", arguments: { checkIn: "2026-11-02" } } },
                { id: "c2", type: "function", function: { name: "version" } }
              ]
            }
          }
        ]
      }
      const server = yield* Server.make([Server.raw(JSON.stringify(completion))])
      const model = yield* modelFor(server)
      const response = yield* model.generate(ask)
      assert.deepStrictEqual(response.toolCalls, [
        { id: "c1", name: "nights", arguments: '{"checkIn":"2026-11-02"}' },
        { id: "c2", name: "version", arguments: "" }
      ])
    }).pipe(Effect.scoped)
  )

  it.live("a named tool choice is sent as a function choice; usage is reported per call", () =>
    Effect.gen(function* () {
      const server = yield* Server.make([
        Server.reply("a", { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
        Server.reply("b")
      ])
      const model = yield* modelFor(server)
      const first = yield* model.generate({ ...ask, toolChoice: { tool: "nights" } })
      const second = yield* model.generate(ask)
      assert.deepStrictEqual(first.usage, { inputTokens: 1, outputTokens: 2, totalTokens: 3 })
      assert.deepStrictEqual(second.usage, { inputTokens: 0, outputTokens: 0, totalTokens: 0 })
      const requests = yield* server.requests
      const body = requests[0]?.body as Record<string, unknown> | undefined
      assert.deepStrictEqual(body?.tool_choice, {
        type: "function",
        function: { name: "nights" }
      })
    }).pipe(Effect.scoped)
  )

  it.live("429 then a success under a retry policy: the server sees exactly 2 requests (the SDK does not retry)", () =>
    Effect.gen(function* () {
      const tip = packingTip.pipe(Action.resilience({ retry: { maxAttempts: 1, initialDelay: "10 seconds" } }))
      const { spans, tracer } = Telemetry.make()
      const { result, requests } = yield* withAgent(
        [
          Server.error(429, { message: "Rate limit reached", headers: { "retry-after-ms": "20" } }),
          Server.reply("Pack layers.")
        ],
        travel({ packingTip: tip }),
        (agent) => Effect.withTracer(agent.executeAction("packingTip", args), tracer)
      )
      // The wait honoured retry-after-ms (20 ms), not the 10-second backoff: the test would time out otherwise.
      assert.strictEqual(result, "Pack layers.")
      assert.strictEqual(requests.length, 2)
      // Two model calls, one per attempt of the action: the retry was the policy's, not the SDK's.
      assert.strictEqual(spans.filter((span) => span.name.startsWith("chat")).length, 2)
    })
  )

  it.live("429 without a retry policy is TRANSIENT with the server's retryAfter; 1 request", () =>
    Effect.gen(function* () {
      const { result, requests } = yield* withAgent(
        [Server.error(429, { headers: { "retry-after": "7" } })],
        travel({ packingTip }),
        (agent) => Effect.flip(agent.executeAction("packingTip", args))
      )
      assert.strictEqual(result._tag, "TransientFailure")
      assert.strictEqual(
        result._tag === "TransientFailure" && result.retryAfter !== undefined && Duration.toMillis(result.retryAfter),
        7000
      )
      assert.strictEqual(requests.length, 1)
    })
  )

  it.live("500 with no retry policy is TRANSIENT and the server sees exactly 1 request", () =>
    Effect.gen(function* () {
      const { result, requests } = yield* withAgent(
        [Server.error(500, { message: "The server had an error" })],
        travel({ packingTip }),
        (agent) => Effect.flip(agent.executeAction("packingTip", args))
      )
      assert.strictEqual(result._tag, "TransientFailure")
      assert.strictEqual(result._tag === "TransientFailure" && result.status, 500)
      assert.include(result.message, "The server had an error")
      assert.strictEqual(requests.length, 1)
    })
  )

  it.live(
    "statuses map to categories: 400, 401, 403, 404, 409, 422 EXECUTION with status and excerpt; 408, 503 TRANSIENT",
    () =>
      Effect.gen(function* () {
        const table: ReadonlyArray<readonly [number, string]> = [
          [400, "EXECUTION"],
          [401, "EXECUTION"],
          [403, "EXECUTION"],
          [404, "EXECUTION"],
          [422, "EXECUTION"],
          [408, "TRANSIENT"],
          [409, "EXECUTION"],
          [503, "TRANSIENT"]
        ]
        const server = yield* Server.make(
          table.map(([status]) => Server.error(status, { message: `Invalid schema for function 'x' (${status})` }))
        )
        const model = yield* modelFor(server)
        for (const [status, category] of table) {
          const error = yield* Effect.flip(model.generate(ask))
          assert.strictEqual(error.category, category, `HTTP ${status}`)
          assert.strictEqual("status" in error && error.status, status)
          if (error._tag === "ExecutionFailure") {
            assert.strictEqual(error.excerpt, `Invalid schema for function 'x' (${status})`)
            assert.strictEqual(
              error.message,
              `ask: the model API refused the request (HTTP ${status}): Invalid schema for function 'x' (${status})`
            )
          }
        }
        assert.strictEqual((yield* server.requests).length, table.length)
      }).pipe(Effect.scoped)
  )

  it.live("a slow endpoint past the attempt timeout is TIMEOUT, and the request is aborted (the server sees it)", () =>
    Effect.gen(function* () {
      const slow = Action.llm({
        description: "Tip",
        parameters: {},
        timeout: "200 millis"
      })
      const { result, server } = yield* Effect.gen(function* () {
        const server = yield* Server.make([Server.delayed("5 seconds", Server.reply("late"))])
        const agent = yield* Agent.make({ id: "planner", roles: [travel({ slow })] })
        const result = yield* Effect.flip(agent.executeAction("slow")).pipe(
          Effect.provide(
            OpenAiLanguageModel.layer({ model: "gpt-test", apiKey: Redacted.make("k"), baseURL: server.baseURL })
          )
        )
        return { result, server }
      })
      assert.strictEqual(result._tag, "Timeout")
      // The socket close reaches the server shortly after the abort.
      const outcome = yield* server.requests.pipe(
        Effect.map((requests) => requests[0]?.outcome),
        Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (outcome) => outcome === "aborted" }),
        Effect.timeout("2 seconds")
      )
      assert.strictEqual(outcome, "aborted")
    }).pipe(Effect.scoped)
  )

  it.live("the SDK's own timeout is TIMEOUT with `after`, and is not retried by the SDK", () =>
    Effect.gen(function* () {
      const server = yield* Server.make([Server.delayed("3 seconds", Server.reply("late"))])
      const model = yield* modelFor(server, { timeout: "150 millis" })
      const error = yield* Effect.flip(model.generate(ask))
      assert.strictEqual(error._tag, "Timeout")
      assert.strictEqual(error._tag === "Timeout" && Duration.toMillis(error.after), 150)
      assert.strictEqual((yield* server.requests).length, 1)
    }).pipe(Effect.scoped)
  )

  it.live("an endpoint that refuses connections is TRANSIENT", () =>
    Effect.gen(function* () {
      const closed = yield* Effect.scoped(Effect.map(Server.make([]), (server) => server.baseURL))
      const model = yield* OpenAiLanguageModel.make({ model: "m", baseURL: closed })
      const error = yield* Effect.flip(model.generate(ask))
      assert.strictEqual(error._tag, "TransientFailure")
      assert.include(error.message, `could not reach the model API at ${closed}`)
    })
  )

  it.live("an unreachable endpoint's message names its URL without user info, query or fragment", () =>
    Effect.gen(function* () {
      const closed = yield* Effect.scoped(Effect.map(Server.make([]), (server) => server.baseURL))
      const withCredentials = `${closed.replace("http://", "http://user:hunter22@")}?key=abc#frag`
      const model = yield* OpenAiLanguageModel.make({ model: "m", baseURL: withCredentials })
      const error = yield* Effect.flip(model.generate(ask))
      assert.strictEqual(error._tag, "TransientFailure")
      assert.include(error.message, `at ${closed}`)
      assert.notInclude(error.message, "hunter22")
      assert.notInclude(error.message, "key=abc")
    })
  )

  it.live("a malformed body or one without choices is EXECUTION", () =>
    Effect.gen(function* () {
      const server = yield* Server.make([Server.raw("{not json"), Server.raw('{"id":"x","object":"chat.completion"}')])
      const model = yield* modelFor(server)
      const notJson = yield* Effect.flip(model.generate(ask))
      const noChoices = yield* Effect.flip(model.generate(ask))
      assert.strictEqual(notJson._tag, "ExecutionFailure")
      assert.include(notJson.message, "ask: the model API sent a malformed answer: the body is not JSON")
      assert.strictEqual(noChoices._tag, "ExecutionFailure")
      assert.strictEqual(noChoices.message, "ask: the model API sent a malformed answer: no choices")
    }).pipe(Effect.scoped)
  )

  it.live("without an apiKey no Authorization header is sent; without any model the call is VALIDATION", () =>
    Effect.gen(function* () {
      const server = yield* Server.make([Server.reply("ok")])
      const keyless = yield* OpenAiLanguageModel.make({ model: "local", baseURL: server.baseURL })
      assert.strictEqual((yield* keyless.generate(ask)).text, "ok")
      const [request] = yield* server.requests
      assert.isUndefined(request?.headers.authorization)
      const unnamed = yield* OpenAiLanguageModel.make({ baseURL: server.baseURL })
      const error = yield* Effect.flip(unnamed.generate(ask))
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "no model named")
      assert.strictEqual((yield* server.requests).length, 1)
    }).pipe(Effect.scoped)
  )

  it.live(
    "layerConfig reads OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL; the key never shows in errors, spans or logs",
    () =>
      Effect.gen(function* () {
        const key = "sk-proj-SECRET0123456789abcdef"
        // The endpoint echoes the credential it received in its error message, as a careless proxy would.
        const server = yield* Server.make([
          Server.respond((request) =>
            Server.error(401, { message: `Incorrect API key provided: ${request.headers.authorization}` })
          ),
          Server.reply("ok")
        ])
        const recorder = Telemetry.make()
        const { spans, tracer } = recorder
        const config = ConfigProvider.fromUnknown({
          OPENAI_API_KEY: key,
          OPENAI_BASE_URL: server.baseURL,
          OPENAI_MODEL: "gpt-from-config"
        })
        const layer = OpenAiLanguageModel.layerConfig().pipe(Layer.provide(ConfigProvider.layer(config)))
        const agent = yield* Agent.make({ id: "planner", roles: [travel({ packingTip })] })
        const run = agent.execute({ action: "packingTip", params: args }).pipe(
          Effect.tap((response) => (response.error === undefined ? Effect.void : Effect.logError(response.error))),
          Effect.provide(layer),
          Effect.withTracer(tracer),
          Effect.provide(recorder.layer)
        )
        const failed = yield* run
        const ok = yield* run
        const requests = yield* server.requests
        assert.strictEqual(requests[0]?.headers.authorization, `Bearer ${key}`)
        assert.strictEqual((requests[0]?.body as { model?: string } | undefined)?.model, "gpt-from-config")
        assert.strictEqual(ok.value, "ok")
        assert.strictEqual(failed.error?._tag, "ExecutionFailure")
        assert.strictEqual(failed.error?._tag === "ExecutionFailure" && failed.error.status, 401)
        assert.include(failed.error?.message, "Incorrect API key provided: Bearer [REDACTED]")
        const shown = [
          failed.error?.message ?? "",
          JSON.stringify(failed.error),
          String(failed.error?.cause),
          ...recorder.logs.map((line) => `${line.message} ${line.cause}`),
          ...spans.flatMap((span) => [
            JSON.stringify([...span.attributes]),
            span.status._tag === "Ended" && Exit.isFailure(span.status.exit) ? Cause.pretty(span.status.exit.cause) : ""
          ])
        ].join("\n")
        assert.isAbove(recorder.logs.length, 0)
        assert.isTrue(spans.some((span) => span.name.startsWith("chat")))
        assert.notInclude(shown, key)
        assert.notInclude(shown, Buffer.from(key).toString("base64"))
      }).pipe(Effect.scoped)
  )

  const buildWith = (variables: Record<string, string>) =>
    Effect.gen(function* () {
      const layer = OpenAiLanguageModel.layerConfig().pipe(
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(variables)))
      )
      return yield* Effect.flip(Effect.provide(Effect.asVoid(LanguageModel.LanguageModel), layer))
    })

  it.live("layerConfig without OPENAI_API_KEY fails to build with VALIDATION naming the variable", () =>
    Effect.gen(function* () {
      const error = yield* buildWith({ OPENAI_MODEL: "m" })
      assert.strictEqual(error._tag, "ValidationError")
      assert.strictEqual(error.category, "VALIDATION")
      assert.include(error.message, "OPENAI_API_KEY is not set")
      assert.deepStrictEqual(
        error.issues.map((issue) => issue.path),
        ["OPENAI_API_KEY"]
      )
    })
  )

  it.live("layerConfig refuses an OPENAI_API_KEY shorter than 8 characters, naming the variable, not the key", () =>
    Effect.gen(function* () {
      const error = yield* buildWith({ OPENAI_API_KEY: "sk-abc" })
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "OPENAI_API_KEY is shorter than 8 characters")
      assert.notInclude(error.message, "sk-abc")
    })
  )

  it.live("layerConfig with only OPENAI_API_KEY set calls the default model gpt-4o-mini", () =>
    Effect.gen(function* () {
      const server = yield* Server.make([Server.reply("ok")])
      const config = ConfigProvider.fromUnknown({ OPENAI_API_KEY: "sk-test-key-0123", OPENAI_BASE_URL: server.baseURL })
      const layer = OpenAiLanguageModel.layerConfig().pipe(Layer.provide(ConfigProvider.layer(config)))
      const answer = yield* Effect.flatMap(LanguageModel.LanguageModel, (model) => model.generate(ask)).pipe(
        Effect.provide(layer)
      )
      assert.strictEqual(answer.text, "ok")
      const [request] = yield* server.requests
      assert.strictEqual((request?.body as { model?: string } | undefined)?.model, "gpt-4o-mini")
    }).pipe(Effect.scoped)
  )
})

describe("OpenAiLanguageModel.retryAfter", () => {
  it("retry-after-ms, delta-seconds, an HTTP date, and malformed values ignored", () => {
    const now = Date.parse("Wed, 21 Oct 2026 07:27:00 GMT")
    const of = (headers: Record<string, string>) => {
      const duration = OpenAiLanguageModel.retryAfter(new Headers(headers), now)
      return duration === undefined ? undefined : Duration.toMillis(duration)
    }
    assert.strictEqual(of({ "retry-after-ms": "1500" }), 1500)
    assert.strictEqual(of({ "retry-after-ms": "1500", "retry-after": "9" }), 1500)
    assert.strictEqual(of({ "retry-after": "3" }), 3000)
    assert.strictEqual(of({ "retry-after": "0" }), 0)
    assert.strictEqual(of({ "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT" }), 60_000)
    assert.strictEqual(of({ "retry-after": "Wed, 21 Oct 2026 07:00:00 GMT" }), 0)
    assert.strictEqual(of({ "retry-after": "soon" }), undefined)
    assert.strictEqual(of({ "retry-after": "-5" }), undefined)
    assert.strictEqual(of({ "retry-after": "1.5" }), undefined)
    assert.strictEqual(of({ "retry-after": "Wednesday, 21-Oct-26 07:27:30 GMT" }), 30_000)
    assert.strictEqual(of({ "retry-after": "Wed Oct 21 07:27:10 2026" }) !== undefined, true)
    assert.strictEqual(of({ "retry-after-ms": "NaN" }), undefined)
    assert.strictEqual(of({}), undefined)
  })
})

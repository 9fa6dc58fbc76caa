/**
 * Chat turns (SPEC §7) on the scripted model: the tools offered, every tool
 * call through the pipeline and answered once, strict argument parsing (C01,
 * C02), unknown tools (C06), conversion (C10), `$ref` schemas (C08), bounded
 * parallel calls, the step limit, approval pauses and resume, model failures
 * under the chat's retry policy, histories, events and usage.
 */
import { assert, describe, it } from "@effect/vitest"
import { ScriptedModel, Telemetry } from "@rolecraft/testing"
import { PgClient } from "@effect/sql-pg"
import { Chunk, Effect, Exit, Fiber, Layer, Option, Redacted, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as Action from "../src/Action.ts"
import { type ActionError, Timeout, TransientFailure, ValidationError } from "../src/ActionError.ts"
import * as Agent from "../src/Agent.ts"
import * as ApprovalStore from "../src/ApprovalStore.ts"
import * as Chat from "../src/Chat.ts"
import type * as StepHooks from "../src/StepHooks.ts"
import type * as Events from "../src/Events.ts"
import * as LanguageModel from "../src/LanguageModel.ts"
import type * as Prompt from "../src/Prompt.ts"
import * as Role from "../src/Role.ts"
import { postgresUrl } from "../../../test/setup/postgresUrl.ts"
import { fixture, Location } from "./support/TravelRole.ts"

const toolMessages = (messages: ReadonlyArray<Prompt.Message>) =>
  messages.flatMap((message) => (message.role === "tool" ? [[message.toolCallId, message.content]] : []))

const errorOf = (content: string | undefined): { readonly category: string; readonly message: string } => {
  const parsed = JSON.parse(content ?? "null") as {
    readonly error: { readonly category: string; readonly message: string }
  }
  assert.deepStrictEqual(Object.keys(parsed), ["error"])
  assert.deepStrictEqual(Object.keys(parsed.error), ["category", "message"])
  return parsed.error
}

function expectTag<T extends Chat.ChatResult["_tag"]>(
  result: Chat.ChatResult,
  tag: T
): asserts result is Extract<Chat.ChatResult, { readonly _tag: T }> {
  assert.strictEqual(result._tag, tag, JSON.stringify(result))
}

const offered = ["nights", "add", "ping", "distance", "book", "broken", "slow"]

describe("Chat: a turn", () => {
  it("the default system message names the agent, its roles, their goals (pinned)", () => {
    const { travel } = fixture()
    const assistant = Role.make({ identity: { name: "assistant", goal: "Handle ad-hoc requests", domain: "general" } })
    assert.strictEqual(
      Chat.systemPrompt("planner", [travel, assistant]),
      [
        'You are the agent "planner". Your roles:',
        "- travel (domain: travel): Plan trips; goals: stay on budget; prefer trains",
        "- assistant (domain: general): Handle ad-hoc requests",
        "Use the tools offered when they help, then answer the user in plain text."
      ].join("\n")
    )
  })

  it.effect("a text answer completes the turn: system then user message, every offered tool, the role's model", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const modelled = Role.make({
        identity: { name: "voice", goal: "Speak", domain: "voice" },
        spec: { model: { name: "gpt-test", temperature: 0.2 } }
      })
      const agent = yield* Agent.make({ id: "planner", roles: [travel, modelled] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.reply("Hello!", { usage: { inputTokens: 9, outputTokens: 2 } })
      ])
      const result = yield* agent.chat("Hi").pipe(Effect.provide(scripted.layer))
      const system = Chat.systemPrompt("planner", [travel, modelled])
      assert.deepStrictEqual(result, {
        _tag: "Completed",
        text: "Hello!",
        messages: [
          { role: "system", content: system },
          { role: "user", content: "Hi" },
          { role: "assistant", content: "Hello!" }
        ],
        usage: { inputTokens: 9, outputTokens: 2, totalTokens: 11 },
        steps: 1,
        finishReason: "stop"
      })
      const [request] = yield* scripted.requests
      assert.deepStrictEqual(
        request?.tools?.map((tool) => tool.name),
        offered
      )
      assert.strictEqual(request?.model, "gpt-test")
      assert.strictEqual(request?.temperature, 0.2)
      assert.strictEqual(request?.action, "chat")
      assert.deepStrictEqual(request?.messages, [
        { role: "system", content: system },
        { role: "user", content: "Hi" }
      ])
      yield* scripted.assertDone
    })
  )

  it.effect.each([
    [0.7, 0.7],
    [0, 0],
    [-1, undefined]
  ] as const)("a chat temperature of %s is sent as %s (negative keeps the client's own)", ([given, sent]) =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([ScriptedModel.reply("ok")])
      yield* agent.chat("Hi", { temperature: given }).pipe(Effect.provide(scripted.layer))
      const [request] = yield* scripted.requests
      assert.strictEqual(request?.temperature, sent)
    })
  )

  it.effect("tool schemas: $ref inlined (C08), properties on every object, no _approval_token, strict on demand", () =>
    Effect.gen(function* () {
      assert.include(JSON.stringify(Schema.toJsonSchemaDocument(Schema.Struct({ a: Location, b: Location }))), "$ref")
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([ScriptedModel.reply("a"), ScriptedModel.reply("b")])
      yield* agent.chat("Hi").pipe(Effect.provide(scripted.layer))
      yield* agent.chat("Hi", { strict: true }).pipe(Effect.provide(scripted.layer))
      const [loose, strict] = yield* scripted.requests
      const tool = (request: LanguageModel.Request | undefined, name: string) =>
        request?.tools?.find((entry) => entry.name === name)
      const location = {
        type: "object",
        properties: { lat: { type: "number" }, lon: { type: "number" } },
        required: ["lat", "lon"]
      }
      assert.deepStrictEqual(tool(loose, "distance"), {
        name: "distance",
        description: "Distance between two places",
        parameters: {
          type: "object",
          properties: { start: location, end: location },
          required: ["start", "end"]
        },
        strict: false
      })
      assert.deepStrictEqual(tool(loose, "ping")?.parameters, { type: "object", properties: {} })
      assert.notInclude(JSON.stringify(loose?.tools), "$ref")
      assert.notInclude(JSON.stringify(loose?.tools), "_approval_token")
      assert.isTrue(strict?.tools?.every((entry) => entry.strict && entry.parameters.additionalProperties === false))
    })
  )

  it.effect(
    "tool calls run through the pipeline, are answered in call order, and the model answers (C10 conversion)",
    () =>
      Effect.gen(function* () {
        const { travel, counts } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const scripted = yield* ScriptedModel.make([
          ScriptedModel.toolCalls(
            [
              { name: "nights", arguments: { checkIn: "2026-11-02", checkOut: "2026-11-05" } },
              { name: "add", arguments: { a: "1458", b: " 42 " } }
            ],
            { usage: { inputTokens: 20, outputTokens: 10 } }
          ),
          ScriptedModel.reply("3 nights; 1500.", { usage: { inputTokens: 40, outputTokens: 5 } })
        ])
        const result = yield* agent.chat("Plan it").pipe(Effect.provide(scripted.layer))
        expectTag(result, "Completed")
        assert.strictEqual(result.text, "3 nights; 1500.")
        assert.strictEqual(result.steps, 2)
        assert.deepStrictEqual(result.usage, { inputTokens: 60, outputTokens: 15, totalTokens: 75 })
        assert.deepStrictEqual(result.messages.slice(2), [
          {
            role: "assistant",
            content: "",
            toolCalls: [
              { id: "call_1", name: "nights", arguments: '{"checkIn":"2026-11-02","checkOut":"2026-11-05"}' },
              { id: "call_2", name: "add", arguments: '{"a":"1458","b":" 42 "}' }
            ]
          },
          { role: "tool", toolCallId: "call_1", content: "3" },
          { role: "tool", toolCallId: "call_2", content: '{"sum":1500}' },
          { role: "assistant", content: "3 nights; 1500." }
        ])
        assert.deepStrictEqual([counts.nights, counts.add], [1, 1])
        const requests = yield* scripted.requests
        assert.deepStrictEqual(requests[1]?.messages, result.messages.slice(0, -1))
      })
  )

  it.effect("a failing tool is answered with its category and message, and the turn goes on", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "broken" }, { name: "add", arguments: { a: "3.5", b: 1 } }]),
        ScriptedModel.reply("Sorry.")
      ])
      const result = yield* agent.chat("Go").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      const [broken, add] = toolMessages(result.messages).map(([, content]) => content)
      assert.strictEqual(broken, '{"error":{"category":"EXECUTION","message":"broken: the upstream refused"}}')
      const invalid = errorOf(add)
      assert.strictEqual(invalid.category, "VALIDATION")
      assert.match(invalid.message, /a: expected an integer, got "3\.5"/)
      assert.deepStrictEqual([counts.broken, counts.add], [1, 0])
    })
  )
})

describe("Chat: arguments are parsed strictly (C01, C02)", () => {
  const cases: ReadonlyArray<readonly [string, string, string, RegExp]> = [
    ["empty arguments to a tool with required fields", "nights", "", /checkIn: missing/],
    ["whitespace arguments to a tool with required fields", "nights", "  \n", /checkIn: missing/],
    ["null", "nights", "null", /arguments must be a JSON object, got null/],
    ["a number", "nights", "5", /arguments must be a JSON object, got a number/],
    ["a string", "nights", '"text"', /arguments must be a JSON object, got a string/],
    ["an array", "nights", "[]", /arguments must be a JSON object, got an array/],
    ["broken JSON", "nights", '{"{"tagIds":[1,2]}', /not valid JSON .*received: \{"\{"tagIds":\[1,2\]\}/],
    ["a missing quote", "nights", '{"action": listt_windows"}', /not valid JSON/],
    ["two objects run together", "nights", '{"checkIn":"a"}{"checkIn":"b"}', /not valid JSON/],
    ["a truncated object", "nights", "{lat: 48.2, lon:", /not valid JSON .*received: \{lat: 48\.2, lon:/]
  ]
  for (const [what, name, raw, expected] of cases) {
    it.effect(`${what} is VALIDATION and the tool does not run`, () =>
      Effect.gen(function* () {
        const { travel, counts } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const scripted = yield* ScriptedModel.make([
          ScriptedModel.toolCalls([{ name, arguments: raw }]),
          ScriptedModel.reply("ok")
        ])
        const result = yield* agent.chat("Go").pipe(Effect.provide(scripted.layer))
        expectTag(result, "Completed")
        const error = errorOf(toolMessages(result.messages)[0]?.[1])
        assert.strictEqual(error.category, "VALIDATION")
        assert.match(error.message, expected)
        assert.strictEqual(counts.nights, 0)
      })
    )
  }

  it.effect("empty arguments to a tool without required fields run it with {} (C01)", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "ping", arguments: "" }]),
        ScriptedModel.reply("up")
      ])
      const result = yield* agent.chat("Up?").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.deepStrictEqual(toolMessages(result.messages), [["call_1", "pong"]])
      assert.strictEqual(counts.ping, 1)
    })
  )

  it.effect("a preview of a long malformed argument string is at most 500 characters", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const raw = `{"checkIn": "${"x".repeat(2000)}`
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "nights", arguments: raw }]),
        ScriptedModel.reply("ok")
      ])
      const result = yield* agent.chat("Go").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      const error = errorOf(toolMessages(result.messages)[0]?.[1])
      const received = error.message.slice(error.message.indexOf("received: ") + 10)
      assert.strictEqual(received.length, 500)
      assert.isTrue(received.endsWith("…"))
    })
  )
})

describe("Chat: unknown tools and the step limit (C06)", () => {
  it.effect("a name never offered is NOT_FOUND listing the offered names; an excluded action never runs", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "read", arguments: { path: "a.md" } }, { name: "secret" }, { name: "night" }]),
        ScriptedModel.reply("ok")
      ])
      const result = yield* agent.chat("Go").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      const answers = toolMessages(result.messages)
      assert.deepStrictEqual(
        answers.map(([id]) => id),
        ["call_1", "call_2", "call_3"]
      )
      for (const [, content] of answers) {
        const error = errorOf(content)
        assert.strictEqual(error.category, "NOT_FOUND")
        assert.include(error.message, `the tools offered are: ${offered.join(", ")}`)
      }
      assert.match(errorOf(answers[2]?.[1]).message, /^No tool named night was offered/)
      assert.strictEqual(counts.secret, 0)
    })
  )

  it.effect("authority hides the tools it denies, and a denied name is AUTHORITY even when unknown", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel], authority: { deny: ["broken", "rm*"] } })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "broken" }, { name: "rm_rf" }, { name: "rename" }]),
        ScriptedModel.reply("ok")
      ])
      const result = yield* agent.chat("Go").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      const [request] = yield* scripted.requests
      assert.notInclude(request?.tools?.map((tool) => tool.name) ?? [], "broken")
      const categories = toolMessages(result.messages).map(([, content]) => errorOf(content).category)
      assert.deepStrictEqual(categories, ["AUTHORITY", "AUTHORITY", "NOT_FOUND"])
      assert.strictEqual(counts.broken, 0)
    })
  )

  it.effect("a model that calls the same failing tool every step ends with StepLimitReached at maxSteps", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const again = ScriptedModel.toolCalls([{ name: "broken" }], { usage: { inputTokens: 5, outputTokens: 1 } })
      const scripted = yield* ScriptedModel.make([again, again, again])
      const result = yield* agent.chat("Go", { maxSteps: 3 }).pipe(Effect.provide(scripted.layer))
      expectTag(result, "StepLimitReached")
      assert.strictEqual(result.steps, 3)
      assert.deepStrictEqual(result.usage, { inputTokens: 15, outputTokens: 3, totalTokens: 18 })
      assert.strictEqual(counts.broken, 3)
      assert.deepStrictEqual(
        toolMessages(result.messages).map(([id]) => id),
        ["call_1", "call_2", "call_3"]
      )
      assert.strictEqual(result.messages.at(-1)?.role, "tool")
      yield* scripted.assertDone
    })
  )

  it.effect("maxSteps and concurrency must be integers >= 1", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([])
      const steps = yield* Effect.flip(agent.chat("Go", { maxSteps: 0 }).pipe(Effect.provide(scripted.layer)))
      assert.instanceOf(steps, ValidationError)
      assert.strictEqual(steps.message, "chat: maxSteps must be an integer >= 1, got 0")
      const bound = yield* Effect.flip(agent.chat("Go", { concurrency: 1.5 }).pipe(Effect.provide(scripted.layer)))
      assert.instanceOf(bound, ValidationError)
      assert.deepStrictEqual((bound as ValidationError).issues, [
        { path: "concurrency", message: "concurrency must be an integer >= 1, got 1.5" }
      ])
      yield* scripted.assertDone
    })
  )
})

describe("Chat: tool call ids and concurrency", () => {
  it.effect("empty or repeated ids get fresh ones, so every call is answered exactly once", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([
          { id: "dup", name: "ping" },
          { id: "dup", name: "ping" },
          { id: "", name: "ping" }
        ]),
        ScriptedModel.reply("ok")
      ])
      const result = yield* agent.chat("Go").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      const assistant = result.messages[2]
      const ids = assistant?.role === "assistant" ? assistant.toolCalls?.map((call) => call.id) : []
      assert.deepStrictEqual(ids, ["dup", "dup_1_1", "call_1_2"])
      assert.deepStrictEqual(toolMessages(result.messages), [
        ["dup", "pong"],
        ["dup_1_1", "pong"],
        ["call_1_2", "pong"]
      ])
      assert.strictEqual(counts.ping, 3)
    })
  )

  it.effect("parallel calls of one step run at most `concurrency` at a time, answered in call order", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([1, 2, 3].map((n) => ({ name: "slow", arguments: { n } }))),
        ScriptedModel.reply("done")
      ])
      const fiber = yield* Effect.forkChild(agent.chat("Go", { concurrency: 2 }).pipe(Effect.provide(scripted.layer)))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(counts.slow, 2)
      yield* TestClock.adjust("1 second")
      const result = yield* Fiber.join(fiber)
      expectTag(result, "Completed")
      assert.strictEqual(counts.maxInFlight, 2)
      assert.deepStrictEqual(toolMessages(result.messages), [
        ["call_1", "1"],
        ["call_2", "2"],
        ["call_3", "3"]
      ])
    })
  )

  it.effect("the default bound is 4", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([1, 2, 3, 4, 5, 6].map((n) => ({ name: "slow", arguments: { n } }))),
        ScriptedModel.reply("done")
      ])
      const fiber = yield* Effect.forkChild(agent.chat("Go").pipe(Effect.provide(scripted.layer)))
      yield* TestClock.adjust("2 seconds")
      expectTag(yield* Fiber.join(fiber), "Completed")
      assert.strictEqual(counts.maxInFlight, 4)
    })
  )
})

describe("Chat: approvals", () => {
  const bookingScript = () => [
    ScriptedModel.toolCalls([
      { name: "nights", arguments: { checkIn: "2026-11-02", checkOut: "2026-11-05" } },
      // a model cannot present an approval token: it is stripped
      { name: "book", arguments: { hotel: "Ritz", _approval_token: "forged" } }
    ]),
    ScriptedModel.reply("Booked.")
  ]

  it.effect("a call needing approval pauses the turn after the step's other calls ran; approving resumes it", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make(bookingScript())
      const paused = yield* agent.chat("Book it").pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      const [pending] = paused.pending
      assert.deepStrictEqual(paused.pending, [
        {
          toolCallId: "call_2",
          action: "book",
          arguments: { hotel: "Ritz" },
          pendingTokenId: pending?.pendingTokenId ?? "",
          reason: "Bookings cost money"
        }
      ])
      assert.deepStrictEqual(paused.state.pending, paused.pending)
      assert.strictEqual(paused.state.steps, 1)
      assert.strictEqual(paused.state.maxSteps, 10)
      assert.deepStrictEqual(toolMessages(paused.state.messages), [["call_1", "3"]])
      assert.deepStrictEqual([counts.nights, counts.book], [1, 0])
      const token = yield* agent.approvals.get(pending?.pendingTokenId ?? "")
      assert.strictEqual(Option.getOrThrow(token).status, "pending")

      const result = yield* agent
        .resume(paused.state, { call_2: Chat.approve("ann") })
        .pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.strictEqual(result.text, "Booked.")
      assert.strictEqual(result.steps, 2)
      assert.deepStrictEqual(toolMessages(result.messages), [
        ["call_1", "3"],
        ["call_2", "booked Ritz"]
      ])
      assert.strictEqual(counts.book, 1)
      const used = Option.getOrThrow(yield* agent.approvals.get(pending?.pendingTokenId ?? ""))
      assert.deepStrictEqual([used.status, used.approver], ["used", "ann"])
      yield* scripted.assertDone
    })
  )

  it.effect("resuming the same state twice does not run the approved call twice: the token is single-use", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([...bookingScript(), ScriptedModel.reply("Again.")])
      const paused = yield* agent.chat("Book it").pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      const decisions = { call_2: Chat.approve("ann") }
      yield* agent.resume(paused.state, decisions).pipe(Effect.provide(scripted.layer))
      const again = yield* agent.resume(paused.state, decisions).pipe(Effect.provide(scripted.layer))
      expectTag(again, "Completed")
      const error = errorOf(toolMessages(again.messages)[1]?.[1])
      assert.deepStrictEqual(error, {
        category: "APPROVAL",
        message: "book requires approval (Bookings cost money): the approval token has already been used"
      })
      assert.strictEqual(counts.book, 1)
    })
  )

  it.effect(
    "a second resume of the same state with another decision is APPROVAL already decided, before anything runs (C55 a)",
    () =>
      Effect.gen(function* () {
        const { travel, counts } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const scripted = yield* ScriptedModel.make([...bookingScript(), ScriptedModel.reply("Never reached.")])
        const paused = yield* agent.chat("Book it").pipe(Effect.provide(scripted.layer))
        expectTag(paused, "AwaitingApproval")
        const first = yield* agent
          .resume(paused.state, { call_2: Chat.approve("ann") })
          .pipe(Effect.provide(scripted.layer))
        expectTag(first, "Completed")
        assert.strictEqual(counts.book, 1)
        const second = yield* Effect.flip(
          agent
            .resume(paused.state, { call_2: Chat.reject("bob", "too expensive") })
            .pipe(Effect.provide(scripted.layer))
        )
        assert.deepStrictEqual(
          [second._tag, second.category, second._tag === "ApprovalRequired" && second.check, second.message],
          ["ApprovalRequired", "APPROVAL", "decided", "resume: call_2 (book) is already decided: approved by ann"]
        )
        // The model was not called again, so it was never told "rejected"; the charge ran once.
        assert.strictEqual((yield* scripted.requests).length, 2)
        assert.strictEqual(counts.book, 1)
        const token = Option.getOrThrow(yield* agent.approvals.get(paused.pending[0]?.pendingTokenId ?? ""))
        assert.deepStrictEqual([token.status, token.approver, token.rejection], ["used", "ann", undefined])
      })
  )

  it.effect(
    "a paused state edited to other arguments: the decision binds to them, the token refuses, nothing runs",
    () =>
      Effect.gen(function* () {
        const { travel, counts } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const scripted = yield* ScriptedModel.make(bookingScript())
        const paused = yield* agent.chat("Book it").pipe(Effect.provide(scripted.layer))
        expectTag(paused, "AwaitingApproval")
        const [pending] = paused.state.pending
        const forged: Chat.PausedState = {
          ...paused.state,
          pending: [{ ...(pending as Chat.PendingCall), arguments: { hotel: "Savoy" } }]
        }
        const result = yield* agent.resume(forged, { call_2: Chat.approve("ann") }).pipe(Effect.provide(scripted.layer))
        expectTag(result, "Completed")
        assert.deepStrictEqual(errorOf(toolMessages(result.messages)[1]?.[1]), {
          category: "APPROVAL",
          message: "book requires approval (Bookings cost money): the approval token was issued for other arguments"
        })
        assert.strictEqual(counts.book, 0)
        const token = Option.getOrThrow(yield* agent.approvals.get(pending?.pendingTokenId ?? ""))
        assert.strictEqual(token.status, "pending", "the decision was not recorded on the real call's token")
      })
  )

  it.effect("rejected first, approved second: the second resume is refused and the call never runs", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make(bookingScript())
      const paused = yield* agent.chat("Book it").pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      yield* agent.resume(paused.state, { call_2: Chat.reject("ann", "no") }).pipe(Effect.provide(scripted.layer))
      const second = yield* Effect.flip(
        agent.resume(paused.state, { call_2: Chat.approve("bob") }).pipe(Effect.provide(scripted.layer))
      )
      assert.strictEqual(second.message, "resume: call_2 (book) is already decided: rejected by ann: no")
      assert.strictEqual(counts.book, 0)
    })
  )

  const approvalStores: ReadonlyArray<readonly [string, () => Layer.Layer<ApprovalStore.ApprovalStore, unknown>]> = [
    ["memory", () => ApprovalStore.layerMemory],
    ["sqlite", () => ApprovalStore.layerSqlite({ filename: ":memory:" })],
    ["postgres", () => Layer.provide(ApprovalStore.layerSql, PgClient.layer({ url: Redacted.make(postgresUrl()) }))]
  ]
  for (const [name, layer] of approvalStores) {
    it.effect(`${name}: an approver or reason the store cannot hold is VALIDATION at the decision (C52)`, () =>
      Effect.gen(function* () {
        const { travel, counts } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const scripted = yield* ScriptedModel.make(bookingScript())
        const paused = yield* agent.chat("Book it").pipe(Effect.provide(scripted.layer))
        expectTag(paused, "AwaitingApproval")
        const cases: ReadonlyArray<readonly [Chat.Decision, string]> = [
          [Chat.reject("bob", "no\u0000pe"), "decisions.call_2.reason"],
          [Chat.reject("b\u0000b", "no"), "decisions.call_2.approver"],
          [Chat.approve("b\uD800b"), "decisions.call_2.approver"]
        ]
        for (const [decision, path] of cases) {
          const exit: Exit.Exit<Chat.ChatResult, unknown> = yield* Effect.exit(
            agent.resume(paused.state, { call_2: decision }).pipe(Effect.provide(scripted.layer))
          )
          assert.isFalse(Exit.hasDies(exit), String(exit))
          const error: unknown = Option.getOrThrow(Exit.findErrorOption(exit))
          assert.instanceOf(error, ValidationError)
          assert.deepStrictEqual(
            (error as ValidationError).issues.map((issue) => issue.path),
            [path]
          )
        }
        assert.strictEqual(counts.book, 0)
        const token = Option.getOrThrow(
          yield* (yield* ApprovalStore.ApprovalStore).get(paused.pending[0]?.pendingTokenId ?? "")
        )
        assert.strictEqual(token.status, "pending")
      }).pipe(Effect.provide(layer()))
    )
  }

  it.effect("rejecting answers the call with an APPROVAL error carrying the reason; the call never runs", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make(bookingScript())
      const paused = yield* agent.chat("Book it").pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      const result = yield* agent
        .resume(paused.state, { call_2: Chat.reject("ann", "too expensive") })
        .pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.deepStrictEqual(errorOf(toolMessages(result.messages)[1]?.[1]), {
        category: "APPROVAL",
        message: "book requires approval (Bookings cost money): rejected by ann: too expensive"
      })
      assert.strictEqual(counts.book, 0)
      const token = Option.getOrThrow(yield* agent.approvals.get(paused.pending[0]?.pendingTokenId ?? ""))
      assert.deepStrictEqual([token.status, token.rejection], ["rejected", "too expensive"])
    })
  )

  it.effect("a persisted state resumes in another agent of the same definition sharing the approval store", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const store = ApprovalStore.makeMemory()
      const scripted = yield* ScriptedModel.make(bookingScript())
      const saved = yield* Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const paused = yield* agent.chat("Book it").pipe(Effect.provide(scripted.layer))
        expectTag(paused, "AwaitingApproval")
        return JSON.stringify(paused.state)
      }).pipe(Effect.scoped, Effect.provideService(ApprovalStore.ApprovalStore, store))
      const result = yield* Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        return yield* agent.resume(JSON.parse(saved), { call_2: Chat.approve("ann") })
      }).pipe(Effect.scoped, Effect.provideService(ApprovalStore.ApprovalStore, store), Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.strictEqual(counts.book, 1)
    })
  )

  it.effect("resume checks its state and decisions before anything runs", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make(bookingScript().slice(0, 1))
      const paused = yield* agent.chat("Book it").pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      const attempt = (state: unknown, decisions: Chat.Decisions) =>
        Effect.flip(agent.resume(state as Chat.PausedState, decisions).pipe(Effect.provide(scripted.layer)))
      const missing = yield* attempt(paused.state, {})
      assert.strictEqual(missing.message, "resume: no decision for call_2")
      const unknown = yield* attempt(paused.state, { call_2: Chat.approve("ann"), call_9: Chat.approve("ann") })
      assert.strictEqual(unknown.message, "resume: no pending call call_9")
      const malformed = yield* attempt({ ...paused.state, steps: -1 }, { call_2: Chat.approve("ann") })
      assert.instanceOf(malformed, ValidationError)
      assert.deepStrictEqual(
        (malformed as ValidationError).issues.map((issue) => issue.path),
        ["steps"]
      )
      const answered = yield* attempt(
        { ...paused.state, messages: [...paused.state.messages, { role: "tool", toolCallId: "call_2", content: "x" }] },
        { call_2: Chat.approve("ann") }
      )
      assert.match(answered.message, /call_2 is not an unanswered call/)
      // a decision that is neither Chat.approve(…) nor Chat.reject(…) approves nothing
      const decisions: ReadonlyArray<unknown> = [
        { _tag: "reject", approver: "ann", reason: "no" },
        { _tag: "Reject", approver: "ann" },
        { approver: "ann" },
        "approve",
        null
      ]
      for (const decision of decisions) {
        const bad: unknown = yield* attempt(paused.state, { call_2: decision as Chat.Decision })
        assert.instanceOf(bad, ValidationError, JSON.stringify(decision))
        assert.deepStrictEqual(
          (bad as ValidationError).issues.map((issue) => issue.path),
          ["decisions.call_2"]
        )
      }
      const token = yield* agent.approvals.get(paused.pending[0]?.pendingTokenId ?? "")
      assert.strictEqual(Option.getOrUndefined(token)?.status, "pending")
      assert.strictEqual(counts.book, 0)
      yield* scripted.assertDone
    })
  )
})

describe("Chat: the paused state's version and the step hooks", () => {
  const bookingScript = () => [
    ScriptedModel.toolCalls([
      { name: "nights", arguments: { checkIn: "2026-11-02", checkOut: "2026-11-05" } },
      { name: "book", arguments: { hotel: "Ritz" } }
    ]),
    ScriptedModel.reply("Booked.")
  ]

  it.effect(
    "a paused state is version 1; another version, or none, is VALIDATION naming version before anything runs",
    () =>
      Effect.gen(function* () {
        const { travel, counts } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const scripted = yield* ScriptedModel.make(bookingScript().slice(0, 1))
        const paused = yield* agent.chat("Book it").pipe(Effect.provide(scripted.layer))
        expectTag(paused, "AwaitingApproval")
        assert.strictEqual(paused.state.version, Chat.pausedStateVersion)
        const { version: _, ...unversioned } = paused.state
        for (const [state, message] of [
          [{ ...paused.state, version: 2 }, "resume: the paused state is version 2; this Rolecraft resumes version 1"],
          [unversioned, "resume: the paused state has no version; this Rolecraft resumes version 1"]
        ] as const) {
          const error = yield* Effect.flip(
            agent
              .resume(state as Chat.PausedState, { call_2: Chat.approve("ann") })
              .pipe(Effect.provide(scripted.layer))
          )
          assert.instanceOf(error, ValidationError)
          assert.match(error.message, new RegExp(`^${message.replace(/[()]/g, "\\$&")}`))
          assert.deepStrictEqual(
            (error as ValidationError).issues.map((issue) => issue.path),
            ["version"]
          )
        }
        assert.strictEqual(counts.book, 0)
      })
  )

  it.effect("hooks see every tool listing, model call and tool call, in order, a decided call marked so", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make(bookingScript())
      const seen: Array<string> = []
      const steps: StepHooks.StepHooks<Chat.ToolAnswer> = {
        tools: (step, list) =>
          Effect.tap(list, (names) => Effect.sync(() => seen.push(`tools ${step.step}: ${names.length}`))),
        model: (step, call) =>
          Effect.tap(call, (response) => Effect.sync(() => seen.push(`model ${step.step}: ${response.finishReason}`))),
        tool: (step, call) =>
          Effect.tap(call, (answer) =>
            Effect.sync(() =>
              seen.push(
                `tool ${step.step} ${step.toolCallId} ${step.name}${step.decided ? " decided" : ""}: ${answer.message?.content ?? (answer.pending === undefined ? "no message" : "pending")}`
              )
            )
          )
      }
      const paused = yield* agent.chat("Book it", { steps, concurrency: 1 }).pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      const done = yield* agent
        .resume(paused.state, { call_2: Chat.approve("ann") }, { steps })
        .pipe(Effect.provide(scripted.layer))
      expectTag(done, "Completed")
      assert.deepStrictEqual(seen, [
        `tools 1: ${offered.length}`,
        "model 1: tool_calls",
        "tool 1 call_1 nights: 3",
        "tool 1 call_2 book: pending",
        "tool 1 call_2 book decided: booked Ritz",
        `tools 2: ${offered.length}`,
        "model 2: stop"
      ])
      assert.strictEqual(counts.book, 1)
    })
  )

  it.effect("hooks may give back recorded results: the model and the tools do not run again, and usage is kept", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "nights", arguments: { checkIn: "2026-11-02", checkOut: "2026-11-05" } }], {
          usage: { inputTokens: 5, outputTokens: 1 }
        }),
        ScriptedModel.reply("Three nights.", { usage: { inputTokens: 7, outputTokens: 2 } })
      ])
      // A recorder: the first run stores each result by step, a replay returns the stored ones.
      const stored = new Map<string, unknown>()
      const recorded = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
        stored.has(key)
          ? Effect.succeed(stored.get(key) as A)
          : Effect.tap(effect, (value) => Effect.sync(() => stored.set(key, value)))
      const steps: StepHooks.StepHooks<Chat.ToolAnswer> = {
        tools: (step, list) => recorded(`tools ${step.step}`, list),
        // A recorded response has not been metered in this turn: the hook records its tokens itself.
        model: (step, call) =>
          stored.has(`model ${step.step}`)
            ? Effect.tap(recorded(`model ${step.step}`, call), (response) =>
                Effect.flatMap(Effect.serviceOption(LanguageModel.UsageMeter), (meter) =>
                  Option.isSome(meter) ? meter.value.record(response.usage) : Effect.void
                )
              )
            : recorded(`model ${step.step}`, call),
        tool: (step, call) => recorded(`tool ${step.toolCallId}`, call)
      }
      const first = yield* agent.chat("How many nights?", { steps }).pipe(Effect.provide(scripted.layer))
      const replay = yield* agent.chat("How many nights?", { steps }).pipe(Effect.provide(scripted.layer))
      assert.deepStrictEqual(replay, first)
      assert.strictEqual(counts.nights, 1)
      yield* scripted.assertDone
    })
  )

  it.effect("a tools hook narrows what is offered and routed to the names it returns", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([
          { name: "ping" },
          { name: "nights", arguments: { checkIn: "2026-11-02", checkOut: "2026-11-05" } }
        ]),
        ScriptedModel.reply("ok")
      ])
      const steps: StepHooks.StepHooks<Chat.ToolAnswer> = { tools: () => Effect.succeed(["nights", "vanished"]) }
      const result = yield* agent.chat("Go", { steps }).pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      const [request] = yield* scripted.requests
      assert.deepStrictEqual(
        request?.tools?.map((tool) => tool.name),
        ["nights"]
      )
      const [ping, nights] = toolMessages(result.messages)
      assert.strictEqual(errorOf(ping?.[1]).category, "NOT_FOUND")
      assert.deepStrictEqual(nights, ["call_2", "3"])
      assert.deepStrictEqual([counts.ping, counts.nights], [0, 1])
    })
  )
})

describe("Chat: the model", () => {
  it.effect("without a LanguageModel (its requirement cast away) the turn fails with VALIDATION", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      // The types ask for a LanguageModel: only a program that casts it away gets here.
      const error = yield* Effect.flip(agent.chat("Hi") as Effect.Effect<Chat.ChatResult, ActionError>)
      assert.instanceOf(error, ValidationError)
      assert.match(error.message, /^chat: LanguageModel not provided/)
    })
  )

  it.effect("a model failure fails the turn with its error (a 500 with no retry policy is TRANSIENT)", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([ScriptedModel.fail(500)])
      const error = yield* Effect.flip(agent.chat("Hi").pipe(Effect.provide(scripted.layer)))
      assert.instanceOf(error, TransientFailure)
      assert.deepStrictEqual([error.action, error.status], ["chat", 500])
      yield* scripted.assertDone
    })
  )

  it.effect("a 429 then a success under the chat's retry policy, waiting the server's retryAfter", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.fail(429, { retryAfter: "3 seconds" }),
        ScriptedModel.reply("Hi!")
      ])
      const fiber = yield* Effect.forkChild(
        agent.chat("Hi", { retry: { maxAttempts: 2 } }).pipe(Effect.provide(scripted.layer))
      )
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual((yield* scripted.requests).length, 1)
      yield* TestClock.adjust("1 second")
      const result = yield* Fiber.join(fiber)
      expectTag(result, "Completed")
      assert.strictEqual(result.steps, 1)
      yield* scripted.assertDone
    })
  )

  it.effect("modelTimeout bounds each model call", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([ScriptedModel.delayed("1 minute", ScriptedModel.reply("late"))])
      const fiber = yield* Effect.forkChild(
        Effect.flip(agent.chat("Hi", { modelTimeout: "5 seconds" }).pipe(Effect.provide(scripted.layer)))
      )
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(fiber)
      assert.instanceOf(error, Timeout)
    })
  )
})

describe("Chat: histories", () => {
  it.effect("a turn continues from the messages of an earlier one, keeping its system message", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([ScriptedModel.reply("One."), ScriptedModel.reply("Two.")])
      const first = yield* agent.chat("First?", { system: "Be brief." }).pipe(Effect.provide(scripted.layer))
      expectTag(first, "Completed")
      const second = yield* agent
        .chat([...first.messages, { role: "user", content: "Second?" }])
        .pipe(Effect.provide(scripted.layer))
      expectTag(second, "Completed")
      assert.deepStrictEqual(second.messages, [
        { role: "system", content: "Be brief." },
        { role: "user", content: "First?" },
        { role: "assistant", content: "One." },
        { role: "user", content: "Second?" },
        { role: "assistant", content: "Two." }
      ])
      assert.strictEqual(second.steps, 1)
    })
  )

  it.effect("a list without a system message gets one; a bad history is VALIDATION", () =>
    Effect.gen(function* () {
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([ScriptedModel.reply("ok")])
      const result = yield* agent.chat([{ role: "user", content: "Hi" }]).pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.strictEqual(result.messages[0]?.role, "system")
      const bad = (messages: unknown) =>
        Effect.flip(agent.chat(messages as ReadonlyArray<Prompt.Message>).pipe(Effect.provide(scripted.layer)))
      const robot = yield* bad([{ role: "robot", content: "x" }])
      assert.instanceOf(robot, ValidationError)
      assert.isTrue(robot.issues.some((issue) => issue.path.startsWith("messages[0]")))
      const empty = yield* bad([])
      assert.strictEqual(empty.message, "chat: the message list is empty")
      const unanswered = yield* bad([
        { role: "user", content: "Hi" },
        { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "ping", arguments: "" }] }
      ])
      assert.match(unanswered.message, /tool calls c1 are never answered/)
      yield* scripted.assertDone
    })
  )
})

describe("Chat: events and usage", () => {
  it.effect(
    "StepFinished per model call, ToolExecutionStarted/Finished around each call, action events in between",
    () =>
      Effect.gen(function* () {
        const { travel } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const scripted = yield* ScriptedModel.make([
          ScriptedModel.toolCalls([{ name: "ping" }, { name: "nope" }], { usage: { inputTokens: 4, outputTokens: 1 } }),
          ScriptedModel.reply("ok", { usage: { inputTokens: 6, outputTokens: 2 } })
        ])
        const fiber = yield* Effect.forkChild(Stream.runCollect(Stream.take(agent.events, 8)))
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        yield* agent.chat("Go", { concurrency: 1 }).pipe(Effect.provide(scripted.layer))
        const events = Chunk.toReadonlyArray(
          Chunk.fromIterable(yield* Fiber.join(fiber))
        ) as ReadonlyArray<Events.Event>
        const call = (toolCallId: string, tool: string, action: string | undefined) =>
          ({ agentId: "planner", step: 1, toolCallId, tool, action, mcpTool: undefined, timestamp: 0 }) as const
        const subject = {
          agentId: "planner",
          action: "ping",
          role: "travel",
          type: "local",
          correlationId: undefined
        } as const
        assert.deepStrictEqual(events, [
          {
            _tag: "StepFinished",
            agentId: "planner",
            step: 1,
            toolCalls: 2,
            usage: { inputTokens: 4, outputTokens: 1, totalTokens: 5 },
            timestamp: 0
          },
          { _tag: "ToolExecutionStarted", ...call("call_1", "ping", "ping") },
          { _tag: "ActionStarted", ...subject, timestamp: 0 },
          { _tag: "ActionSucceeded", ...subject, timestamp: 0, durationMs: 0, usage: undefined },
          {
            _tag: "ToolExecutionFinished",
            ...call("call_1", "ping", "ping"),
            success: true,
            category: undefined,
            durationMs: 0
          },
          { _tag: "ToolExecutionStarted", ...call("call_2", "nope", undefined) },
          {
            _tag: "ToolExecutionFinished",
            ...call("call_2", "nope", undefined),
            success: false,
            category: "NOT_FOUND",
            durationMs: 0
          },
          {
            _tag: "StepFinished",
            agentId: "planner",
            step: 2,
            toolCalls: 0,
            usage: { inputTokens: 6, outputTokens: 2, totalTokens: 8 },
            timestamp: 0
          }
        ])
      })
  )

  it.effect("usage sums every model call of the turn, llm actions called as tools included, across a pause", () =>
    Effect.gen(function* () {
      const { travel, counts } = fixture()
      const writer = Role.make({
        identity: { name: "writer", goal: "Write", domain: "text" },
        actions: {
          summarize: Action.llm({ description: "Summarise the text", parameters: { text: Schema.String } })
        }
      })
      const agent = yield* Agent.make({ id: "planner", roles: [travel, writer] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls(
          [
            { name: "summarize", arguments: { text: "long text" } },
            { name: "book", arguments: { hotel: "Ritz" } }
          ],
          { usage: { inputTokens: 10, outputTokens: 5 } }
        ),
        ScriptedModel.reply("short", { usage: { inputTokens: 3, outputTokens: 2 } }),
        ScriptedModel.reply("Done.", { usage: { inputTokens: 20, outputTokens: 4 } })
      ])
      const paused = yield* agent.chat("Go", { concurrency: 1 }).pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      assert.deepStrictEqual(paused.state.usage, { inputTokens: 13, outputTokens: 7, totalTokens: 20 })
      assert.deepStrictEqual(toolMessages(paused.state.messages), [["call_1", "short"]])
      const result = yield* agent
        .resume(paused.state, { call_2: Chat.approve("ann") })
        .pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.deepStrictEqual(result.usage, { inputTokens: 33, outputTokens: 11, totalTokens: 44 })
      assert.strictEqual(counts.book, 1)
      yield* scripted.assertDone
    })
  )

  it.effect("a turn runs in one span invoke_agent <agent> holding its model calls and its tool calls", () =>
    Effect.gen(function* () {
      const { spans, tracer } = Telemetry.make()
      const { travel } = fixture()
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "ping" }]),
        ScriptedModel.reply("ok")
      ])
      yield* agent.chat("Go").pipe(Effect.provide(scripted.layer), Effect.withTracer(tracer))
      const root = spans.find((span) => span.name === "invoke_agent planner")
      assert.strictEqual(root?.attributes.get("rolecraft.agent"), "planner")
      const children = spans.filter((span) => span.parent._tag === "Some" && span.parent.value.spanId === root?.spanId)
      assert.deepStrictEqual(
        children.map((span) => span.name),
        ["chat", "execute_tool ping", "chat"]
      )
    })
  )
})

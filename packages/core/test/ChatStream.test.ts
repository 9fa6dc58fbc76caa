/**
 * Streamed chat turns (SPEC §15) on the scripted model: the order and content
 * of the events, approval pauses, argument deltas only when asked, stopping
 * a stream mid-answer or mid-tool-call, events kept out of `agent.events`,
 * and the property that `chat`/`resume` and `chatStream`/`resumeStream`
 * agree on every scripted turn, approvals included.
 */
import { assert, describe, it } from "@effect/vitest"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, Exit, Fiber, Stream } from "effect"
import * as fc from "fast-check"
import * as Action from "../src/Action.ts"
import * as Agent from "../src/Agent.ts"
import * as Chat from "../src/Chat.ts"
import type * as Events from "../src/Events.ts"
import * as LanguageModel from "../src/LanguageModel.ts"
import type * as ModelResponse from "../src/ModelResponse.ts"
import type * as Prompt from "../src/Prompt.ts"
import * as Role from "../src/Role.ts"
import { fixture } from "./support/TravelRole.ts"

type Tagged<T extends Chat.ChatEvent["_tag"]> = Extract<Chat.ChatEvent, { readonly _tag: T }>

const collect = <E, R>(stream: Stream.Stream<Chat.ChatEvent, E, R>) => Stream.runCollect(stream)

const finishedOf = (events: ReadonlyArray<Chat.ChatEvent>): Chat.ChatResult => {
  const finished = events.filter((event) => event._tag === "TurnFinished")
  assert.strictEqual(finished.length, 1, "TurnFinished exactly once")
  assert.strictEqual(events.at(-1)?._tag, "TurnFinished", "TurnFinished last")
  return (finished[0] as Tagged<"TurnFinished">).result
}

const travelAgent = Effect.gen(function* () {
  const { travel, counts } = fixture()
  const agent = yield* Agent.make({ id: "planner", roles: [travel] })
  return { agent, counts }
})

describe("Chat streams", () => {
  it.effect("a turn's events in order: steps, text deltas, tool calls started, ready, answered, TurnFinished", () =>
    Effect.gen(function* () {
      const { agent } = yield* travelAgent
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls(
          [
            { id: "n1", name: "nights", arguments: { checkIn: "2026-05-01", checkOut: "2026-05-04" } },
            { id: "p1", name: "ping", arguments: "" },
            { id: "x1", name: "nope", arguments: "{}" }
          ],
          { text: "Checking.", usage: { inputTokens: 10, outputTokens: 4 } }
        ),
        ScriptedModel.reply("Three nights, and the service is up.", { usage: { inputTokens: 20, outputTokens: 8 } })
      ])
      const events = yield* collect(agent.chatStream("How many nights?")).pipe(Effect.provide(scripted.layer))
      const result = finishedOf(events)
      assert.strictEqual(result._tag, "Completed")
      assert.deepStrictEqual(events.slice(0, 5), [
        { _tag: "StepStarted", step: 1 },
        { _tag: "TextDelta", step: 1, delta: "Checking." },
        { _tag: "ToolCallArgumentsStarted", step: 1, toolCallId: "n1", tool: "nights" },
        { _tag: "ToolCallArgumentsStarted", step: 1, toolCallId: "p1", tool: "ping" },
        { _tag: "ToolCallArgumentsStarted", step: 1, toolCallId: "x1", tool: "nope" }
      ])
      const firstStepEnd = events.findIndex((event) => event._tag === "StepFinished")
      // the calls run concurrently: per call, ready before answered; the unknown tool is answered without being ready
      const middle = events.slice(5, firstStepEnd)
      assert.deepStrictEqual(middle.map((event) => event._tag).sort(), [
        "ToolCallAnswered",
        "ToolCallAnswered",
        "ToolCallAnswered",
        "ToolCallReady",
        "ToolCallReady"
      ])
      for (const id of ["n1", "p1"]) {
        const at = (tag: string) =>
          middle.findIndex((event) => event._tag === tag && "toolCallId" in event && event.toolCallId === id)
        assert.isBelow(at("ToolCallReady"), at("ToolCallAnswered"))
      }
      assert.deepStrictEqual(
        events.slice(firstStepEnd + 1).map((event) => event._tag),
        ["StepStarted", ...Array.from({ length: 7 }, () => "TextDelta"), "StepFinished", "TurnFinished"]
      )
      const ready = events.filter((event): event is Tagged<"ToolCallReady"> => event._tag === "ToolCallReady")
      assert.deepStrictEqual(
        ready.map((event) => [event.toolCallId, event.action, event.arguments]),
        [
          ["n1", "nights", { checkIn: "2026-05-01", checkOut: "2026-05-04" }],
          ["p1", "ping", {}]
        ]
      )
      const results = events.filter((event): event is Tagged<"ToolCallAnswered"> => event._tag === "ToolCallAnswered")
      assert.deepStrictEqual(
        results.map((event) => [event.toolCallId, event.success, event.category, event.content]).sort(),
        [
          ["n1", true, undefined, "3"],
          ["p1", true, undefined, "pong"],
          [
            "x1",
            false,
            "NOT_FOUND",
            JSON.stringify({
              error: {
                category: "NOT_FOUND",
                message:
                  "No tool named nope was offered; the tools offered are: nights, add, ping, distance, book, broken, slow"
              }
            })
          ]
        ].sort()
      )
      const text = events
        .filter((event): event is Tagged<"TextDelta"> => event._tag === "TextDelta" && event.step === 2)
        .map((event) => event.delta)
      assert.deepStrictEqual(text, ["Three ", "nights, ", "and ", "the ", "service ", "is ", "up."])
      assert.deepStrictEqual(
        events.filter((event) => event._tag === "StepFinished"),
        [
          {
            _tag: "StepFinished",
            step: 1,
            finishReason: "tool_calls",
            usage: { inputTokens: 10, outputTokens: 4, totalTokens: 14 }
          },
          {
            _tag: "StepFinished",
            step: 2,
            finishReason: "stop",
            usage: { inputTokens: 20, outputTokens: 8, totalTokens: 28 }
          }
        ]
      )
      // every tool message in the result was streamed as that call's ToolCallAnswered
      if (result._tag !== "Completed") return
      const toolMessages = result.messages.flatMap((message) =>
        message.role === "tool" ? [[message.toolCallId, message.content]] : []
      )
      assert.deepStrictEqual(
        toolMessages,
        results.map((event) => [event.toolCallId, event.content])
      )
      assert.deepStrictEqual(result.usage, { inputTokens: 30, outputTokens: 12, totalTokens: 42 })
    })
  )

  it.effect(
    "an approval pause streams ApprovalRequested then TurnFinished { AwaitingApproval }; resumeStream goes on",
    () =>
      Effect.gen(function* () {
        const { agent, counts } = yield* travelAgent
        const scripted = yield* ScriptedModel.make([
          ScriptedModel.toolCalls([
            { id: "b1", name: "book", arguments: { hotel: "Casa Alfama" } },
            { id: "b2", name: "book", arguments: { hotel: "Hotel Avenida" } },
            { id: "p1", name: "ping" }
          ]),
          ScriptedModel.reply("Booked one, not the other.")
        ])
        const paused = yield* collect(agent.chatStream("Book both")).pipe(Effect.provide(scripted.layer))
        const result = finishedOf(paused)
        assert.strictEqual(result._tag, "AwaitingApproval")
        if (result._tag !== "AwaitingApproval") return
        const tags = paused.map((event) => event._tag)
        assert.deepStrictEqual(tags.slice(-3), ["StepFinished", "ApprovalRequested", "TurnFinished"])
        assert.deepStrictEqual(paused.at(-2), { _tag: "ApprovalRequested", pending: result.pending })
        // only the call that ran was answered; the pending ones were ready but have no result yet
        assert.deepStrictEqual(
          paused.flatMap((event) => (event._tag === "ToolCallAnswered" ? [event.toolCallId] : [])),
          ["p1"]
        )
        assert.strictEqual(counts.book, 0)

        const resumed = yield* collect(
          agent.resumeStream(result.state, {
            b1: Chat.approve("alice"),
            b2: Chat.reject("alice", "too expensive")
          })
        ).pipe(Effect.provide(scripted.layer))
        const done = finishedOf(resumed)
        assert.strictEqual(done._tag, "Completed")
        assert.strictEqual(counts.book, 1)
        const answers = resumed.filter(
          (event): event is Tagged<"ToolCallAnswered"> => event._tag === "ToolCallAnswered"
        )
        assert.deepStrictEqual(
          answers.map((event) => [event.step, event.toolCallId, event.success, event.category]).sort(),
          [
            [1, "b1", true, undefined],
            [1, "b2", false, "APPROVAL"]
          ]
        )
        assert.deepStrictEqual(
          resumed.flatMap((event) => (event._tag === "ToolCallReady" ? [[event.toolCallId, event.arguments]] : [])),
          [["b1", { hotel: "Casa Alfama" }]]
        )
        assert.deepStrictEqual(resumed[answers.length + 1], { _tag: "StepStarted", step: 2 })
      })
  )

  it.effect("argument deltas are streamed only when asked for", () =>
    Effect.gen(function* () {
      const chunks: ReadonlyArray<ModelResponse.ProviderChunk> = [
        { toolCalls: [{ index: 0, id: "a1", name: "add", arguments: '{"a":' }] },
        { toolCalls: [{ index: 0, arguments: "1," }] },
        { toolCalls: [{ index: 0, arguments: '"b":2}' }], finishReason: "tool_calls" }
      ]
      const run = (options?: Chat.ChatStreamOptions) =>
        Effect.gen(function* () {
          const { agent } = yield* travelAgent
          const scripted = yield* ScriptedModel.make([ScriptedModel.chunks(chunks), ScriptedModel.reply("3")])
          return yield* collect(agent.chatStream("1+2?", options)).pipe(Effect.provide(scripted.layer))
        })
      const plain = yield* run()
      assert.isFalse(plain.some((event) => event._tag === "ToolCallArgumentsDelta"))
      const asked = yield* run({ argumentDeltas: true })
      assert.deepStrictEqual(
        asked.filter((event) => event._tag === "ToolCallArgumentsDelta"),
        [
          { _tag: "ToolCallArgumentsDelta", step: 1, toolCallId: "a1", delta: '{"a":' },
          { _tag: "ToolCallArgumentsDelta", step: 1, toolCallId: "a1", delta: "1," },
          { _tag: "ToolCallArgumentsDelta", step: 1, toolCallId: "a1", delta: '"b":2}' }
        ]
      )
      assert.deepStrictEqual(finishedOf(asked), finishedOf(plain))
    })
  )

  it.effect("a tool call whose fragments never completed is never run: the stream fails with EXECUTION", () =>
    Effect.gen(function* () {
      const { agent, counts } = yield* travelAgent
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.chunks([
          { toolCalls: [{ index: 0, id: "p1", name: "ping", arguments: "{}" }] },
          { toolCalls: [{ index: 1, id: "b1", arguments: '{"hotel":"X"}' }], finishReason: "tool_calls" }
        ])
      ])
      const exit = yield* Effect.exit(collect(agent.chatStream("go")).pipe(Effect.provide(scripted.layer)))
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "never completed the tool call at index 1")
      assert.deepStrictEqual([counts.ping, counts.book], [0, 0])
    })
  )

  it.effect("each text delta reaches the caller as soon as its chunk arrives, not after the chunks behind it", () =>
    Effect.gen(function* () {
      const { agent } = yield* travelAgent
      const words = ["One ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight."]
      let pulled = 0
      // Every chunk is ready at once (as when a whole HTTP answer arrived in one read).
      async function* chunks() {
        for (const word of words) {
          pulled += 1
          yield { text: word }
        }
        pulled += 1
        yield { finishReason: "stop" }
      }
      const model = LanguageModel.make({ stream: () => chunks() }, { name: "ready" })
      const pulledAt: Array<number> = []
      yield* Stream.runForEach(agent.chatStream("Count"), (event) =>
        Effect.sync(() => {
          if (event._tag === "TextDelta") pulledAt.push(pulled)
        })
      ).pipe(Effect.provideService(LanguageModel.LanguageModel, model))
      // Each delta was seen before the next chunk was pulled from the provider.
      assert.deepStrictEqual(
        pulledAt,
        words.map((_, i) => i + 1)
      )
    })
  )

  it.effect("stopping the stream mid-answer aborts the model call and keeps no partial text", () =>
    Effect.gen(function* () {
      const { agent } = yield* travelAgent
      const history: Array<Prompt.Message> = [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" }
      ]
      const before = JSON.stringify(history)
      let stopped = false
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.chunks([{ text: "Half " }, { text: "an answer" }], { stall: true })
      ])
      const watched = LanguageModel.LanguageModel.of({
        ...scripted.model,
        stream: (request) =>
          scripted.model.stream(request).pipe(Stream.onExit(() => Effect.sync(() => (stopped = true))))
      })
      const seen = yield* collect(
        Stream.takeUntil(
          agent.chatStream(history),
          (event) => event._tag === "TextDelta" && event.delta === "an answer"
        )
      ).pipe(Effect.provideService(LanguageModel.LanguageModel, watched))
      assert.deepStrictEqual(
        seen.map((event) => event._tag),
        ["StepStarted", "TextDelta", "TextDelta"]
      )
      assert.isTrue(stopped)
      assert.strictEqual(JSON.stringify(history), before)
    })
  )

  it.effect("interrupting a streamed turn interrupts its running tool call: nothing keeps running", () =>
    Effect.gen(function* () {
      const state = { started: 0, interrupted: 0, finished: 0 }
      const waiter = Role.make({
        identity: { name: "waiter", goal: "Wait", domain: "test" },
        actions: {
          wait: Action.local({
            description: "Waits forever",
            parameters: {},
            run: () =>
              Effect.sync(() => state.started++).pipe(
                Effect.andThen(Effect.never),
                Effect.onInterrupt(() => Effect.sync(() => state.interrupted++)),
                Effect.ensuring(Effect.sync(() => state.finished++))
              )
          })
        }
      })
      const agent = yield* Agent.make({ id: "waiting", roles: [waiter] })
      const scripted = yield* ScriptedModel.make([ScriptedModel.toolCalls([{ id: "w1", name: "wait" }])])
      const fiber = yield* Effect.forkChild(
        Stream.runForEach(agent.chatStream("wait"), () => Effect.void).pipe(Effect.provide(scripted.layer))
      )
      while (state.started === 0) yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(state, { started: 1, interrupted: 1, finished: 1 })
    })
  )

  it.effect("chat events go to the caller only: agent.events carries no text, arguments or results", () =>
    Effect.gen(function* () {
      const { agent } = yield* travelAgent
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([
          { id: "n1", name: "nights", arguments: { checkIn: "2026-05-01", checkOut: "2026-05-09" } }
        ]),
        ScriptedModel.reply("Eight nights in the secret-villa.")
      ])
      const published: Array<Events.Event> = []
      const listener = yield* Effect.forkChild(
        Stream.runForEach(agent.events, (event) => Effect.sync(() => published.push(event)))
      )
      yield* Effect.yieldNow
      const streamed = yield* collect(agent.chatStream("How long?")).pipe(Effect.provide(scripted.layer))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(listener)
      assert.isAbove(streamed.length, 5)
      assert.isAbove(published.length, 0)
      const text = JSON.stringify(published)
      for (const secret of ["secret-villa", "2026-05-09", "Eight nights"]) assert.notInclude(text, secret)
      const tags = new Set(published.map((event) => event._tag))
      for (const tag of ["TextDelta", "ToolCallReady", "ToolCallAnswered", "TurnFinished", "StepStarted"]) {
        assert.isFalse(tags.has(tag as Events.Event["_tag"]), tag)
      }
    })
  )
})

// =============================================================================
// chat and chatStream agree (property)
// =============================================================================

/** One scripted step of a generated turn. */
type Move =
  | { readonly _tag: "Reply"; readonly text: string }
  | { readonly _tag: "Calls"; readonly calls: ReadonlyArray<ScriptedModel.ScriptedToolCall>; readonly text: string }

const callArbitrary: fc.Arbitrary<ScriptedModel.ScriptedToolCall> = fc.oneof(
  fc.record({ name: fc.constant("ping"), arguments: fc.constantFrom("", "{}", "[1]", "nope") }),
  fc.record({
    name: fc.constant("add"),
    arguments: fc.oneof(
      fc.record({ a: fc.integer({ min: -50, max: 50 }), b: fc.integer({ min: -50, max: 50 }) }),
      fc.record({ a: fc.string({ maxLength: 3 }) })
    )
  }),
  fc.record({ name: fc.constant("book"), arguments: fc.record({ hotel: fc.constantFrom("Casa Alfama", "Sol") }) }),
  fc.record({ name: fc.constant("broken") }),
  fc.record({ name: fc.constantFrom("unknown", "secret") }),
  fc.record({ id: fc.constantFrom("", "dup"), name: fc.constant("ping") })
)

const wordsArbitrary = fc.array(fc.constantFrom("Lisbon", "is", "sunny,", "ok.", "🙂", " "), { maxLength: 6 })

const moveArbitrary: fc.Arbitrary<Move> = fc.oneof(
  { weight: 1, arbitrary: wordsArbitrary.map((words) => ({ _tag: "Reply" as const, text: words.join(" ") })) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.array(callArbitrary, { minLength: 1, maxLength: 4 }), wordsArbitrary)
      .map(([calls, words]) => ({ _tag: "Calls" as const, calls, text: words.join(" ") }))
  }
)

const scenarioArbitrary = fc.record({
  moves: fc.array(moveArbitrary, { minLength: 1, maxLength: 5 }),
  maxSteps: fc.integer({ min: 1, max: 6 }),
  approve: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 })
})

const stepOf = (move: Move, n: number): ScriptedModel.Step =>
  move._tag === "Reply"
    ? ScriptedModel.reply(move.text, { usage: { inputTokens: n, outputTokens: 2 } })
    : ScriptedModel.toolCalls(move.calls, { text: move.text, usage: { inputTokens: n, outputTokens: 3 } })

/** Token ids are random and turn ids fresh per turn: compare results with them masked. */
const masked = (results: ReadonlyArray<Chat.ChatResult>) =>
  JSON.parse(
    JSON.stringify(results)
      .replace(/"pendingTokenId":"[^"]*"/g, '"pendingTokenId":"<token>"')
      .replace(/"turnId":"[^"]*"/g, '"turnId":"<turn>"')
  ) as unknown

describe("Chat streams: property", () => {
  it("chat and chatStream (resume and resumeStream) agree on every scripted turn, approvals included", async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const outcome = (streamed: boolean) =>
          Effect.runPromise(
            Effect.gen(function* () {
              const { travel } = fixture()
              const agent = yield* Agent.make({ id: "planner", roles: [travel] })
              const script = [...scenario.moves, { _tag: "Reply" as const, text: "done" }].map(stepOf)
              const scripted = yield* ScriptedModel.make([...script, ...script, ...script, ...script])
              const options = { maxSteps: scenario.maxSteps, concurrency: 1 }
              const turn = (
                chat: Effect.Effect<Chat.ChatResult, unknown, LanguageModel.LanguageModel>,
                stream: Stream.Stream<Chat.ChatEvent, unknown, LanguageModel.LanguageModel>
              ) =>
                Effect.provideService(
                  streamed ? Effect.map(collect(stream), finishedOf) : chat,
                  LanguageModel.LanguageModel,
                  scripted.model
                )
              const results: Array<Chat.ChatResult> = []
              let result = yield* turn(agent.chat("Plan it", options), agent.chatStream("Plan it", options))
              results.push(result)
              let decisionIndex = 0
              for (let pauses = 0; result._tag === "AwaitingApproval" && pauses < 3; pauses++) {
                const decisions: Record<string, Chat.Decision> = {}
                for (const call of result.pending) {
                  decisions[call.toolCallId] = scenario.approve[decisionIndex++ % 8]
                    ? Chat.approve("alice")
                    : Chat.reject("alice", "no")
                }
                result = yield* turn(agent.resume(result.state, decisions), agent.resumeStream(result.state, decisions))
                results.push(result)
              }
              const requests = yield* scripted.requests
              return { results: masked(results), requests: requests.map((request) => request.messages) }
            }).pipe(Effect.scoped)
          )
        const generated = await outcome(false)
        const streamed = await outcome(true)
        assert.deepStrictEqual(streamed, generated)
      }),
      { numRuns: 60 }
    )
  })
})

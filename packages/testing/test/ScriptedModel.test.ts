import { assert, describe, it } from "@effect/vitest"
import { Action, ActionError, Agent, type LanguageModel, Role } from "@rolecraft/core"
import { parseArguments } from "../../core/src/internal/tool/arguments.ts"
import { Duration, Effect, Exit, Fiber, Result, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as ScriptedModel from "../src/ScriptedModel.ts"

const ask = (content: string): LanguageModel.Request => ({ messages: [{ role: "user", content }], action: "ask" })

describe("ScriptedModel", () => {
  it.effect("answers replies in order and records every request", () =>
    Effect.gen(function* () {
      const scripted = yield* ScriptedModel.make(
        [ScriptedModel.reply("one", { usage: { inputTokens: 3, outputTokens: 1 } }), ScriptedModel.reply("two")],
        { model: "scripted-default" }
      )
      const first = yield* scripted.model.generate(ask("a"))
      const second = yield* scripted.model.generate({ ...ask("b"), model: "gpt-x", temperature: 0.2 })
      assert.deepStrictEqual(first, {
        text: "one",
        toolCalls: [],
        usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 },
        finishReason: "stop",
        model: "scripted-default"
      })
      assert.strictEqual(second.model, "gpt-x")
      const requests = yield* scripted.requests
      assert.deepStrictEqual(
        requests.map((request) => [request.messages[0]?.content, request.temperature]),
        [
          ["a", undefined],
          ["b", 0.2]
        ]
      )
      yield* scripted.assertDone
    })
  )

  it.effect('tool calls get generated ids unless given; arguments are sent raw ("", malformed) or as JSON', () =>
    Effect.gen(function* () {
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([
          { name: "nights", arguments: { checkIn: "2026-11-02" } },
          { name: "get_server_version", arguments: "" },
          { name: "search", arguments: '{"q": "oslo"' }
        ]),
        ScriptedModel.toolCalls([{ name: "nights" }, { id: "mine", name: "book", arguments: "null" }])
      ])
      const first = yield* scripted.model.generate(ask("a"))
      const second = yield* scripted.model.generate(ask("b"))
      assert.deepStrictEqual(first.toolCalls, [
        { id: "call_1", name: "nights", arguments: '{"checkIn":"2026-11-02"}' },
        { id: "call_2", name: "get_server_version", arguments: "" },
        { id: "call_3", name: "search", arguments: '{"q": "oslo"' }
      ])
      assert.strictEqual(first.finishReason, "tool_calls")
      assert.deepStrictEqual(second.toolCalls, [
        { id: "call_4", name: "nights", arguments: "{}" },
        { id: "mine", name: "book", arguments: "null" }
      ])
      // What chat will do with them (part B): strict parsing per call.
      assert.isTrue(Result.isSuccess(parseArguments(first.toolCalls[1]?.arguments, { tool: "v" })))
      assert.isTrue(Result.isFailure(parseArguments(first.toolCalls[2]?.arguments, { tool: "s" })))
    })
  )

  it.effect("failures: a status maps like the openai layer; an ActionError passes; anything else is EXECUTION", () =>
    Effect.gen(function* () {
      const own = new ActionError.Timeout({ action: "ask", message: "slow", after: Duration.seconds(1) })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.fail(429, { retryAfter: "2 seconds" }),
        ScriptedModel.fail(500),
        ScriptedModel.fail(401),
        ScriptedModel.fail(own),
        ScriptedModel.fail(new Error("socket hang up"))
      ])
      const errors = []
      for (let i = 0; i < 5; i++) errors.push(yield* Effect.flip(scripted.model.generate(ask("q"))))
      assert.deepStrictEqual(
        errors.map((error) => [error._tag, "status" in error ? error.status : undefined]),
        [
          ["TransientFailure", 429],
          ["TransientFailure", 500],
          ["ExecutionFailure", 401],
          ["Timeout", undefined],
          ["ExecutionFailure", undefined]
        ]
      )
      const limited = errors[0]
      assert.strictEqual(
        limited?._tag === "TransientFailure" &&
          limited.retryAfter !== undefined &&
          Duration.toMillis(limited.retryAfter),
        2000
      )
      assert.strictEqual(errors[3], own)
      assert.include(errors[4]?.message, "socket hang up")
    })
  )

  it.effect("asking more often than scripted fails the call, and assertDone reports it", () =>
    Effect.gen(function* () {
      const scripted = yield* ScriptedModel.make([ScriptedModel.reply("only")])
      yield* scripted.model.generate(ask("a"))
      const error = yield* Effect.flip(scripted.model.generate(ask("b")))
      assert.instanceOf(error, ActionError.ExecutionFailure)
      assert.strictEqual(error.message, "scripted model exhausted: asked 2 times, scripted 1")
      const mismatch = yield* Effect.flip(scripted.assertDone)
      assert.strictEqual(mismatch.message, "scripted model exhausted: asked 2 times, scripted 1")
      assert.deepStrictEqual([mismatch.asked, mismatch.scripted], [2, 1])
      assert.strictEqual((yield* scripted.requests).length, 2)
    })
  )

  it.effect("assertDone fails when replies were left unused", () =>
    Effect.gen(function* () {
      const scripted = yield* ScriptedModel.make([ScriptedModel.reply("a"), ScriptedModel.reply("b")])
      yield* scripted.model.generate(ask("a"))
      const mismatch = yield* Effect.flip(scripted.assertDone)
      assert.strictEqual(mismatch.message, "scripted model: 1 of 2 scripted replies left unused (asked 1 times)")
    })
  )

  it.effect("respond computes a step from the request; delayed answers on the TestClock and can time out", () =>
    Effect.gen(function* () {
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.respond((request) => ScriptedModel.reply(`echo: ${request.messages[0]?.content}`)),
        ScriptedModel.delayed("10 seconds", ScriptedModel.reply("late"))
      ])
      assert.strictEqual((yield* scripted.model.generate(ask("hi"))).text, "echo: hi")
      const fiber = yield* Effect.forkChild(scripted.model.generate(ask("slow")).pipe(Effect.timeout("5 seconds")))
      yield* TestClock.adjust("6 seconds")
      assert.isTrue(Exit.isFailure(yield* Fiber.await(fiber)))
    })
  )

  it.effect("delayed delivers its reply once the delay has passed on the TestClock, not before", () =>
    Effect.gen(function* () {
      const scripted = yield* ScriptedModel.make([ScriptedModel.delayed("10 seconds", ScriptedModel.reply("late"))])
      const fiber = yield* Effect.forkChild(scripted.model.generate(ask("slow")))
      yield* TestClock.adjust("9999 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      assert.strictEqual((yield* Fiber.join(fiber)).text, "late")
      yield* scripted.assertDone
    })
  )

  // On the live clock: a forked call and one TestClock.adjust race (the adjust can come before the retry's sleep is
  // scheduled, and then the sleep never ends); the retry's real 1 s wait costs a second.
  it.live("runs the whole pipeline: an llm action under a retry policy, layer and Recording", () =>
    Effect.gen(function* () {
      const role = Role.make({
        identity: { name: "travel", goal: "Plan trips", domain: "travel" },
        spec: { model: { name: "gpt-4.1-mini" } },
        actions: {
          packingTip: Action.llm({
            description: "Write a two-sentence packing tip for the trip",
            parameters: { destination: Schema.String, month: Schema.String },
            temperature: 0.3
          }).pipe(Action.resilience({ retry: { maxAttempts: 1, initialDelay: "1 second", jitter: false } }))
        }
      })
      const program = Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "planner", roles: [role] })
        const response = yield* agent.execute({
          action: "packingTip",
          params: { destination: "Oslo", month: "November" }
        })
        const recording = yield* ScriptedModel.Recording
        yield* recording.assertDone
        return { response, requests: yield* recording.requests }
      }).pipe(
        Effect.scoped,
        Effect.provide(
          ScriptedModel.layer([
            ScriptedModel.fail(429),
            ScriptedModel.reply("Pack wool layers. Bring a rain shell.", {
              usage: { inputTokens: 30, outputTokens: 9 }
            })
          ])
        )
      )
      const { response, requests } = yield* program
      assert.strictEqual(response.value, "Pack wool layers. Bring a rain shell.")
      assert.deepStrictEqual(response.usage, { inputTokens: 30, outputTokens: 9, totalTokens: 39 })
      assert.strictEqual(requests.length, 2)
      assert.deepStrictEqual(requests[1], {
        messages: [
          {
            role: "user",
            content: "Write a two-sentence packing tip for the trip\n\nInput:\ndestination: Oslo\nmonth: November"
          }
        ],
        action: "packingTip",
        temperature: 0.3,
        model: "gpt-4.1-mini"
      })
    })
  )
})

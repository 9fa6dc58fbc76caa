/**
 * C56, for its kind: a refusal is an answer, with one outcome wherever a model's reply is used — EXECUTION
 * "<action>: the model refused: <text>", the refusal's text kept as the error's `excerpt`, never a decode
 * error and never a run tool call. A table of every place a reply is read (`chat`, `chatStream`, each with and
 * without an `output` schema, a later step after tool calls, an llm action with and without `success`) crossed
 * with how a refusal arrives (content `null`, content `""`, content text beside the refusal, tool calls beside
 * it), through the real `openai` SDK against a local endpoint (streamed as `delta.refusal` chunks by
 * `chatStream`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import type { ActionError, Chat } from "@rolecraft/core"
import { ChatCompletionsServer as Server } from "@rolecraft/testing"
import { Effect, Exit, Schema, Stream } from "effect"
import { fixture } from "../../packages/core/test/support/TravelRole.ts"
import { openAiOn } from "../support/openai.ts"

const refusal = "I can't help with that request."

const beside = { id: "c1", type: "function", function: { name: "add", arguments: '{"a":1,"b":2}' } }

/** A refusal beside a tool call, as one body (not streamed) or as the chunks of a stream. */
const refusalWithCall = (streaming: boolean): Server.Step => {
  const base = { id: "r", created: 0, model: "gpt-test" }
  if (!streaming) {
    return Server.raw(
      JSON.stringify({
        ...base,
        object: "chat.completion",
        choices: [
          {
            index: 0,
            finish_reason: "tool_calls",
            message: { role: "assistant", content: null, refusal, tool_calls: [beside] }
          }
        ]
      })
    )
  }
  const chunk = (delta: object, finish: string | null = null) => ({
    ...base,
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish }]
  })
  return Server.chunks([
    chunk({ role: "assistant", content: null }),
    chunk({ refusal: "I can't help " }),
    chunk({ refusal: "with that request." }),
    chunk({ tool_calls: [{ index: 0, ...beside }] }),
    chunk({}, "tool_calls")
  ])
}

/** How a refusal arrives on the wire. */
const forms: ReadonlyArray<{ readonly name: string; readonly step: (streaming: boolean) => Server.Step }> = [
  { name: "content null", step: () => Server.reply(null, { refusal }) },
  { name: 'content ""', step: () => Server.reply("", { refusal }) },
  { name: "content text beside it", step: () => Server.reply('{"city":"Paris"}', { refusal }) },
  { name: "tool calls beside it", step: refusalWithCall }
]

const Trip = Schema.Struct({ city: Schema.String })

const refusedWith = (exit: Exit.Exit<unknown, unknown>, action: string) => {
  assert.isTrue(Exit.isFailure(exit), `a refusal should fail: ${String(exit)}`)
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  assert.strictEqual(reason?._tag, "Fail", String(reason))
  const error = (reason as { readonly error: ActionError.ActionError }).error
  assert.strictEqual(error._tag, "ExecutionFailure", error.message)
  assert.strictEqual(error.message, `${action}: the model refused: ${refusal}`)
  assert.strictEqual(error._tag === "ExecutionFailure" ? error.excerpt : undefined, refusal, "the refusal is kept")
}

/** Where a reply is read in a chat turn: the turn's options, and whether a tool step comes first. */
const places: ReadonlyArray<{ readonly name: string; readonly options: Chat.ChatOptions; readonly later: boolean }> = [
  { name: "text answer", options: {}, later: false },
  { name: "structured output", options: { output: Trip }, later: false },
  { name: "a later step, after a tool call", options: {}, later: true },
  { name: "structured output, a later step", options: { output: Trip }, later: true }
]

describe("C56: a refusal is one outcome, EXECUTION 'the model refused', with its text", () => {
  for (const streaming of [false, true]) {
    const how = streaming ? "chatStream" : "chat"
    for (const place of places) {
      for (const form of forms) {
        it.live(`${how}, ${place.name}, ${form.name}`, () =>
          Effect.gen(function* () {
            const { travel, counts } = fixture()
            const server = yield* Server.make([
              ...(place.later ? [Server.toolCalls([{ name: "ping", arguments: {} }])] : []),
              form.step(streaming)
            ])
            const agent = yield* Agent.make({ id: "refusals", roles: [travel] })
            const events: Array<Chat.ChatEvent> = []
            const turn = streaming
              ? Stream.runForEach(agent.chatStream("Plan a trip", place.options), (event) =>
                  Effect.sync(() => events.push(event))
                )
              : Effect.asVoid(agent.chat("Plan a trip", place.options))
            const exit = yield* Effect.exit(Effect.provide(turn, openAiOn(server)))
            refusedWith(exit, "chat")
            assert.strictEqual(counts.add, 0, "a call beside a refusal never runs")
            assert.strictEqual(counts.ping, place.later ? 1 : 0)
            if (streaming) {
              const finished = events.filter((event) => event._tag === "StepFinished")
              assert.strictEqual(finished.length, place.later ? 2 : 1, "the refusing step is reported")
              assert.isFalse(
                events.some((event) => event._tag === "TurnFinished"),
                "no result: the turn failed"
              )
            }
          }).pipe(Effect.scoped)
        )
      }
    }
  }

  const writer = Role.make({
    identity: { name: "writer", goal: "Write", domain: "text" },
    actions: {
      tip: Action.llm({ description: "A packing tip", parameters: { city: Schema.String } }),
      trip: Action.llm({ description: "Plan a trip", parameters: { city: Schema.String }, success: Trip })
    }
  })
  for (const action of ["tip", "trip"] as const) {
    for (const form of forms) {
      it.live(`llm action ${action === "trip" ? "with" : "without"} success, ${form.name}`, () =>
        Effect.gen(function* () {
          const server = yield* Server.make([form.step(false)])
          const agent = yield* Agent.make({ id: "writer", roles: [writer] })
          const exit = yield* Effect.exit(
            Effect.provide(agent.executeAction(action, { city: "Paris" }), openAiOn(server))
          )
          refusedWith(exit, action)
        }).pipe(Effect.scoped)
      )
    }
  }
})

/**
 * A thread's token budget counts everything a request sends: the system message, the tool schemas and the new
 * input are its fixed part, and the history gets what remains; a budget smaller than the fixed part is VALIDATION
 * naming both sizes, before any model call.
 */
import { assert, describe, it } from "@effect/vitest"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, Schema } from "effect"
import * as Action from "../src/Action.ts"
import * as Agent from "../src/Agent.ts"
import * as History from "../src/History.ts"
import * as Role from "../src/Role.ts"
import * as ThreadStore from "../src/ThreadStore.ts"

/** An agent with `count` tools, each with a description of `words` words and `fields` documented parameters. */
const agentWithTools = (count: number, words: number, fields: number) =>
  Agent.make({
    id: "desk",
    roles: [
      Role.make({
        identity: { name: "desk", goal: "Answer customers", domain: "support" },
        actions: Object.fromEntries(
          Array.from({ length: count }, (_, i) => [
            `tool_${i}`,
            Action.local({
              description: Array.from({ length: words }, (_, w) => `word${(w * 7 + i) % 97}`).join(" "),
              parameters: Object.fromEntries(
                Array.from({ length: fields }, (_, p) => [
                  `field_${p}`,
                  Schema.String.annotate({ description: `the ${p}th field of tool ${i}, in plain words` })
                ])
              ),
              run: () => "ok"
            })
          ])
        )
      })
    ]
  })

const prose = (n: number) => `Exchange ${n}: ${"the customer asked about the order and the delivery date ".repeat(6)}`

describe("a thread's budget counts the tool schemas", () => {
  it.effect("30 tools, 40 past exchanges, 8,000 tokens: every request, schemas included, is within the budget", () =>
    Effect.gen(function* () {
      const agent = yield* agentWithTools(30, 10, 4)
      const turns = 41
      const scripted = yield* ScriptedModel.make(Array.from({ length: turns }, (_, n) => ScriptedModel.reply(prose(n))))
      const options = { thread: { id: "long", budget: { maxTokens: 8_000 } } }
      for (let n = 0; n < turns; n++) yield* agent.chat(prose(n), options).pipe(Effect.provide(scripted.layer))
      const requests = yield* scripted.requests
      const schemas = History.estimateToolTokens(requests[0]?.tools ?? [])
      assert.isAbove(schemas, 3_000, "the tools are a large part of each request")
      for (const request of requests) {
        assert.isAtMost(History.estimateAll(request.messages) + History.estimateToolTokens(request.tools ?? []), 8_000)
      }
      // The history was trimmed to what the tools left: the last request does not carry all 40 exchanges.
      const users = requests.at(-1)?.messages.filter((message) => message.role === "user").length ?? 0
      assert.isBelow(users, turns)
    }).pipe(Effect.provide(ThreadStore.layerMemory))
  )

  it.effect("schemas alone over the budget: VALIDATION naming both sizes, and no model call", () =>
    Effect.gen(function* () {
      const agent = yield* agentWithTools(30, 200, 6)
      const scripted = yield* ScriptedModel.make([ScriptedModel.reply("never")])
      const error = yield* Effect.flip(
        agent
          .chat("Where is my order?", { thread: { id: "small", budget: { maxTokens: 8_000 } } })
          .pipe(Effect.provide(scripted.layer))
      )
      assert.strictEqual(error.category, "VALIDATION")
      assert.strictEqual(error._tag === "ValidationError" ? error.issues[0]?.path : "", "thread.budget.maxTokens")
      assert.match(
        error.message,
        /thread\.budget\.maxTokens is 8000 tokens, less than what every request of the turn sends: \d+ tokens/
      )
      assert.match(error.message, /the tool schemas \d+/)
      assert.deepStrictEqual(yield* scripted.requests, [])
      const kept = yield* Effect.flatMap(Effect.service(ThreadStore.ThreadStore), (store) => store.read("small"))
      assert.strictEqual(kept.exchanges, 0)
    }).pipe(Effect.provide(ThreadStore.layerMemory))
  )
})

/**
 * Claude's signed thinking survives a durable run on Postgres: a `DurableChat` turn through the real
 * `@anthropic-ai/sdk` (against `MessagesServer` on 127.0.0.1) pauses for an approval in one "process" (its own
 * pool, engine and agent), and is decided and finished in the next; the request that finishes it sends the first
 * reply's `thinking` and `redacted_thinking` blocks back first and unchanged, read from the stored state.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { AnthropicLanguageModel } from "@rolecraft/anthropic"
import { ApprovalStore, Chat } from "@rolecraft/core"
import { DurableChat, RunStore } from "@rolecraft/durable"
import { MessagesServer } from "@rolecraft/testing"
import { Effect, Layer, Redacted } from "effect"
import { makeAgent } from "../packages/durable/test/support/refunds.ts"
import { freshDatabase } from "./setup/postgresUrl.ts"

const shardingConfig = {
  shardsPerGroup: 30,
  entityMessagePollInterval: "500 millis",
  shardLockRefreshInterval: "1 second",
  shardLockExpiration: "5 seconds"
} as const

const thinking = [
  { type: "thinking", thinking: "A refund needs a person's yes.", signature: "EqQBCkYIBRgCKkA+durable/sig==" },
  { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/durable" }
] as const

/** One "process": its own Postgres pool, approval store, agent and engine, the Anthropic layer on `baseURL`. */
const process = (url: string, baseURL: string) =>
  Effect.gen(function* () {
    const base = Layer.mergeAll(ApprovalStore.layerSql, DurableChat.layerSingle({ shardingConfig })).pipe(
      Layer.provideMerge(PgClient.layer({ url: Redacted.make(url) }))
    )
    const context = yield* Layer.build(base)
    const agent = yield* makeAgent({ onRefund: () => Effect.void }).pipe(Effect.provide(context))
    const turns = DurableChat.make("support")
    const model = AnthropicLanguageModel.layer({
      model: "claude-durable",
      apiKey: Redacted.make("sk-ant-durable-key"),
      baseURL,
      thinking: { type: "enabled", budgetTokens: 1024 }
    })
    const full = yield* Layer.build(
      turns.layer(agent).pipe(Layer.provide(model), Layer.provide(Layer.succeedContext(context)))
    )
    return <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof base>>) =>
      Effect.provide(effect, Layer.succeedContext(context).pipe(Layer.merge(Layer.succeedContext(full))))
  })

const waitFor = (turns: DurableChat.DurableChat, runId: string, tag: RunStore.RunStatus["_tag"]) =>
  turns.status(runId).pipe(
    Effect.tap(() => Effect.sleep("20 millis")),
    Effect.repeat({ until: (s) => s._tag === tag || RunStore.isFinal(s) })
  )

describe("a durable run on Claude (Postgres, two processes)", () => {
  it.live("the signed thinking of the paused step is sent back unchanged by the process that finishes the run", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("durable_anthropic")
      const server = yield* MessagesServer.make([
        MessagesServer.toolUse([{ id: "toolu_refund", name: "refund", input: { order: "order-9" } }], {
          thinking: [
            { thinking: thinking[0].thinking, signature: thinking[0].signature },
            { redacted: thinking[1].data }
          ]
        }),
        MessagesServer.reply("Refunded order-9.")
      ])
      const turns = DurableChat.make("support")
      const paused = yield* Effect.scoped(
        Effect.gen(function* () {
          const run = yield* process(url, server.baseURL)
          yield* run(turns.start("run-claude", "Refund order-9"))
          return yield* run(waitFor(turns, "run-claude", "AwaitingApproval"))
        })
      )
      assert.strictEqual(paused._tag, "AwaitingApproval", JSON.stringify(paused))
      const final = yield* Effect.scoped(
        Effect.gen(function* () {
          const run = yield* process(url, server.baseURL)
          yield* run(turns.decide("run-claude", { toolu_refund: Chat.approve("alice") }))
          return yield* run(turns.await("run-claude", { pollInterval: "50 millis" }))
        })
      )
      if (final._tag !== "Done" || final.result._tag !== "Completed") return assert.fail(JSON.stringify(final))
      assert.strictEqual(final.result.text, "Refunded order-9.")
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 2)
      const second = requests[1]?.body as {
        readonly messages: ReadonlyArray<{ readonly role: string; readonly content: ReadonlyArray<unknown> }>
      }
      const assistant = second.messages.find((message) => message.role === "assistant")
      assert.deepStrictEqual<unknown>(assistant?.content.slice(0, 2), thinking)
    }).pipe(Effect.scoped)
  )
})

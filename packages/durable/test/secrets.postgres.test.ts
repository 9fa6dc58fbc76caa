// No stored row of a durable run holds a secret the agent knows: a tool that returns the model's key has its answer
// recorded in the run's journal (and its final status) as the model saw it, redacted, in every table of the database.
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, ApprovalStore, Role } from "@rolecraft/core"
import * as Model from "@rolecraft/core/LanguageModel"
import { Effect, Layer, Redacted, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { freshDatabase } from "../../../test/setup/postgresUrl.ts"
import { DurableChat } from "../src/index.ts"

const key = "sk-live-durable-7f3a9c21e5"

const role = Role.make({
  identity: { name: "keys", goal: "Show keys", domain: "support" },
  actions: {
    // A careless tool: it hands the model's key back in its result.
    reveal: Action.local({
      description: "Reveal the key",
      parameters: { what: Schema.String },
      run: ({ what }) => `the ${what} is ${key}`
    })
  }
})

// The model declares its key among its secrets, as a model made for a provider does.
const model = Layer.succeed(
  Model.LanguageModel,
  Model.make(
    (call) =>
      Effect.sync(() => {
        const last = call.request.messages.at(-1)
        return last?.role === "user"
          ? {
              toolCalls: [{ id: "call_1", name: "reveal", arguments: JSON.stringify({ what: "key" }) }],
              finishReason: "tool_calls" as const,
              usage: { inputTokens: 1, outputTokens: 1 }
            }
          : {
              text: `Told: ${last?.content ?? ""}`,
              finishReason: "stop" as const,
              usage: { inputTokens: 1, outputTokens: 1 }
            }
      }),
    { name: "keyed", secrets: [Redacted.make(key)] }
  )
)

describe("a durable run stores no secret the agent knows", () => {
  it.live("a tool answer quoting the model's key is stored redacted: journal, status and the engine's tables", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("durable_secrets")
      const pg = PgClient.layer({ url: Redacted.make(url) })
      const base = yield* Layer.build(
        Layer.mergeAll(
          ApprovalStore.layerSql,
          DurableChat.layerSingle({ shardingConfig: { shardsPerGroup: 30 } })
        ).pipe(Layer.provideMerge(pg))
      )
      const agent = yield* Agent.make({ id: "keys", roles: [role] }).pipe(Effect.provide(base))
      const turns = DurableChat.make("keys")
      const engine = yield* Layer.build(
        turns.layer(agent).pipe(Layer.provide(model), Layer.provide(Layer.succeedContext(base)))
      )
      const run = <A, E>(effect: Effect.Effect<A, E, DurableChat.Services>) =>
        Effect.provide(effect, Layer.succeedContext(base).pipe(Layer.merge(Layer.succeedContext(engine))))
      yield* run(turns.start("run-1", "show me"))
      const final = yield* run(turns.await("run-1", { pollInterval: "20 millis" }))
      assert.strictEqual(final._tag, "Done")
      const sql = (yield* Effect.provide(SqlClient.SqlClient, base)).withoutTransforms()
      // Every text column of every table in the database, read as text: none holds the key.
      const tables = yield* Effect.provide(
        sql<{
          readonly name: string
        }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'`,
        base
      )
      assert.isAbove(tables.length, 3)
      for (const { name } of tables) {
        const rows = yield* Effect.provide(
          sql<{ readonly row: string }>`SELECT t::text AS row FROM ${sql(name)} t`,
          base
        )
        for (const { row } of rows) assert.notInclude(row, key, `table ${name}`)
      }
      const steps = yield* Effect.provide(
        sql<{ readonly body: string }>`SELECT body FROM rolecraft_durable_steps WHERE run_id = ${"run-1"}`,
        base
      )
      // The tool's answer is in the journal, redacted: the row is there, and it is not the key.
      assert.isTrue(steps.some((row) => row.body.includes("the key is [REDACTED]")))
    }).pipe(Effect.scoped)
  )
})

/**
 * The durable example's agent and engine, shared by its two processes: a
 * support agent whose `refund` action needs approval, its approvals in
 * Postgres (`ApprovalStore.layerSql`), and the single-process engine
 * (`DurableChat.layerSingle`) on the same database.
 */
import { PgClient } from "@effect/sql-pg"
import { Action, Agent, ApprovalStore, Role } from "@rolecraft/core"
import { DurableChat } from "@rolecraft/durable"
import { ScriptedModel } from "@rolecraft/testing"
import { Console, Effect, Layer, Redacted, Schema } from "effect"

export const support = DurableChat.make("support")

const refunds = Role.make({
  identity: { name: "refunds", goal: "Refund orders", domain: "support" },
  actions: {
    refund: Action.local({
      description: "Refund an order",
      parameters: { order: Schema.String },
      run: ({ order }) => Effect.as(Console.log(`  [pid ${process.pid}] refund ${order} runs`), `refunded ${order}`)
    }).pipe(Action.requireApproval({ reason: "Refunds move money" }))
  }
})

/**
 * Runs `program` in a process whose model answers with `script`: the
 * agent's turns registered with the engine, everything on Postgres at `url`.
 */
export const runProcess = <A, E>(
  url: string,
  script: ReadonlyArray<ScriptedModel.Step>,
  program: Effect.Effect<A, E, DurableChat.Services>
): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "support", roles: [refunds] })
      return yield* program.pipe(Effect.provide(support.layer(agent).pipe(Layer.provide(ScriptedModel.layer(script)))))
    }).pipe(
      Effect.scoped,
      Effect.provide(
        Layer.mergeAll(
          ApprovalStore.layerSql,
          // A small demo on one machine: fewer shards than Effect's default 300.
          DurableChat.layerSingle({ shardingConfig: { shardsPerGroup: 30 } })
        ).pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(url) })))
      )
    )
  )

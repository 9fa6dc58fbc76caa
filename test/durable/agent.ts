// The agent of the multi-process proofs (test/durable/process.ts): every model call and every tool run is recorded
// in Postgres by the model and the tools themselves, with the process id and the database's clock.
//
// A run's input is its run id. By its prefix:
//   "tool-slow:…"    the model calls `ship` (no approval), which sleeps TOOL_MS after it has taken effect;
//   "model-slow:…"   the first model call sleeps MODEL_MS after it was recorded, then calls `ship`;
//   "approve-slow:…" the model calls `refund` (needs approval), which sleeps TOOL_MS after it has taken effect;
//   anything else    the model calls `refund`.
// A tool records each run in harness_tool_runs (one row per execution) and its side effect in harness_effects, keyed
// by the call's idempotency key: a second execution with the same key takes no second effect, as a service that
// honours an Idempotency-Key header does.
import { Action, Agent, IdempotencyKey, Role } from "@rolecraft/core"
import { Duration, Effect, Schedule, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { refundModel } from "../../packages/durable/test/support/refunds.ts"

/** Creates the tables the model and the tools record into (two processes at once may collide: retried). */
export const recordTables = (sql: SqlClient.SqlClient) =>
  Effect.retry(
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS harness_model_calls (run_id TEXT NOT NULL, pid INT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())`,
      sql`CREATE TABLE IF NOT EXISTS harness_tool_runs (run_id TEXT NOT NULL, idempotency_key TEXT, pid INT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())`,
      sql`CREATE TABLE IF NOT EXISTS harness_effects (idempotency_key TEXT PRIMARY KEY, run_id TEXT NOT NULL, pid INT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())`
    ]),
    { times: 2 }
  )

const toolMs = () => Duration.millis(Number(process.env.TOOL_MS ?? 3000))
const modelMs = () => Duration.millis(Number(process.env.MODEL_MS ?? 3000))

/**
 * The harness's own writes, retried a few times: after a Postgres restart a pooled connection may be stale, and a
 * tool or model whose own bookkeeping fails would fail the call — a fault of the harness, not of the run.
 */
const counted = <A, E, R>(write: Effect.Effect<A, E, R>) =>
  Effect.orDie(Effect.retry(write, { schedule: Schedule.spaced("200 millis"), times: 10 }))

/** How many times this process ran a tool. */
let executions = 0

/** A tool's run: recorded, its effect taken once per key, then the slow ones sleep. */
const perform = (sql: SqlClient.SqlClient, order: string, slow: boolean) =>
  Effect.gen(function* () {
    const key = yield* IdempotencyKey.IdempotencyKey
    yield* counted(
      sql`INSERT INTO harness_tool_runs (run_id, idempotency_key, pid) VALUES (${order}, ${key ?? null}, ${process.pid})`
    )
    // Without a key every execution is an effect of its own (named by process and count): a run then shows two.
    executions += 1
    yield* counted(sql`INSERT INTO harness_effects (idempotency_key, run_id, pid)
      VALUES (${key ?? `no key ${order} ${process.pid} ${executions}`}, ${order}, ${process.pid}) ON CONFLICT DO NOTHING`)
    if (slow) yield* Effect.sleep(toolMs())
  })

export const makeAgent = (sql: SqlClient.SqlClient) =>
  Agent.make({
    id: "support",
    roles: [
      Role.make({
        identity: { name: "support", goal: "Refund and ship orders", domain: "support" },
        actions: {
          refund: Action.local({
            description: "Refund an order",
            parameters: { order: Schema.String },
            run: ({ order }) => Effect.as(perform(sql, order, order.startsWith("approve-slow:")), `refunded ${order}`)
          }).pipe(Action.requireApproval({ reason: "Refunds move money" })),
          ship: Action.local({
            description: "Ship an order",
            parameters: { order: Schema.String },
            run: ({ order }) => Effect.as(perform(sql, order, true), `shipped ${order}`)
          })
        }
      })
    ]
  })

/**
 * The model (the durable tests' refund model): a user message → a call for it (see the module doc), each call
 * recorded first; a tool answer → a text reply quoting it.
 */
export const model = (sql: SqlClient.SqlClient) =>
  refundModel(
    (request) =>
      Effect.gen(function* () {
        const user = request.messages.find((m) => m.role === "user")?.content ?? ""
        yield* counted(sql`INSERT INTO harness_model_calls (run_id, pid) VALUES (${user}, ${process.pid})`)
        if (request.messages.at(-1)?.role === "user" && user.startsWith("model-slow:")) yield* Effect.sleep(modelMs())
      }),
    {
      name: "scripted-support",
      tool: (user) => (user.startsWith("tool-slow:") || user.startsWith("model-slow:") ? "ship" : "refund")
    }
  )

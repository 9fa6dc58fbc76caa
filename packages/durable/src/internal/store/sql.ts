/**
 * The run store in any database behind `effect/sql`'s `SqlClient` that accepts `INSERT … ON CONFLICT`
 * (Postgres, SQLite), shared by every process that reaches it: a run's status in `rolecraft_durable_runs`
 * (one JSON column; a final status is never overwritten, in one conditional upsert) and its recorded steps in
 * `rolecraft_durable_steps` (the first record of a step stands, in one `INSERT … ON CONFLICT DO NOTHING`).
 * Every statement is guarded at the store boundary: a database that cannot be reached, or a connection that
 * closes, is TRANSIENT naming the store. The client's name transforms are bypassed.
 */
import * as StoreBoundary from "@rolecraft/core/StoreBoundary"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"
import { checkKey, decode, encode, makeWatch, type Service } from "./boundary.ts"

const store = "the durable run store (SQL)"

const runs = "rolecraft_durable_runs"
const steps = "rolecraft_durable_steps"

const runsSql = `CREATE TABLE IF NOT EXISTS ${runs} (
  workflow VARCHAR(200) NOT NULL,
  run_id VARCHAR(200) NOT NULL,
  state VARCHAR(32) NOT NULL,
  body TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (workflow, run_id)
)`

const stepsSql = `CREATE TABLE IF NOT EXISTS ${steps} (
  workflow VARCHAR(200) NOT NULL,
  run_id VARCHAR(200) NOT NULL,
  step VARCHAR(1024) NOT NULL,
  body TEXT NOT NULL,
  recorded_at BIGINT NOT NULL,
  PRIMARY KEY (workflow, run_id, step)
)`

/** A stored body read back: text, or EXECUTION naming the run and the step. */
const bodyOf = (runId: string, step: string, body: unknown): Effect.Effect<string, StoreBoundary.StoreError> =>
  typeof body === "string"
    ? Effect.succeed(body)
    : Effect.fail(
        new StoreBoundary.StoreError({
          store,
          category: "EXECUTION",
          field: "body",
          message: `${store}: the stored step ${JSON.stringify(step)} of run ${JSON.stringify(runId)} does not decode at body: expected text`
        })
      )

/** The store over the `SqlClient` of the context; creates its tables if missing. */
export const make: Effect.Effect<Service, StoreBoundary.StoreError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  // Two processes creating a table at once may collide in the catalog: the second try sees the table.
  yield* StoreBoundary.guard(
    store,
    `create its tables ${runs} and ${steps}`,
    Effect.retry(Effect.andThen(sql.unsafe(runsSql), sql.unsafe(stepsSql)), { times: 2 })
  )
  const r = sql(runs)
  const s = sql(steps)
  const guarded = <A, E, R>(what: string, effect: Effect.Effect<A, E, R>) => StoreBoundary.guard(store, what, effect)
  const { written, watch } = makeWatch()
  return {
    create: (workflow, runId) =>
      Effect.andThen(
        checkKey(store, workflow, runId),
        guarded(
          `create run ${JSON.stringify(runId)}`,
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.map(
              sql<{ readonly run_id: string }>`INSERT INTO ${r} (workflow, run_id, state, body, updated_at)
                VALUES (${workflow}, ${runId}, 'Running', ${encode({ _tag: "Running" })}, ${now})
                ON CONFLICT (workflow, run_id) DO NOTHING RETURNING run_id`,
              (rows) => rows.length === 1
            )
          )
        )
      ),
    get: (workflow, runId) =>
      Effect.andThen(
        checkKey(store, workflow, runId),
        Effect.flatMap(
          guarded(
            `read run ${JSON.stringify(runId)}`,
            sql<{ readonly body: unknown }>`SELECT body FROM ${r} WHERE workflow = ${workflow} AND run_id = ${runId}`
          ),
          (rows) =>
            rows[0] === undefined
              ? Effect.succeed(Option.none())
              : Effect.map(decode(store, runId, rows[0].body), Option.some)
        )
      ),
    set: (workflow, runId, status) =>
      Effect.andThen(
        checkKey(store, workflow, runId),
        guarded(
          `write the status of run ${JSON.stringify(runId)}`,
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.map(
              sql<{ readonly run_id: string }>`INSERT INTO ${r} (workflow, run_id, state, body, updated_at)
                VALUES (${workflow}, ${runId}, ${status._tag}, ${encode(status)}, ${now})
                ON CONFLICT (workflow, run_id) DO UPDATE
                  SET state = excluded.state, body = excluded.body, updated_at = excluded.updated_at
                  WHERE ${r}.state NOT IN ('Done', 'Failed', 'Cancelled')
                RETURNING run_id`,
              (rows) => rows.length === 1
            )
          )
        ).pipe(Effect.tap((wrote) => (wrote ? written(workflow, runId) : Effect.void)))
      ),
    recordStep: (workflow, runId, step, body) =>
      Effect.andThen(
        checkKey(store, workflow, runId, step),
        Effect.flatMap(
          guarded(
            `record step ${JSON.stringify(step)} of run ${JSON.stringify(runId)}`,
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Effect.flatMap(
                sql<{ readonly step: string }>`INSERT INTO ${s} (workflow, run_id, step, body, recorded_at)
                  VALUES (${workflow}, ${runId}, ${step}, ${body}, ${now})
                  ON CONFLICT (workflow, run_id, step) DO NOTHING RETURNING step`,
                (inserted) =>
                  inserted.length === 1
                    ? Effect.succeed<unknown>(body)
                    : // Recorded first by another writer: its body stands.
                      Effect.map(
                        sql<{ readonly body: unknown }>`SELECT body FROM ${s}
                          WHERE workflow = ${workflow} AND run_id = ${runId} AND step = ${step}`,
                        (rows) => rows[0]?.body
                      )
              )
            )
          ),
          (recorded) => bodyOf(runId, step, recorded)
        )
      ),
    readStep: (workflow, runId, step) =>
      Effect.andThen(
        checkKey(store, workflow, runId, step),
        Effect.flatMap(
          guarded(
            `read step ${JSON.stringify(step)} of run ${JSON.stringify(runId)}`,
            sql<{ readonly body: unknown }>`SELECT body FROM ${s}
              WHERE workflow = ${workflow} AND run_id = ${runId} AND step = ${step}`
          ),
          (rows) =>
            rows[0] === undefined
              ? Effect.succeed(Option.none())
              : Effect.map(bodyOf(runId, step, rows[0].body), Option.some)
        )
      ),
    readSteps: (workflow, runId) =>
      Effect.andThen(
        checkKey(store, workflow, runId),
        Effect.flatMap(
          guarded(
            `read the steps of run ${JSON.stringify(runId)}`,
            sql<{ readonly step: unknown; readonly body: unknown }>`SELECT step, body FROM ${s}
              WHERE workflow = ${workflow} AND run_id = ${runId}`
          ),
          (rows) =>
            Effect.map(
              Effect.forEach(rows, (row) =>
                Effect.map(bodyOf(runId, String(row.step), row.body), (body) => [String(row.step), body] as const)
              ),
              (entries): ReadonlyMap<string, string> => new Map(entries)
            )
        )
      ),
    watch
  }
})

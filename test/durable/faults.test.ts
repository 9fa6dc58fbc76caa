// The fault harness (./faults.ts) in `npm test`, bounded for two shared cores; bench/durable.ts runs the long
// variants. Every scenario runs on a Postgres of its own (scripts/postgres.ts), never the test run's shared one:
//
// - bad ids and rows that do not decode, through a cluster client (C52, C53);
// - two processes deciding the same calls at once (C55 b);
// - kill -9 of a runner while its tools run, approved or not (C62, C63);
// - Postgres stopped and started again with turns paused, in a tool and in a model call (C53, C62).
//
// Each asserts side effects per idempotency key (counted by the tools in a table of their own), decisions, and that
// every answer of start, status, decide, cancel and await is typed — never a defect.
import type { DurableChat } from "@rolecraft/durable"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Postgres from "../../scripts/postgres.ts"
import {
  answerOf,
  type Cluster,
  cluster,
  killMidTool,
  restartWithTurnsInFlight,
  startAll,
  turns,
  twoDeciders,
  waitCount
} from "./faults.ts"
import { startPostgres } from "./cleanup.ts"
import { query } from "./harness.ts"

const minutes = (n: number) => n * 60_000

describe("durable runs on a Postgres of their own: ids, rows, deciders, a runner killed mid-tool", () => {
  let pg: (Postgres.Postgres & { readonly stop: () => void }) | undefined
  let c: Cluster | undefined
  const the = () => {
    if (c === undefined) throw new Error("the cluster did not start")
    return c
  }

  beforeAll(async () => {
    pg = await startPostgres()
    c = await cluster(await Postgres.freshDatabase(pg.url, "faults"), { runners: 2, env: { TOOL_MS: "4000" } })
  }, minutes(2))

  afterAll(async () => {
    await c?.close()
    pg?.stop()
  }, minutes(1))

  it(
    "ids a store cannot hold are VALIDATION at runId, never a defect, never one row for two ids",
    async () => {
      const c = the()
      for (const id of ["run\u0000x", "s\uD800x", "s\uDBFFx", "s\uDC00x", "r".repeat(201)]) {
        for (const operation of [
          turns.start(id, "x"),
          turns.status(id),
          turns.decide(id, { call_1: { _tag: "Approve", approver: "alice" } }),
          turns.cancel(id),
          turns.await(id)
        ]) {
          expect(
            answerOf(
              await c.call(
                operation as Effect.Effect<unknown, { category: string; message: string }, DurableChat.Services>
              )
            )
          ).toMatch(/^VALIDATION: \w+: .*runId/)
        }
      }
      const rows = await query(c.url, (sql) => sql`SELECT run_id FROM rolecraft_durable_runs WHERE run_id LIKE 's%x'`)
      expect(rows).toEqual([])
    },
    minutes(1)
  )

  it(
    "a stored status or step that does not decode is EXECUTION naming the run; the run ends Failed",
    async () => {
      const c = the()
      await startAll(c, ["corrupt:0", "corrupt:1"])
      await waitCount(
        c.url,
        `SELECT count(*) AS n FROM rolecraft_durable_runs WHERE state = 'AwaitingApproval' AND run_id LIKE 'corrupt:%'`,
        2
      )
      // One status edited to a shape it cannot have, one cut short.
      await query(c.url, (sql) =>
        Effect.all([
          sql`UPDATE rolecraft_durable_runs SET body = '{"_tag":"AwaitingApproval","pending":"oops","segment":0}'
          WHERE run_id = 'corrupt:0'`,
          sql`UPDATE rolecraft_durable_runs SET body = '{"_tag":"Awaiting' WHERE run_id = 'corrupt:1'`
        ])
      )
      for (const id of ["corrupt:0", "corrupt:1"]) {
        for (const [name, operation] of [
          ["status", turns.status(id)],
          ["decide", turns.decide(id, { call_1: { _tag: "Approve", approver: "alice" } })],
          ["cancel", turns.cancel(id)],
          ["await", turns.await(id)],
          ["start", turns.start(id, id)]
        ] as const) {
          const said = answerOf(
            await c.call(
              operation as Effect.Effect<unknown, { category: string; message: string }, DurableChat.Services>
            )
          )
          expect(said, name).toContain(
            `EXECUTION: ${name}: the durable run store (SQL): the stored status of run "${id}"`
          )
        }
      }
      // A recorded step edited while its run waits: the run reads it when it wakes, and ends Failed naming it.
      await startAll(c, ["corrupt-step:0"])
      await waitCount(
        c.url,
        `SELECT count(*) AS n FROM rolecraft_durable_runs WHERE state = 'AwaitingApproval' AND run_id = 'corrupt-step:0'`,
        1
      )
      await query(
        c.url,
        (sql) =>
          sql`UPDATE rolecraft_durable_steps SET body = '{"tools":7}' WHERE run_id = 'corrupt-step:0' AND step = 'model/1'`
      )
      expect(
        answerOf(await c.call(turns.decide("corrupt-step:0", { call_1: { _tag: "Approve", approver: "alice" } })))
      ).toBe("ok")
      const final = await c.call(turns.await("corrupt-step:0", { pollInterval: "50 millis" }))
      expect(final._tag === "Success" ? final.value : answerOf(final)).toMatchObject({
        _tag: "Failed",
        category: "EXECUTION",
        message: expect.stringContaining('the stored step "model/1" of run "corrupt-step:0" does not decode at tools')
      })
    },
    minutes(2)
  )

  it(
    "two processes decide the same calls at once: one decision per call stands, the other is APPROVAL",
    async () => {
      const figures = await twoDeciders(the(), 6)
      for (const [id, alice, bob] of figures.answers) {
        const run = figures.runs.find((r) => r.runId === id)
        expect(
          [alice, bob].filter((a) => a === "ok"),
          `${id}: ${alice} / ${bob}`
        ).toHaveLength(1)
        if (alice === "ok") {
          expect(bob).toBe("APPROVAL: decide: call_1 (refund) is already decided: approved by alice")
          expect(run).toMatchObject({ state: "Done", effects: 1, toolRuns: 1, toolAnswer: `refunded ${id}` })
        } else {
          expect(alice).toBe("APPROVAL: decide: call_1 (refund) is already decided: rejected by bob: no")
          expect(run).toMatchObject({ state: "Done", effects: 0, toolRuns: 0 })
          expect(run?.toolAnswer).toContain("rejected by bob: no")
        }
        expect(run?.modelCalls).toBe(2)
      }
    },
    minutes(2)
  )

  it(
    "kill -9 of a runner mid-tool, approved or not: every run ends done, one effect per key, model calls 2",
    async () => {
      const figures = await killMidTool(the(), { plain: 4, approved: 4 })
      const context = `${JSON.stringify(figures.runs, null, 1)}\n${figures.logs.slice(-3000)}`
      expect(figures.approvals, context).toEqual(figures.approvals.map(() => "ok"))
      const taken = figures.runs.filter((r) => r.firstToolPid === figures.victim)
      // The killed runner was running tools: those calls ran again elsewhere, with the same key.
      expect(taken.length, context).toBeGreaterThan(0)
      for (const run of figures.runs) {
        expect(run, context).toMatchObject({ state: "Done", modelCalls: 2, keys: 1, effects: 1 })
        expect(run.toolRuns, run.runId).toBe(run.firstToolPid === figures.victim ? 2 : 1)
        // An approved call cut by the crash proceeds when run again: never APPROVAL "used" for work that was done.
        expect(run.toolAnswer, run.runId).toBe(
          run.runId.startsWith("approve-slow:") ? `refunded ${run.runId}` : `shipped ${run.runId}`
        )
      }
    },
    minutes(3)
  )
})

describe("durable runs on a Postgres of their own: Postgres restarted with turns in flight", () => {
  it(
    "paused, in a tool, in a model call: every run ends done, no finished step repeated, every answer typed",
    async () => {
      const figures = await restartWithTurnsInFlight({
        paused: 3,
        inTool: 3,
        inModel: 3,
        outageMs: 3000,
        toolMs: 4000,
        modelMs: 4000
      })
      const context = `${JSON.stringify(figures.runs, null, 1)}\n${figures.logs.slice(-3000)}`
      for (const run of figures.runs) {
        // Each tool took its effect once, with one key; a step that had finished was found, not done again.
        expect(run, context).toMatchObject({ state: "Done", modelCalls: 2, toolRuns: 1, keys: 1, effects: 1 })
      }
      // While Postgres was down every operation said TRANSIENT, naming what could not be reached.
      expect(figures.duringOutage.map(([name]) => name)).toEqual(["start", "status", "decide", "cancel", "await"])
      for (const [name, said] of figures.duringOutage) {
        expect(said, name).toMatch(new RegExp(`^TRANSIENT: ${name}: the durable run store \\(SQL\\) could not`))
      }
      expect(figures.approvals, context).toEqual(figures.paused.map(() => "ok"))
    },
    minutes(3)
  )
})

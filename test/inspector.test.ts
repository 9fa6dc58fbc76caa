/**
 * The run inspector over real HTTP, without a browser: an app's turns
 * exported by Effect's own OTLP/HTTP JSON exporter reach it as runs and span
 * trees (a nested agent's path, a handoff, tokens); a paused turn's call is
 * listed with its arguments and the tool result before it; a decision made
 * through the inspector is what `StoredDecisions` hands the app's resume, the
 * call runs once, and deciding it again is refused naming who decided. An app
 * whose inspector is down keeps running its turns.
 */
import { assert, describe, it } from "@effect/vitest"
import { ApprovalStore, StoredDecisions, ThreadStore } from "@rolecraft/core"
import { Inspector, Runs } from "@rolecraft/inspector"
import { LocalHttpServer, ScriptedModel } from "@rolecraft/testing"
import { Effect, Fiber, Layer, Schedule } from "effect"
import { FetchHttpClient } from "effect/http"
import { Otlp } from "effect/observability"
import * as App from "./support/inspectorApp.ts"
import * as RawHttp from "./support/rawHttp.ts"

/** Polls `read` every 50 ms until `done` holds (at most 10 s). */
const eventually = <A>(read: Effect.Effect<A>, done: (a: A) => boolean) =>
  Effect.repeat(read, { schedule: Schedule.spaced("50 millis"), until: done }).pipe(
    Effect.timeout("10 seconds"),
    Effect.orDie
  )

const pageToken = (html: string) => html.match(/name="inspector-token" content="([^"]+)"/)?.[1] ?? ""

describe("the run inspector (HTTP)", () => {
  it.live(
    "shows the turns an app exports, lists its paused call with what came before, and its decision is the resume's",
    () =>
      Effect.gen(function* () {
        const store = ApprovalStore.makeMemory()
        const inspector = yield* Inspector.start({ approvals: store, pollInterval: "100 millis" })
        const own = new URL(inspector.url).host
        const counts = { booked: 0 }
        const model = yield* App.script()
        const app = Layer.mergeAll(model.layer, App.storeLayer(store))

        // The app: its exporter is open for the whole test (its layer's scope), turns run in it.
        const { first, paused } = yield* Effect.gen(function* () {
          const lead = yield* App.agents(counts)
          const first = yield* lead.chat("Plan a stay in Lisbon for Ann")
          const paused = yield* lead.chat("Book the Avenida for Bob, 2 nights")
          return { lead, first, paused }
        }).pipe(Effect.provide(App.exporter(inspector.url)), Effect.provide(app), Effect.scoped)
        assert.strictEqual(first._tag, "Completed")
        assert.strictEqual(paused._tag, "AwaitingApproval")
        if (paused._tag !== "AwaitingApproval") return

        // 1. The runs: two turns of "lead", the latest first.
        const turns = yield* eventually(
          Effect.map(inspector.traces.spans, Runs.turns),
          (all) => all.length === 2 && all[1]?.modelCalls === 5 && all[0]?.toolCalls === 2
        )
        assert.deepStrictEqual(
          turns.map((turn) => [turn.agent, turn.status, turn.modelCalls, turn.toolCalls]),
          [
            ["lead", "AwaitingApproval", 2, 2],
            ["lead", "Completed", 5, 4]
          ]
        )
        const done = turns[1]
        assert.isDefined(done)
        if (done === undefined) return
        // Every model call's tokens, the scout's and the booker's included.
        assert.deepStrictEqual(done.tokens, { input: 465, output: 43, cached: undefined, reasoning: undefined })

        // 2. The first turn's tree: the scout nested under its call, the booker's turn after the handoff.
        const nodes = Runs.tree(yield* inspector.traces.spans, done.traceId, done.spanId)
        const named = (name: string) => nodes.filter((node) => node.name === name)
        assert.deepStrictEqual(
          named("invoke_agent scout").map((node) => node.path),
          [["lead", "scout"]]
        )
        assert.deepStrictEqual(
          named("execute_tool weather").map((node) => [node.path, node.attributes["gen_ai.tool.call.result"]]),
          [[["lead", "scout"], "Lisbon: sunny, 24 °C"]]
        )
        assert.strictEqual(named("invoke_agent booker").length, 1)
        assert.strictEqual(named("execute_tool transfer_to_booker").length, 1)
        assert.isTrue(
          (named("invoke_agent scout")[0]?.depth ?? 0) > (named("execute_tool scout")[0]?.depth ?? 0),
          "the scout's turn is inside its call"
        )

        // 3. The inbox: the booking with its exact arguments, its reason, and the note lookup returned before it.
        const listed = yield* RawHttp.send("GET", `${inspector.url}/api/approvals`, { host: own })
        const { pending } = JSON.parse(listed.body) as {
          pending: ReadonlyArray<{
            key: string
            agents: ReadonlyArray<string>
            action: string
            arguments: string
            reason: string
            before: ReadonlyArray<{ tool: string; result: string }>
          }>
        }
        assert.strictEqual(pending.length, 1)
        const [call] = pending
        assert.isDefined(call)
        if (call === undefined) return
        assert.deepStrictEqual(
          { agents: call.agents, action: call.action, arguments: JSON.parse(call.arguments), reason: call.reason },
          {
            agents: ["lead"],
            action: "book",
            arguments: { hotel: "Avenida", nights: 2 },
            reason: "Bookings cost money"
          }
        )
        assert.deepStrictEqual(
          call.before.map((result) => [result.tool, result.result]),
          [["lookup", App.note]]
        )
        assert.strictEqual(call.key, ApprovalStore.keyOf(paused.pending[0]?.pendingTokenId ?? ""))

        // 4. The app waits for the store's decision, then resumes with it.
        const resumed = yield* Effect.gen(function* () {
          const lead = yield* App.agents(counts)
          const { decisions } = yield* StoredDecisions.whenDecided(paused.state, {
            schedule: Schedule.spaced("50 millis")
          })
          return yield* lead.resume(paused.state, decisions)
        }).pipe(Effect.provide(app), Effect.scoped, Effect.forkChild)

        const home = yield* RawHttp.send("GET", `${inspector.url}/`, { host: own })
        const headers = {
          host: own,
          origin: `http://${own}`,
          "content-type": "application/json",
          "x-inspector-token": pageToken(home.body)
        }
        const decide = (approver: string, decision: "approve" | "reject") =>
          RawHttp.send(
            "POST",
            `${inspector.url}/api/decide`,
            headers,
            JSON.stringify({ key: call.key, decision, approver })
          )
        const approved = yield* decide("alice", "approve")
        assert.deepStrictEqual([approved.status, JSON.parse(approved.body)], [200, { recorded: "approved by alice" }])

        const result = yield* Fiber.join(resumed)
        assert.strictEqual(result._tag, "Completed")
        assert.strictEqual(counts.booked, 1, "the approved call ran once")

        // 5. Deciding again is refused, naming who decided; nothing runs again.
        const again = yield* decide("alice", "approve")
        assert.deepStrictEqual(
          [again.status, JSON.parse(again.body)],
          [409, { refused: "already decided: approved by alice (the call has run)", check: "decided" }]
        )
        const other = yield* decide("mallory", "reject")
        assert.strictEqual(other.status, 409)
        assert.include(JSON.parse(other.body).refused, "approved by alice")
        assert.strictEqual(counts.booked, 1)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("receives gzip bodies and metrics: the token usage histogram of the app's model calls", () =>
    Effect.gen(function* () {
      const inspector = yield* Inspector.start()
      const model = yield* App.script()
      yield* Effect.gen(function* () {
        const lead = yield* App.agents({ booked: 0 })
        yield* lead.chat("Plan a stay in Lisbon for Ann")
      }).pipe(
        Effect.provide(
          Otlp.layerJson({
            baseUrl: inspector.url,
            compression: "gzip",
            resource: { serviceName: "zipped" },
            tracerExportInterval: "100 millis",
            metricsExportInterval: "100 millis"
          }).pipe(Layer.provide(FetchHttpClient.layer))
        ),
        Effect.provide(Layer.mergeAll(model.layer, ApprovalStore.layerMemory)),
        Effect.scoped
      )
      const turns = yield* eventually(Effect.map(inspector.traces.spans, Runs.turns), (all) => all[0]?.modelCalls === 5)
      assert.deepStrictEqual(
        turns.map((turn) => [turn.service, turn.status, turn.modelCalls]),
        [["zipped", "Completed", 5]]
      )
      // Metrics are cumulative over the process (earlier tests' calls count too) and exported on an interval (an
      // export may catch the turn part-way): this turn's 5 calls and 465 input tokens are in it once it is whole.
      const inputUsage = Effect.map(inspector.traces.metrics, (all) =>
        all
          .find((metric) => metric.name === "gen_ai.client.token.usage" && metric.service === "zipped")
          ?.points.find((point) => point.attributes["gen_ai.token.type"] === "input")
      )
      const input = yield* eventually(inputUsage, (point) => (point?.count ?? 0) >= 5 && (point?.sum ?? 0) >= 465)
      assert.strictEqual(input?.attributes["gen_ai.provider.name"], "scripted")
    }).pipe(Effect.scoped)
  )

  it.live(
    "opens a thread of the thread store by id: its exchanges, messages and the calls its last turn waits on",
    () =>
      Effect.gen(function* () {
        const threads = ThreadStore.makeMemory()
        const store = ApprovalStore.makeMemory()
        const inspector = yield* Inspector.start({ threads, approvals: store })
        const own = new URL(inspector.url).host
        const model = yield* ScriptedModel.make([
          ScriptedModel.toolCalls([{ id: "call_book", name: "book", arguments: { hotel: "Avenida", nights: 2 } }])
        ])
        const paused = yield* Effect.gen(function* () {
          const lead = yield* App.agents({ booked: 0 })
          return yield* lead.chat("Book the Avenida, 2 nights", { thread: "trip-1" })
        }).pipe(
          Effect.provide(
            Layer.mergeAll(model.layer, App.storeLayer(store), Layer.succeed(ThreadStore.ThreadStore, threads))
          ),
          Effect.scoped
        )
        assert.strictEqual(paused._tag, "AwaitingApproval")
        const answer = yield* RawHttp.send("GET", `${inspector.url}/api/thread?id=trip-1`, { host: own })
        assert.strictEqual(answer.status, 200, answer.body)
        const { configured, thread } = JSON.parse(answer.body)
        assert.isTrue(configured)
        assert.deepStrictEqual(
          [
            thread.id,
            thread.exchanges,
            thread.messages[0],
            thread.pending.map((call: { action: string }) => call.action)
          ],
          ["trip-1", 1, { role: "user", content: "Book the Avenida, 2 nights" }, ["book"]]
        )
        const missing = yield* RawHttp.send("GET", `${inspector.url}/api/thread`, { host: own })
        assert.strictEqual(missing.status, 400)
        const rebound = yield* RawHttp.send("GET", `${inspector.url}/api/thread?id=trip-1`, {
          host: `rebind.test:${new URL(inspector.url).port}`
        })
        assert.strictEqual(rebound.status, 403)
      }).pipe(Effect.scoped)
  )

  it.live("an app whose inspector is down keeps running: export failures never fail a turn", () =>
    Effect.gen(function* () {
      // A port that was just free: nothing listens there.
      const closed = yield* Effect.scoped(
        Effect.map(
          LocalHttpServer.serve((_request, response) => response.end()),
          (server) => server.url
        )
      )
      const counts = { booked: 0 }
      const model = yield* App.script()
      const turns = yield* Effect.gen(function* () {
        const lead = yield* App.agents(counts)
        const first = yield* lead.chat("Plan a stay in Lisbon for Ann")
        const second = yield* lead.chat("Book the Avenida for Bob, 2 nights")
        // Long enough for several export attempts to fail.
        yield* Effect.sleep("400 millis")
        return [first._tag, second._tag]
      }).pipe(
        Effect.provide(App.exporter(closed)),
        Effect.provide(Layer.mergeAll(model.layer, ApprovalStore.layerMemory)),
        Effect.scoped,
        Effect.timeout("20 seconds")
      )
      assert.deepStrictEqual(turns, ["Completed", "AwaitingApproval"])
    })
  )
})

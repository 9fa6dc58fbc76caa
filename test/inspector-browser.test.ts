/**
 * The run inspector in a real browser: headless Debian chromium driven by
 * playwright-core, against the inspector's own server, fed by an app that
 * exports its spans with Effect's OTLP/HTTP JSON exporter. The app's first
 * turn uses a nested agent and hands off: the page shows the turn, its tree
 * with the nested agent's path, its tokens. The second turn pauses on a
 * booking: the inbox shows it with its arguments and the tool result that
 * came before it; approving it on the page lets the app's resume (taking its
 * decisions from the store) run the booking once; approving again is refused
 * naming who decided. Saves docs/inspector-runs.png and
 * docs/inspector-approval.png.
 *
 * Needs /usr/bin/chromium (scripts/chromium.sh installs it).
 */
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { ApprovalStore, StoredDecisions } from "@rolecraft/core"
import { Inspector } from "@rolecraft/inspector"
import { Effect, Fiber, Layer, Schedule } from "effect"
import { type Browser, chromium, type Locator } from "playwright-core"
import * as App from "./support/inspectorApp.ts"

const executablePath = "/usr/bin/chromium"
const args = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]
const screenshot = (name: string) => fileURLToPath(new URL(`../docs/${name}`, import.meta.url))

const launch = Effect.acquireRelease(
  Effect.promise(() => chromium.launch({ executablePath, args })),
  (browser: Browser) => Effect.promise(() => browser.close())
)

const textOf = (locator: Locator) => Effect.promise(async () => (await locator.textContent()) ?? "")
const attributeOf = (locator: Locator, name: string) => Effect.promise(() => locator.getAttribute(name))
const waitFor = (locator: Locator) => Effect.promise(() => locator.waitFor({ timeout: 20_000 }))

describe("the run inspector in headless chromium", () => {
  it.live(
    "shows a turn with its nested agent and tokens, and its paused call is approved on the page once",
    () =>
      Effect.gen(function* () {
        assert.isTrue(existsSync(executablePath), `${executablePath} is missing: run scripts/chromium.sh`)
        const store = ApprovalStore.makeMemory()
        const inspector = yield* Inspector.start({ approvals: store, pollInterval: "100 millis" })
        const counts = { booked: 0 }
        const model = yield* App.script()
        const app = Layer.mergeAll(model.layer, App.storeLayer(store), App.exporter(inspector.url))
        const browser = yield* launch
        const page = yield* Effect.promise(() => browser.newPage({ viewport: { width: 1280, height: 900 } }))
        yield* Effect.promise(() => page.goto(inspector.url))
        yield* waitFor(page.locator('#live[data-state="open"]'))

        yield* Effect.gen(function* () {
          const lead = yield* App.agents(counts)

          // 1. A turn with a nested agent and a handoff appears without a reload.
          const first = yield* lead.chat("Plan a stay in Lisbon for Ann")
          assert.strictEqual(first._tag, "Completed")
          const row = page.locator('tr.turn[data-agent="lead"][data-status="Completed"]')
          yield* waitFor(row)
          assert.strictEqual(yield* textOf(row.locator(".model-calls")), "5")
          assert.strictEqual(yield* textOf(row.locator(".tool-calls")), "4")
          assert.strictEqual(yield* textOf(row.locator(".tokens")), "465 in · 43 out")
          yield* Effect.promise(() => row.click())
          const scout = page.locator('.node[data-name="invoke_agent scout"]')
          yield* waitFor(scout)
          assert.strictEqual(yield* attributeOf(scout, "data-path"), "lead/scout")
          assert.strictEqual(yield* textOf(scout.locator(".path")), "lead › scout")
          const weather = page.locator('.node[data-name="execute_tool weather"]')
          assert.strictEqual(yield* attributeOf(weather, "data-path"), "lead/scout")
          assert.isAbove(Number(yield* attributeOf(scout, "data-depth")), 1)
          yield* waitFor(page.locator('.node[data-name="invoke_agent booker"]'))
          yield* waitFor(page.locator('.node[data-name="execute_tool transfer_to_booker"]'))
          // A span's attributes, the tool's traced result among them.
          yield* Effect.promise(() => weather.click())
          yield* waitFor(page.locator("#attributes pre", { hasText: "Lisbon: sunny, 24 °C" }))
          // The metrics the exporter sent, e.g. the model calls' token usage histogram.
          yield* waitFor(page.locator('tr.metric[data-name="gen_ai.client.token.usage"]').first())
          yield* Effect.promise(() => page.screenshot({ path: screenshot("inspector-runs.png"), fullPage: true }))

          // 2. A second turn pauses on the booking: the inbox shows it and what the model had seen before.
          const paused = yield* lead.chat("Book the Avenida for Bob, 2 nights")
          assert.strictEqual(paused._tag, "AwaitingApproval")
          if (paused._tag !== "AwaitingApproval") return
          const card = page.locator('.pending[data-action="book"]')
          yield* waitFor(card)
          assert.deepStrictEqual(JSON.parse(yield* textOf(card.locator(".arguments"))), { hotel: "Avenida", nights: 2 })
          assert.strictEqual(yield* textOf(card.locator(".reason")), "reason: Bookings cost money")
          assert.strictEqual(yield* textOf(card.locator(".agents")), "agent: lead · call call_book")
          yield* waitFor(card.locator('.tool-result[data-tool="lookup"] pre', { hasText: App.note }))
          yield* Effect.promise(() => page.locator("#decider").fill("alice"))
          yield* Effect.promise(() => page.screenshot({ path: screenshot("inspector-approval.png"), fullPage: true }))

          // 3. The app waits for the store's decision; approving on the page lets its resume run the booking once.
          const resumed = yield* Effect.forkChild(
            Effect.flatMap(
              StoredDecisions.whenDecided(paused.state, { schedule: Schedule.spaced("50 millis") }),
              ({ decisions }) => lead.resume(paused.state, decisions)
            )
          )
          yield* Effect.promise(() => card.locator("button.approve").click())
          yield* waitFor(card.locator('.outcome[data-kind="recorded"]', { hasText: "approved by alice" }))
          const done = yield* Fiber.join(resumed)
          assert.strictEqual(done._tag, "Completed")
          assert.strictEqual(counts.booked, 1, "the booking ran once")

          // 4. Approving again is refused, naming who decided; the booking does not run again.
          yield* waitFor(page.locator('.pending[data-action="book"][data-listed="false"]'))
          yield* Effect.promise(() => page.locator("#decider").fill("mallory"))
          yield* Effect.promise(() => card.locator("button.approve").click())
          yield* waitFor(
            card.locator('.outcome[data-kind="refused"]', { hasText: "already decided: approved by alice" })
          )
          assert.strictEqual(counts.booked, 1)
          // The resumed turn shows up as its own run.
          yield* waitFor(page.locator('tr.turn[data-agent="lead"][data-status="Completed"]').nth(1))
        }).pipe(Effect.provide(app), Effect.scoped)
      }).pipe(Effect.scoped),
    120_000
  )
})

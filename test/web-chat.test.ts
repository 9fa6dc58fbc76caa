/**
 * The web chat (examples/web-chat) in a real browser: headless Debian
 * chromium driven by playwright-core, against the example's own Effect
 * HttpServer on the offline scripted model (a local OpenAI-compatible
 * endpoint streaming through the real openai SDK). A question's answer is
 * seen arriving in pieces, a booking is approved on the page and runs, another
 * is rejected and the model is told so. The conversation is kept in a thread
 * on the server: the page opened again shows it (a turn waiting for approval
 * with its buttons), and the next turn goes on from it. Saves
 * docs/web-chat.png for the README.
 *
 * Needs /usr/bin/chromium (scripts/chromium.sh installs it).
 */
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Browser, chromium, type Locator, type Page } from "playwright-core"
import * as WebChat from "../examples/web-chat/server.ts"

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
const screenshot = fileURLToPath(new URL("../docs/web-chat.png", import.meta.url))

/** The text of the first element a locator matches ("" when it has none). */
const textOf = (locator: Locator) => Effect.promise(async () => (await locator.textContent()) ?? "")

const launch = Effect.acquireRelease(
  Effect.promise(() => chromium.launch({ executablePath, args })),
  (browser: Browser) => Effect.promise(() => browser.close())
)

/** Asks a question on the page; the turn's bubble. */
const ask = async (page: Page, question: string, turn: number) => {
  await page.locator("#question").fill(question)
  await page.locator("#send").click()
  return page.locator(".assistant").nth(turn)
}

describe("web chat in headless chromium", () => {
  it.live(
    "streams an answer in pieces, approves a booking and shows its result, rejects another and the model is told",
    () =>
      Effect.gen(function* () {
        assert.isTrue(existsSync(executablePath), `${executablePath} is missing: run scripts/chromium.sh`)
        // The offline model streams a chunk every 30 ms, so the page receives the answer over many reads.
        const chat = yield* WebChat.start({ chunkDelay: "30 millis" })
        const browser = yield* launch
        const requests = chat.model.requests
        assert.isDefined(requests, "the offline model records its requests")
        const page = yield* Effect.promise(() => browser.newPage({ viewport: { width: 900, height: 900 } }))
        yield* Effect.promise(() => page.goto(chat.url))

        // 1. A question: the tool call shows, and the answer is seen part-way before it is whole.
        const first = yield* Effect.promise(() => ask(page, "Find hotels in Lisbon", 0))
        yield* Effect.promise(() => first.and(page.locator('[data-finished="Completed"]')).waitFor({ timeout: 30_000 }))
        const answer = yield* textOf(first.locator('.text[data-step="2"]'))
        assert.strictEqual(
          answer,
          "In Lisbon I found Casa Alfama (95 EUR a night), Hotel Avenida (140 EUR a night), Pensão Sol (60 EUR a night). Shall I book one of them?"
        )
        // The answer came as many deltas, over more than one network read of the page's fetch.
        const text = first.locator('.text[data-step="2"]')
        const words = answer.match(/\S+\s*/g) ?? []
        assert.strictEqual(Number(yield* Effect.promise(() => text.getAttribute("data-pieces"))), words.length)
        assert.isAbove(Number(yield* Effect.promise(() => text.getAttribute("data-reads"))), 1)
        const search = first.locator(".tool")
        assert.strictEqual(yield* Effect.promise(() => search.getAttribute("data-state")), "done")
        assert.strictEqual(yield* textOf(search.locator(".name")), "searchHotels")
        assert.strictEqual(yield* textOf(search.locator(".args")), '{"city":"Lisbon"}')

        // 2. A booking waits for approval; Approve resumes the turn and the booking runs.
        const second = yield* Effect.promise(() => ask(page, "Book Casa Alfama for 2 nights", 1))
        yield* Effect.promise(() =>
          second.and(page.locator('[data-finished="AwaitingApproval"]')).waitFor({ timeout: 30_000 })
        )
        const prompt = yield* textOf(second.locator(".approval p"))
        assert.include(prompt, 'bookHotel {"hotel":"Casa Alfama","nights":2} needs your approval')
        // The call waits for approval, it is not running; its approval box is under it.
        assert.strictEqual(yield* Effect.promise(() => second.locator(".tool").getAttribute("data-state")), "awaiting")
        assert.strictEqual(yield* textOf(second.locator(".tool .status")), "awaiting your approval")
        yield* Effect.promise(() => second.locator("button.approve").click())
        yield* Effect.promise(() =>
          second.and(page.locator('[data-finished="Completed"]')).waitFor({ timeout: 30_000 })
        )
        assert.strictEqual(yield* Effect.promise(() => second.locator(".tool").getAttribute("data-state")), "done")
        assert.match(
          yield* textOf(second.locator(".tool .result")),
          /^\{"hotel":"Casa Alfama","nights":2,"confirmation":"BK-\d+"\}$/
        )
        // The rows read in the order things happened: the call, its approval, its result, then the answer.
        assert.deepStrictEqual(
          yield* Effect.promise(() =>
            second.evaluate((bubble) =>
              [...bubble.querySelectorAll(".tool > .name, .approval, .result, .text:not(:empty), .meta")].map(
                (node) => node.className
              )
            )
          ),
          ["name", "approval", "result", "text", "meta"]
        )
        assert.match(
          yield* textOf(second.locator('.text[data-step="2"]')),
          /^Booked Casa Alfama for 2 nights: your confirmation is BK-\d+\.$/
        )

        // 3. Another booking, rejected: the model gets the APPROVAL error and says so.
        const third = yield* Effect.promise(() => ask(page, "Book Hotel Avenida for 3 nights", 2))
        yield* Effect.promise(() =>
          third.and(page.locator('[data-finished="AwaitingApproval"]')).waitFor({ timeout: 30_000 })
        )
        yield* Effect.promise(() => third.locator("button.reject").click())
        yield* Effect.promise(() => third.and(page.locator('[data-finished="Completed"]')).waitFor({ timeout: 30_000 }))
        assert.strictEqual(yield* Effect.promise(() => third.locator(".tool").getAttribute("data-state")), "failed")
        assert.strictEqual(yield* textOf(third.locator(".tool .status")), "✗ APPROVAL")
        assert.strictEqual(
          yield* textOf(third.locator('.text[data-step="2"]')),
          "I did not make that booking: it was not approved (bookHotel requires approval (A booking is charged to the traveller's card): rejected by web-chat user: rejected on the page)."
        )
        // What the model was sent after the rejection: the call's answer is the APPROVAL error.
        const recorded = yield* requests ?? Effect.succeed([])
        const lastBody = recorded.at(-1)?.body as { readonly messages: ReadonlyArray<Record<string, unknown>> }
        const toolMessage = lastBody.messages.at(-1)
        assert.strictEqual(toolMessage?.role, "tool")
        assert.deepStrictEqual(JSON.parse(String(toolMessage?.content)), {
          error: {
            category: "APPROVAL",
            message:
              "bookHotel requires approval (A booking is charged to the traveller's card): rejected by web-chat user: rejected on the page"
          }
        })
        // every request streamed
        assert.isTrue(recorded.every((request) => (request.body as { readonly stream?: unknown }).stream === true))

        yield* Effect.promise(() => page.screenshot({ path: screenshot, fullPage: true }))

        // 4. A turn of one model call says so in the singular; the others said "2 model calls".
        const fourth = yield* Effect.promise(() => ask(page, "Hello", 3))
        yield* Effect.promise(() =>
          fourth.and(page.locator('[data-finished="Completed"]')).waitFor({ timeout: 30_000 })
        )
        assert.match(yield* textOf(fourth.locator(".meta")), /^Completed · 1 model call · \d+ tokens$/)
        assert.match(yield* textOf(first.locator(".meta")), /^Completed · 2 model calls · \d+ tokens$/)

        // 5. The conversation is the server's thread: the page opened again shows it, and the next turn goes on
        // from it — the model gets the earlier turns, which the page no longer sends.
        const asked = [
          "Find hotels in Lisbon",
          "Book Casa Alfama for 2 nights",
          "Book Hotel Avenida for 3 nights",
          "Hello"
        ]
        yield* Effect.promise(() => page.reload())
        yield* Effect.promise(() =>
          page
            .locator('.assistant[data-restored="true"][data-finished="Completed"]')
            .nth(3)
            .waitFor({ timeout: 30_000 })
        )
        assert.deepStrictEqual(yield* Effect.promise(() => page.locator(".user").allTextContents()), asked)
        const restoredBooking = page.locator(".assistant").nth(1)
        assert.strictEqual(
          yield* Effect.promise(() => restoredBooking.locator(".tool").getAttribute("data-state")),
          "done"
        )
        assert.match(yield* textOf(restoredBooking.locator('.text[data-step="2"]')), /^Booked Casa Alfama for 2 nights/)
        const fifth = yield* Effect.promise(() => ask(page, "Book Pensão Sol for 1 night", 4))
        yield* Effect.promise(() =>
          fifth.and(page.locator('[data-finished="AwaitingApproval"]')).waitFor({ timeout: 30_000 })
        )
        const sent = (yield* requests ?? Effect.succeed([])).at(-1)?.body as {
          readonly messages: ReadonlyArray<{ readonly role: string; readonly content?: string | null }>
        }
        assert.deepStrictEqual(
          sent.messages.filter((message) => message.role === "user").map((message) => message.content),
          [...asked, "Book Pensão Sol for 1 night"]
        )

        // 6. Opened again while the booking waits: its approval box is back with its buttons; approving resumes the
        // thread's paused turn.
        yield* Effect.promise(() => page.reload())
        const waiting = page.locator(".assistant").nth(4)
        yield* Effect.promise(() =>
          waiting.and(page.locator('[data-finished="AwaitingApproval"]')).waitFor({ timeout: 30_000 })
        )
        assert.include(yield* textOf(waiting.locator(".approval p")), 'bookHotel {"hotel":"Pensão Sol","nights":1}')
        yield* Effect.promise(() => waiting.locator("button.approve").click())
        yield* Effect.promise(() =>
          waiting.and(page.locator('[data-finished="Completed"]')).waitFor({ timeout: 30_000 })
        )
        assert.match(
          yield* textOf(waiting.locator('.text[data-step="2"]')),
          /^Booked Pensão Sol for 1 nights: your confirmation is BK-\d+\.$/
        )
      }).pipe(Effect.scoped),
    120_000
  )
})

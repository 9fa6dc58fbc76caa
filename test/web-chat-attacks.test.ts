/**
 * C48 (a, b): the web chat (examples/web-chat) is closed to pages that are not its own, in a real browser —
 * headless chromium driven by playwright-core — against the example's own server and offline model.
 *
 * (a) A page served from a second local port posts `text/plain` `{"thread":"attacker","input":"Book Casa Alfama for 2 nights"}`
 * to `/api/chat` (`mode: "no-cors"`, which needs no permission), submits the same as a `text/plain` form, and
 * tries a JSON POST (which needs a preflight): no chat turn runs. (b) A name the attacker controls, rebound
 * to 127.0.0.1 (chromium's `--host-resolver-rules`), serves the attacker's page on the chat's own port, so
 * to the browser the chat is same-origin: the page can neither read the chat's page (and its token), run a
 * turn, read a paused state nor approve a booking. Without the defences both attacks work (a turn runs; the
 * booking is approved and `BK-1001` comes back): that is what the assertions on the model's requests and on
 * the attacker's log catch.
 *
 * Then each defence alone, over raw HTTP so each request breaks exactly one rule: a Host or Origin that is
 * not the listener's, another content type, a missing or forged page token — each refused before any work.
 */
import { existsSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { LocalHttpServer } from "@rolecraft/testing"
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import * as WebChat from "../examples/web-chat/server.ts"
import * as RawHttp from "./support/rawHttp.ts"

const executablePath = "/usr/bin/chromium"
const args = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // The attacker's name, rebound to the chat's address.
  "--host-resolver-rules=MAP rebind.test 127.0.0.1",
  // Chromium's own Local Network Access checks block a page that came from a public address from reading
  // a loopback one; off, it stands for a browser without them, so only the chat's defences are tested.
  "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights"
]

const launch = Effect.acquireRelease(
  Effect.promise(() => chromium.launch({ executablePath, args })),
  (browser: Browser) => Effect.promise(() => browser.close())
)

/** What the attacker's page reports when it is done (`window.attack`). */
interface Report {
  readonly log: ReadonlyArray<string>
  readonly booked: string | null
}

const reportOf = (page: Page) =>
  Effect.promise(async () => {
    await page.waitForFunction("window.attack !== undefined", undefined, { timeout: 30_000 })
    return (await page.evaluate("window.attack")) as Report
  })

const booking = JSON.stringify({ thread: "attacker", input: "Book Casa Alfama for 2 nights" })

/** (a): a page on another local port, posting to the chat. */
const crossOrigin = (chat: string) => `<!doctype html><html><body>
<iframe name="sink"></iframe>
<form id="f" method="POST" action="${chat}/api/chat" enctype="text/plain" target="sink">
  <input type="hidden" name='{"thread":"attacker","input":"Book Casa Alfama for 2 nights","x":"' value='"}' />
</form>
<script>
  (async () => {
    const log = []
    try {
      const r = await fetch(${JSON.stringify(chat)} + "/api/chat", {
        method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: ${JSON.stringify(booking)}
      })
      log.push("no-cors " + r.type)
    } catch (e) { log.push("no-cors failed") }
    try {
      const r = await fetch(${JSON.stringify(chat)} + "/api/chat", {
        method: "POST", headers: { "content-type": "application/json" }, body: ${JSON.stringify(booking)}
      })
      log.push("cors " + r.status)
    } catch (e) { log.push("cors failed") }
    document.getElementById("f").submit()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    window.attack = { log, booked: null }
  })()
</script></body></html>`

/** (b): the attacker's page on the rebound name: same-origin to the browser. */
const rebound = `<!doctype html><html><body><script>
  (async () => {
    const log = []
    let booked = null
    const events = (text) => text.split("\\n\\n").map((block) => block.split("\\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\\n")).filter((data) => data !== "").map((data) => JSON.parse(data))
    try {
      const home = await fetch("/")
      const html = await home.text()
      log.push("page " + home.status)
      const token = (html.match(/name="chat-token" content="([^"]+)"/) || [])[1]
      const headers = { "content-type": "application/json", ...(token === undefined ? {} : { "x-chat-token": token }) }
      const chat = await fetch("/api/chat", { method: "POST", headers, body: ${JSON.stringify(booking)} })
      log.push("chat " + chat.status)
      const finished = chat.ok ? events(await chat.text()).find((event) => event._tag === "TurnFinished") : undefined
      if (finished !== undefined && finished.result._tag === "AwaitingApproval") {
        const state = finished.result.state
        log.push("read the paused state: " + state.pending.map((call) => call.action).join(","))
        const decisions = Object.fromEntries(state.pending.map((call) => [call.toolCallId, "approve"]))
        const resume = await fetch("/api/resume", { method: "POST", headers, body: JSON.stringify({ state, decisions }) })
        log.push("resume " + resume.status)
        const found = (await resume.text()).match(/BK-\\d+/)
        booked = found === null ? null : found[0]
      }
    } catch (e) { log.push("failed " + e) }
    window.attack = { log, booked }
  })()
</script></body></html>`

describe("C48: the web chat refuses pages that are not its own (headless chromium)", () => {
  it.live(
    "a page on another port runs no turn; a page on a rebound name reads nothing and approves nothing",
    () =>
      Effect.gen(function* () {
        assert.isTrue(existsSync(executablePath), `${executablePath} is missing: run scripts/chromium.sh`)
        const chat = yield* WebChat.start()
        const requests = chat.model.requests
        assert.isDefined(requests, "the offline model records its requests")
        const modelCalls = Effect.map(requests ?? Effect.succeed([]), (recorded) => recorded.length)
        const port = new URL(chat.url).port
        const browser = yield* launch

        // (a) A page served from another local port.
        const attacker = yield* LocalHttpServer.serve((_request, response) => {
          response.writeHead(200, { "content-type": "text/html" }).end(crossOrigin(chat.url))
        })
        const page = yield* Effect.promise(() => browser.newPage())
        yield* Effect.promise(() => page.goto(attacker.url))
        const first = yield* reportOf(page)
        // The JSON POST needed a preflight the chat does not grant: the browser refused to send it.
        assert.include(first.log, "cors failed")
        assert.strictEqual(yield* modelCalls, 0, `no turn ran (attacker's log: ${first.log.join("; ")})`)

        // (b) The attacker's page on a name rebound to the chat's address and port: same-origin to the browser.
        const second = yield* Effect.promise(() => browser.newPage())
        // The attacker's own server answered the first lookup of the name: its page comes from there.
        yield* Effect.promise(() =>
          second.route(`http://rebind.test:${port}/attack`, (route) =>
            route.fulfill({ status: 200, contentType: "text/html", body: rebound })
          )
        )
        yield* Effect.promise(() => second.goto(`http://rebind.test:${port}/attack`))
        const report = yield* reportOf(second)
        assert.deepStrictEqual(report, { log: ["page 403", "chat 403"], booked: null })
        assert.strictEqual(yield* modelCalls, 0, "no turn ran")

        // The chat's own page still works in the same browser: a question is answered.
        const own = yield* Effect.promise(() => browser.newPage())
        yield* Effect.promise(() => own.goto(chat.url))
        yield* Effect.promise(async () => {
          await own.locator("#question").fill("Find hotels in Lisbon")
          await own.locator("#send").click()
          await own.locator('.assistant[data-finished="Completed"]').waitFor({ timeout: 30_000 })
        })
        assert.isAbove(yield* modelCalls, 0)
      }).pipe(Effect.scoped),
    120_000
  )
})

describe("C48: each defence of the web chat alone (raw HTTP)", () => {
  it.live("a request breaking exactly one rule is refused before any work; one keeping all is answered", () =>
    Effect.gen(function* () {
      const chat = yield* WebChat.start()
      const modelCalls = Effect.map(chat.model.requests ?? Effect.succeed([]), (recorded) => recorded.length)
      const own = new URL(chat.url).host
      const home = yield* RawHttp.send("GET", chat.url, { host: own })
      assert.strictEqual(home.status, 200)
      const token = home.body.match(/name="chat-token" content="([^"]+)"/)?.[1] ?? ""
      assert.match(token, /^[\w-]{22}\.[\w-]{43}$/)
      const [nonce] = token.split(".")
      // The nonce with its first character changed to another (never the same one: "x" over an "x" would
      // leave the token valid, one page load in 64).
      const changed = `${token.startsWith("x") ? "y" : "x"}${token.slice(1)}`
      assert.notStrictEqual(changed, token)
      const valid = { host: own, origin: `http://${own}`, "content-type": "application/json", "x-chat-token": token }
      const without = (name: string) => Object.fromEntries(Object.entries(valid).filter(([key]) => key !== name))
      const rows: ReadonlyArray<readonly [string, string, Readonly<Record<string, string>>, number]> = [
        ["GET", "the page on another Host", { host: "rebind.test" }, 403],
        [
          "GET",
          "the page on the listener's port under another name",
          { host: `rebind.test:${new URL(chat.url).port}` },
          403
        ],
        ["GET", "the page from another Origin", { host: own, origin: "http://127.0.0.1:1" }, 403],
        ["POST", "another Host", { ...valid, host: "evil.example.com" }, 403],
        ["POST", "another Origin", { ...valid, origin: "http://evil.example.com" }, 403],
        ["POST", "an opaque Origin", { ...valid, origin: "null" }, 403],
        ["POST", "text/plain", { ...valid, "content-type": "text/plain" }, 415],
        ["POST", "a form's content type", { ...valid, "content-type": "application/x-www-form-urlencoded" }, 415],
        ["POST", "no content type", without("content-type"), 415],
        ["POST", "no page token", without("x-chat-token"), 403],
        ["POST", "a forged page token", { ...valid, "x-chat-token": `${nonce}.${"A".repeat(43)}` }, 403],
        ["POST", "a token whose nonce was changed", { ...valid, "x-chat-token": changed }, 403]
      ]
      for (const [method, why, headers, status] of rows) {
        const answer = yield* RawHttp.send(
          method,
          `${chat.url}${method === "GET" ? "/" : "/api/chat"}`,
          headers,
          method === "GET" ? undefined : booking
        )
        assert.strictEqual(answer.status, status, why)
        assert.match(answer.body, /^refused: /, why)
      }
      assert.strictEqual(yield* modelCalls, 0, "no refused request ran a turn")
      // Without Origin (not a browser) and with everything else right — a thread the server issued, and its key —
      // the turn runs.
      const issued = yield* RawHttp.send("POST", `${chat.url}/api/thread`, without("origin"), "{}")
      const { thread, key } = JSON.parse(issued.body) as { thread: string; key: string }
      const answered = yield* RawHttp.send(
        "POST",
        `${chat.url}/api/chat`,
        { ...without("origin"), "x-thread-key": key },
        JSON.stringify({ thread, input: "Book Casa Alfama for 2 nights" })
      )
      assert.strictEqual(answered.status, 200)
      assert.include(answered.body, '"_tag":"TurnFinished"')
      assert.isAbove(yield* modelCalls, 0)
    }).pipe(Effect.scoped)
  )
})

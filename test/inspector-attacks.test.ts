/**
 * The run inspector is closed to pages that are not its own, as the web chat
 * is. In headless chromium: (a) a page served from another local port posts
 * a decision and spans as `text/plain` (`mode: "no-cors"`, which needs no
 * permission), submits a form, and tries a JSON POST (which needs a
 * preflight); (b) a name the attacker controls, rebound to 127.0.0.1
 * (chromium's `--host-resolver-rules`), serves the attacker's page on the
 * inspector's own port, so to the browser the inspector is same-origin: it
 * tries to read the page (for its token), list the approvals and decide one.
 * In both, the pending call stays pending and no span is kept.
 *
 * Then each defence alone, over raw HTTP, so each request breaks exactly one
 * rule: a Host or Origin that is not the listener's, another content type, a
 * missing or forged page token — each refused before any work; the same
 * request keeping every rule is answered.
 */
import { existsSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { ApprovalStore } from "@rolecraft/core"
import { Inspector } from "@rolecraft/inspector"
import { LocalHttpServer } from "@rolecraft/testing"
import { Effect, Option } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
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
  "--host-resolver-rules=MAP rebind.test 127.0.0.1",
  // Chromium's own Local Network Access checks would block these pages too; off, only the inspector's defences
  // are tested.
  "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights"
]

const launch = Effect.acquireRelease(
  Effect.promise(() => chromium.launch({ executablePath, args })),
  (browser: Browser) => Effect.promise(() => browser.close())
)

const reportOf = (page: Page) =>
  Effect.promise(async () => {
    await page.waitForFunction("window.attack !== undefined", undefined, { timeout: 30_000 })
    return (await page.evaluate("window.attack")) as ReadonlyArray<string>
  })

const span = JSON.stringify({
  resourceSpans: [
    {
      scopeSpans: [
        {
          spans: [
            {
              traceId: "0af7651916cd43dd8448eb211c80319c",
              spanId: "b7ad6b7169203331",
              name: "invoke_agent forged",
              startTimeUnixNano: "1",
              endTimeUnixNano: "2",
              attributes: [{ key: "gen_ai.operation.name", value: { stringValue: "invoke_agent" } }]
            }
          ]
        }
      ]
    }
  ]
})

/** A store with one pending booking; its listing key. */
const pendingBooking = Effect.gen(function* () {
  const store = ApprovalStore.makeMemory()
  const binding = { agentId: "lead", action: "book", argumentsDigest: ApprovalStore.digest({ hotel: "Avenida" }) }
  const tokenId = yield* store.request(binding, "Bookings cost money", undefined, {
    scope: { turn: "turn-1", call: "call_book" },
    agents: ["lead"],
    arguments: '{"hotel":"Avenida"}'
  })
  const status = Effect.map(store.get(tokenId), (token) => Option.getOrUndefined(token)?.status)
  return { store, key: ApprovalStore.keyOf(tokenId), status }
})

/** (a): a page on another local port. */
const crossOrigin = (inspector: string, decide: string) => `<!doctype html><html><body>
<iframe name="sink"></iframe>
<form id="f" method="POST" action="${inspector}/api/decide" enctype="text/plain" target="sink">
  <input type="hidden" name='${decide.slice(0, -1)},"x":"' value='"}' />
</form>
<script>
  (async () => {
    const log = []
    for (const [path, body] of [["/api/decide", ${JSON.stringify(decide)}], ["/v1/traces", ${JSON.stringify(span)}]]) {
      try {
        const r = await fetch(${JSON.stringify(inspector)} + path, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body })
        log.push("no-cors " + path + " " + r.type)
      } catch (e) { log.push("no-cors " + path + " failed") }
      try {
        const r = await fetch(${JSON.stringify(inspector)} + path, { method: "POST", headers: { "content-type": "application/json" }, body })
        log.push("cors " + path + " " + r.status)
      } catch (e) { log.push("cors " + path + " failed") }
    }
    document.getElementById("f").submit()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    window.attack = log
  })()
</script></body></html>`

/** (b): the attacker's page on the rebound name, same-origin to the browser. */
const rebound = (decide: string) => `<!doctype html><html><body><script>
  (async () => {
    const log = []
    try {
      const home = await fetch("/")
      const html = await home.text()
      log.push("page " + home.status)
      const token = (html.match(/name="inspector-token" content="([^"]+)"/) || [])[1]
      const listed = await fetch("/api/approvals")
      log.push("approvals " + listed.status)
      const headers = { "content-type": "application/json", ...(token === undefined ? {} : { "x-inspector-token": token }) }
      const decided = await fetch("/api/decide", { method: "POST", headers, body: ${JSON.stringify(decide)} })
      log.push("decide " + decided.status)
      const traced = await fetch("/v1/traces", { method: "POST", headers: { "content-type": "application/json" }, body: ${JSON.stringify(span)} })
      log.push("traces " + traced.status)
    } catch (e) { log.push("failed " + e) }
    window.attack = log
  })()
</script></body></html>`

describe("the inspector refuses pages that are not its own (headless chromium)", () => {
  it.live(
    "a page on another port and a page on a rebound name decide nothing and add no span",
    () =>
      Effect.gen(function* () {
        assert.isTrue(existsSync(executablePath), `${executablePath} is missing: run scripts/chromium.sh`)
        const { store, key, status } = yield* pendingBooking
        const inspector = yield* Inspector.start({ approvals: store })
        const port = new URL(inspector.url).port
        const decide = JSON.stringify({ key, decision: "approve", approver: "attacker" })
        const browser = yield* launch

        const attacker = yield* LocalHttpServer.serve((_request, response) => {
          response.writeHead(200, { "content-type": "text/html" }).end(crossOrigin(inspector.url, decide))
        })
        const page = yield* Effect.promise(() => browser.newPage())
        yield* Effect.promise(() => page.goto(attacker.url))
        const first = yield* reportOf(page)
        assert.include(first, "cors /api/decide failed")
        assert.include(first, "cors /v1/traces failed")
        assert.strictEqual(yield* status, "pending", `nothing decided (attacker's log: ${first.join("; ")})`)
        assert.deepStrictEqual(yield* inspector.traces.spans, [])

        const second = yield* Effect.promise(() => browser.newPage())
        yield* Effect.promise(() =>
          second.route(`http://rebind.test:${port}/attack`, (route) =>
            route.fulfill({ status: 200, contentType: "text/html", body: rebound(decide) })
          )
        )
        yield* Effect.promise(() => second.goto(`http://rebind.test:${port}/attack`))
        assert.deepStrictEqual(yield* reportOf(second), ["page 403", "approvals 403", "decide 403", "traces 403"])
        assert.strictEqual(yield* status, "pending")
        assert.deepStrictEqual(yield* inspector.traces.spans, [])

        // The inspector's own page, in the same browser, decides.
        const own = yield* Effect.promise(() => browser.newPage())
        yield* Effect.promise(() => own.goto(inspector.url))
        yield* Effect.promise(async () => {
          await own.locator("#decider").fill("ann")
          await own.locator(`.pending[data-key="${key}"] button.approve`).click()
          await own.locator('.outcome[data-kind="recorded"]').waitFor({ timeout: 20_000 })
        })
        assert.strictEqual(yield* status, "approved")
      }).pipe(Effect.scoped),
    120_000
  )
})

describe("each defence of the inspector alone (raw HTTP)", () => {
  it.live("a request breaking exactly one rule is refused before any work; one keeping all is answered", () =>
    Effect.gen(function* () {
      const { store, key, status } = yield* pendingBooking
      const inspector = yield* Inspector.start({ approvals: store })
      const own = new URL(inspector.url).host
      const home = yield* RawHttp.send("GET", inspector.url, { host: own })
      assert.strictEqual(home.status, 200)
      const token = home.body.match(/name="inspector-token" content="([^"]+)"/)?.[1] ?? ""
      assert.match(token, /^[\w-]{22}\.[\w-]{43}$/)
      const [nonce] = token.split(".")
      const valid = {
        host: own,
        origin: `http://${own}`,
        "content-type": "application/json",
        "x-inspector-token": token
      }
      const without = (name: string) => Object.fromEntries(Object.entries(valid).filter(([header]) => header !== name))
      const rebound = `rebind.test:${new URL(inspector.url).port}`
      const rows: ReadonlyArray<readonly [string, string, string, Readonly<Record<string, string>>, number]> = [
        ["GET", "/", "the page on another Host", { host: "rebind.test" }, 403],
        ["GET", "/", "the page on the listener's port under another name", { host: rebound }, 403],
        ["GET", "/api/approvals", "the listing on a rebound name", { host: rebound }, 403],
        ["GET", "/api/approvals", "the listing from another Origin", { host: own, origin: "http://127.0.0.1:1" }, 403],
        ["GET", "/api/events", "the live view from another Origin", { host: own, origin: "http://evil.example" }, 403],
        ["POST", "/api/decide", "another Host", { ...valid, host: "evil.example.com" }, 403],
        ["POST", "/api/decide", "another Origin", { ...valid, origin: "http://evil.example.com" }, 403],
        ["POST", "/api/decide", "an opaque Origin", { ...valid, origin: "null" }, 403],
        ["POST", "/api/decide", "text/plain", { ...valid, "content-type": "text/plain" }, 415],
        ["POST", "/api/decide", "no content type", without("content-type"), 415],
        ["POST", "/api/decide", "no page token", without("x-inspector-token"), 403],
        [
          "POST",
          "/api/decide",
          "a forged page token",
          { ...valid, "x-inspector-token": `${nonce}.${"A".repeat(43)}` },
          403
        ],
        ["POST", "/v1/traces", "spans on a rebound name", { ...without("x-inspector-token"), host: rebound }, 403],
        ["POST", "/v1/traces", "spans from another Origin", { ...valid, origin: "http://evil.example.com" }, 403],
        ["POST", "/v1/traces", "spans as text/plain", { host: own, "content-type": "text/plain" }, 415]
      ]
      for (const [method, path, why, headers, expected] of rows) {
        const body = path === "/api/decide" ? JSON.stringify({ key, decision: "approve", approver: "x" }) : span
        const answer = yield* RawHttp.send(
          method,
          `${inspector.url}${path}`,
          headers,
          method === "GET" ? undefined : body
        )
        assert.strictEqual(answer.status, expected, why)
      }
      assert.strictEqual(yield* status, "pending", "no refused request decided")
      assert.deepStrictEqual(yield* inspector.traces.spans, [], "no refused request kept a span")

      // Keeping every rule: an exporter (no Origin, no token) adds spans; the page's request decides.
      const traced = yield* RawHttp.send(
        "POST",
        `${inspector.url}/v1/traces`,
        { host: own, "content-type": "application/json" },
        span
      )
      assert.strictEqual(traced.status, 200)
      assert.strictEqual((yield* inspector.traces.spans).length, 1)
      const decided = yield* RawHttp.send(
        "POST",
        `${inspector.url}/api/decide`,
        valid,
        JSON.stringify({ key, decision: "approve", approver: "ann" })
      )
      assert.deepStrictEqual([decided.status, JSON.parse(decided.body)], [200, { recorded: "approved by ann" }])
      assert.strictEqual(yield* status, "approved")
    }).pipe(Effect.scoped)
  )

  it.live("a body that is not OTLP JSON is refused naming the field, and nothing of it is kept", () =>
    Effect.gen(function* () {
      const inspector = yield* Inspector.start()
      const own = new URL(inspector.url).host
      const post = (body: string, type = "application/json") =>
        RawHttp.send("POST", `${inspector.url}/v1/traces`, { host: own, "content-type": type }, body)
      const bad = JSON.parse(span)
      bad.resourceSpans[0].scopeSpans[0].spans[0].spanId = 42
      const rows: ReadonlyArray<readonly [string, string, number, string]> = [
        ["not JSON", "{", 400, ""],
        ["a span id that is not text", JSON.stringify(bad), 400, "resourceSpans.0.scopeSpans.0.spans.0.spanId"],
        ["resourceSpans not a list", '{"resourceSpans":{}}', 400, "resourceSpans"]
      ]
      for (const [why, body, expected, field] of rows) {
        const answer = yield* post(body)
        assert.strictEqual(answer.status, expected, why)
        if (field !== "") assert.strictEqual(JSON.parse(answer.body).field, field, why)
      }
      const protobuf = yield* post("\u000a\u0000", "application/x-protobuf")
      assert.strictEqual(protobuf.status, 415)
      assert.include(protobuf.body, "OTLP/HTTP JSON only")
      assert.deepStrictEqual(yield* inspector.traces.spans, [])
    }).pipe(Effect.scoped)
  )
})

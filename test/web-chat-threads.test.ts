/**
 * The web chat binds each thread to the page that made it (case C94), over raw HTTP against
 * `examples/web-chat` as shipped (its offline model, threads in memory): two people, each with a page token;
 * Alice's thread is issued by the server with a key only her page holds. Bob, with his own page token, a thread
 * of his own and Alice's thread id, can neither read, decide nor continue it; Alice's page works as before.
 * What a page keeps in memory is bounded: threads per page, in all, an idle expiry, and the length of a question.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as WebChat from "../examples/web-chat/server.ts"
import * as RawHttp from "./support/rawHttp.ts"

const pageOf = (chat: WebChat.WebChat) =>
  Effect.gen(function* () {
    const own = new URL(chat.url).host
    const home = yield* RawHttp.send("GET", chat.url, { host: own })
    const token = home.body.match(/name="chat-token" content="([^"]+)"/)?.[1] ?? ""
    const headers = { host: own, "content-type": "application/json", "x-chat-token": token }
    const post = (path: string, body: unknown, key?: string) =>
      RawHttp.send(
        "POST",
        `${chat.url}${path}`,
        key === undefined ? headers : { ...headers, "x-thread-key": key },
        JSON.stringify(body)
      )
    const issue = Effect.map(post("/api/thread", {}), (answer) => ({
      status: answer.status,
      body: answer.body,
      ...(answer.status === 200
        ? (JSON.parse(answer.body) as { thread: string; key: string })
        : { thread: "", key: "" })
    }))
    return { headers, post, issue }
  })

const pendingIdsOf = (body: string): ReadonlyArray<string> =>
  body
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as { _tag: string; pending?: ReadonlyArray<{ toolCallId: string }> })
    .flatMap((event) =>
      event._tag === "ApprovalRequested" ? (event.pending ?? []).map((call) => call.toolCallId) : []
    )

describe("C94: a web chat thread belongs to the page that made it", () => {
  it.live("another page can neither read, decide nor continue it; the owner's page works", () =>
    Effect.gen(function* () {
      const chat = yield* WebChat.start()
      const modelCalls = Effect.map(chat.model.requests ?? Effect.succeed([]), (recorded) => recorded.length)
      const alice = yield* pageOf(chat)
      const bob = yield* pageOf(chat)
      const mine = yield* alice.issue
      assert.strictEqual(mine.status, 200)
      const asked = yield* alice.post(
        "/api/chat",
        { thread: mine.thread, input: "Please book Casa Alfama for 3 nights" },
        mine.key
      )
      assert.strictEqual(asked.status, 200)
      const [callId] = pendingIdsOf(asked.body)
      assert.isString(callId, "the turn pauses for approval")
      const before = yield* modelCalls

      const bobs = yield* bob.issue
      for (const key of [undefined, bobs.key, `${mine.key.slice(0, -2)}AA`]) {
        const read = yield* bob.post("/api/thread/read", { thread: mine.thread }, key)
        assert.strictEqual(read.status, 404, `read with ${key === undefined ? "no key" : "another key"}`)
        assert.notInclude(read.body, "Casa Alfama")
        const decided = yield* bob.post(
          "/api/resume",
          { thread: mine.thread, decisions: { [callId ?? ""]: "approve" } },
          key
        )
        assert.strictEqual(decided.status, 404)
        const added = yield* bob.post("/api/chat", { thread: mine.thread, input: "Find hotels in Porto" }, key)
        assert.strictEqual(added.status, 404)
      }
      // Reading needs the page token too, as every change does; the old GET is gone.
      const noToken = yield* RawHttp.send(
        "POST",
        `${chat.url}/api/thread/read`,
        { host: new URL(chat.url).host, "content-type": "application/json", "x-thread-key": mine.key },
        JSON.stringify({ thread: mine.thread })
      )
      assert.strictEqual(noToken.status, 403)
      const oldGet = yield* RawHttp.send("GET", `${chat.url}/api/thread?id=${mine.thread}`, {
        host: new URL(chat.url).host
      })
      assert.notStrictEqual(oldGet.status, 200)
      assert.strictEqual(yield* modelCalls, before, "nothing ran for Bob")

      // Alice's thread is as she left it, and her decision runs the booking.
      const kept = yield* alice.post("/api/thread/read", { thread: mine.thread }, mine.key)
      assert.strictEqual(kept.status, 200)
      const thread = JSON.parse(kept.body) as { messages: ReadonlyArray<{ content: string }>; paused?: unknown }
      assert.isDefined(thread.paused)
      assert.notInclude(kept.body, "Porto")
      const approved = yield* alice.post(
        "/api/resume",
        { thread: mine.thread, decisions: { [callId ?? ""]: "approve" } },
        mine.key
      )
      assert.strictEqual(approved.status, 200)
      assert.include(approved.body, '"_tag":"TurnFinished"')
    }).pipe(Effect.scoped)
  )

  it.live(
    "threads are bounded per page and in all (429 naming the cap), questions by length (413), idle ones forgotten",
    () =>
      Effect.gen(function* () {
        const chat = yield* WebChat.start({ threadBounds: { perPage: 3, total: 5, idleMs: 400 } })
        const first = yield* pageOf(chat)
        for (let i = 0; i < 3; i++) assert.strictEqual((yield* first.issue).status, 200)
        const fourth = yield* first.issue
        assert.strictEqual(fourth.status, 429)
        assert.include(fourth.body, "3 threads")
        const second = yield* pageOf(chat)
        const kept = yield* second.issue
        assert.strictEqual(kept.status, 200)
        assert.strictEqual((yield* second.issue).status, 200)
        const full = yield* second.issue
        assert.strictEqual(full.status, 429)
        assert.include(full.body, "5 threads")

        const long = yield* second.post("/api/chat", { thread: kept.thread, input: "x".repeat(100_000) }, kept.key)
        assert.strictEqual(long.status, 413)
        assert.include(long.body, "10000")

        // Untouched past the idle expiry, a thread is forgotten: its key opens nothing, and room is made.
        yield* Effect.sleep("600 millis")
        const forgotten = yield* second.post("/api/thread/read", { thread: kept.thread }, kept.key)
        assert.strictEqual(forgotten.status, 404)
        assert.strictEqual((yield* second.issue).status, 200)
      }).pipe(Effect.scoped)
  )
})

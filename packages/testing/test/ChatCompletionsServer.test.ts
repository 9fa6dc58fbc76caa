import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as Server from "../src/ChatCompletionsServer.ts"

const post = (url: string, body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
  Effect.tryPromise(() =>
    fetch(url, { method: "POST", body, headers }).then((response) =>
      response.text().then((text) => ({ status: response.status, headers: response.headers, text }))
    )
  )

describe("ChatCompletionsServer", () => {
  it.live("answers chat completions from its script and records each request", () =>
    Effect.gen(function* () {
      const server = yield* Server.make([
        Server.reply("Hello", { usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } }),
        Server.toolCalls([
          { name: "nights", arguments: "" },
          { name: "book", arguments: { hotelId: "h-1" } }
        ]),
        Server.error(429, { message: "slow down", headers: { "retry-after": "1" } }),
        Server.raw("{not json")
      ])
      assert.match(server.baseURL, /^http:\/\/127\.0\.0\.1:\d+\/v1$/)
      const url = `${server.baseURL}/chat/completions`
      const reply = yield* post(url, JSON.stringify({ model: "m", messages: [] }), {
        "content-type": "application/json",
        authorization: "Bearer k"
      })
      assert.strictEqual(reply.status, 200)
      const completion = JSON.parse(reply.text)
      assert.deepStrictEqual(completion.choices, [
        {
          index: 0,
          message: { role: "assistant", content: "Hello", refusal: null },
          finish_reason: "stop",
          logprobs: null
        }
      ])
      assert.deepStrictEqual(completion.usage, { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 })
      assert.strictEqual(completion.model, "m")
      const calls = JSON.parse((yield* post(url, "{}")).text)
      assert.deepStrictEqual(calls.choices[0].message.tool_calls, [
        { id: "call_1", type: "function", function: { name: "nights", arguments: "" } },
        { id: "call_2", type: "function", function: { name: "book", arguments: '{"hotelId":"h-1"}' } }
      ])
      assert.strictEqual(calls.choices[0].finish_reason, "tool_calls")
      const limited = yield* post(url, "{}")
      assert.strictEqual(limited.status, 429)
      assert.strictEqual(limited.headers.get("retry-after"), "1")
      assert.strictEqual(JSON.parse(limited.text).error.message, "slow down")
      assert.strictEqual((yield* post(url, "not json either")).text, "{not json")
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 4)
      assert.deepStrictEqual(requests[0]?.body, { model: "m", messages: [] })
      assert.strictEqual(requests[0]?.headers.authorization, "Bearer k")
      assert.strictEqual(requests[3]?.body, "not json either")
      assert.deepStrictEqual(
        requests.map((request) => request.outcome),
        ["answered", "answered", "answered", "answered"]
      )
      assert.strictEqual(yield* server.remaining, 0)
    }).pipe(Effect.scoped)
  )

  it.live('another path is 404; a request past the script is 500 "script exhausted" and recorded', () =>
    Effect.gen(function* () {
      const server = yield* Server.make([])
      const other = yield* post(`${server.baseURL}/embeddings`, "{}")
      assert.strictEqual(other.status, 404)
      const exhausted = yield* post(`${server.baseURL}/chat/completions`, "{}")
      assert.strictEqual(exhausted.status, 500)
      assert.include(JSON.parse(exhausted.text).error.message, "script exhausted (request 1, scripted 0)")
      assert.strictEqual((yield* server.requests).length, 2)
    }).pipe(Effect.scoped)
  )

  it.live("closes with its scope: the port then refuses connections", () =>
    Effect.gen(function* () {
      const baseURL = yield* Effect.scoped(Effect.map(Server.make([Server.reply("x")]), (server) => server.baseURL))
      const exit = yield* Effect.exit(post(`${baseURL}/chat/completions`, "{}"))
      assert.isTrue(Exit.isFailure(exit))
    })
  )
})

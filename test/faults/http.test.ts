/**
 * HTTP bodies from a real server on 127.0.0.1, on each HttpClient layer
 * (undici, node:http, fetch): a body past `maxResponseBytes` is refused by
 * its Content-Length or cut while it streams (C35), an error body is read only
 * as far as its excerpt needs, and gzip, deflate and br bodies are decoded the
 * same way on every client (C38). A server that would stall after the part we
 * need proves the rest was never waited for.
 */
import * as Zlib from "node:zlib"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import { Effect, Exit, type Layer, Schema } from "effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpClientModule from "effect/http/HttpClient"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as LocalServer from "../../packages/core/test/support/LocalServer.ts"

const clients: ReadonlyArray<readonly [string, Layer.Layer<HttpClient.HttpClient>]> = [
  ["undici", NodeHttpClient.layerUndici],
  ["node:http", NodeHttpClient.layerNodeHttp],
  ["fetch", FetchHttpClient.layer]
]

const json = JSON.stringify({ city: "Vienna", forecast: "sunny ☀️" })
const text = "Sunny with a light breeze — 21 °C"

const failure = (exit: Exit.Exit<unknown, unknown>) => {
  assert.isTrue(Exit.isFailure(exit), String(exit))
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  assert.strictEqual(reason?._tag, "Fail", String(exit))
  return (reason as { readonly error: { category: string; message: string; excerpt?: string } }).error
}

const served = Effect.gen(function* () {
  return yield* LocalServer.start((request, response) => {
    switch (request.path) {
      case "/huge": {
        // 12 MiB in 64 KiB chunks, then it stalls: a reader that waits for the end never returns.
        response.writeHead(200, { "content-type": "text/plain" })
        const chunk = Buffer.alloc(65_536, 97)
        for (let i = 0; i < 192; i++) response.write(chunk)
        return
      }
      case "/declared":
        // Claims 40 MB, sends nothing, stalls.
        response.writeHead(200, { "content-type": "application/json", "content-length": String(40 * 1024 * 1024) })
        response.flushHeaders()
        return
      case "/error":
        // A 500 whose body goes on (200 KiB sent, then a stall): the excerpt needs only its start.
        response.writeHead(500, { "content-type": "text/plain" })
        response.write(`backend exploded ${"z".repeat(200 * 1024)}`)
        return
      case "/gzip":
        return LocalServer.reply(
          response,
          200,
          { "content-type": "application/json", "content-encoding": "gzip" },
          Zlib.gzipSync(json)
        )
      case "/deflate":
        return LocalServer.reply(
          response,
          200,
          { "content-type": "application/json", "content-encoding": "deflate" },
          Zlib.deflateSync(json)
        )
      case "/br":
        return LocalServer.reply(
          response,
          200,
          { "content-type": "text/plain; charset=utf-8", "content-encoding": "br" },
          Zlib.brotliCompressSync(text)
        )
      case "/bomb":
        // 64 KiB of gzip that decodes to 64 MiB.
        return LocalServer.reply(
          response,
          200,
          { "content-type": "text/plain", "content-encoding": "gzip" },
          Zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 0))
        )
      default:
        return LocalServer.reply(response, 200, { "content-type": "text/plain", "content-encoding": "zz-unknown" }, "x")
    }
  })
})

describe("HTTP bodies on every client layer", () => {
  for (const [client, layer] of clients) {
    it.live(
      `C35 (${client}): bodies past maxResponseBytes are refused or cut; error bodies read only for the excerpt`,
      () =>
        Effect.gen(function* () {
          const server = yield* served
          const get = (path: string) =>
            Action.webService({ description: path, parameters: {}, endpoint: `${server.url}${path}` })
          const agent = yield* Agent.make({
            id: "bodies",
            roles: [
              Role.make({
                identity: { name: "http", goal: "Fetch", domain: "http" },
                actions: { huge: get("/huge"), declared: get("/declared"), error: get("/error") }
              })
            ]
          })
          for (const name of ["huge", "declared"] as const) {
            const error = failure(yield* Effect.exit(agent.executeAction(name, {})))
            assert.strictEqual(error.category, "EXECUTION", `${name}: ${error.message}`)
            assert.include(error.message, "maxResponseBytes")
            assert.include(error.message, String(10 * 1024 * 1024))
          }
          const error = failure(yield* Effect.exit(agent.executeAction("error", {})))
          assert.strictEqual(error.category, "TRANSIENT")
          assert.include(error.message, "backend exploded")
        }).pipe(Effect.scoped, Effect.provide(layer))
    )

    it.live(
      `C38 (${client}): gzip, deflate and br bodies are decoded; a bomb is cut at the cap; an unknown encoding is EXECUTION`,
      () =>
        Effect.gen(function* () {
          const server = yield* served
          const get = (path: string) =>
            Action.webService({ description: path, parameters: {}, endpoint: `${server.url}${path}` })
          const agent = yield* Agent.make({
            id: "encodings",
            roles: [
              Role.make({
                identity: { name: "http", goal: "Fetch", domain: "http" },
                actions: {
                  gzip: get("/gzip"),
                  deflate: get("/deflate"),
                  br: get("/br"),
                  bomb: get("/bomb"),
                  odd: get("/odd")
                }
              })
            ]
          })
          assert.deepStrictEqual(yield* agent.executeAction("gzip", {}), JSON.parse(json))
          assert.deepStrictEqual(yield* agent.executeAction("deflate", {}), JSON.parse(json))
          assert.strictEqual(yield* agent.executeAction("br", {}), text)
          const bomb = failure(yield* Effect.exit(agent.executeAction("bomb", {})))
          assert.strictEqual(bomb.category, "EXECUTION", bomb.message)
          if (client !== "fetch") {
            // fetch decodes by itself and hides the encoding from the reader; the cap then counts decoded bytes.
            const odd = failure(yield* Effect.exit(agent.executeAction("odd", {})))
            assert.strictEqual(odd.category, "EXECUTION")
            assert.include(odd.message, "zz-unknown")
          }
        }).pipe(Effect.scoped, Effect.provide(layer))
    )
  }
})

describe("redirects on every client layer", () => {
  for (const [client, layer] of clients) {
    it.live(
      `C39 (${client}): a POST answered 302 or 307 is EXECUTION with the status and Location, sent once, never replayed as a GET`,
      () =>
        Effect.gen(function* () {
          const server = yield* LocalServer.start((request, response) => {
            if (request.path === "/v1/bookings/list")
              return LocalServer.reply(response, 200, { "content-type": "application/json" }, "[]")
            const status = request.path.endsWith("307") ? 307 : 302
            return LocalServer.reply(response, status, { location: "/v1/bookings/list" })
          })
          const book = (path: string) =>
            Action.webService({
              description: "Book",
              parameters: { hotelId: Schema.String },
              endpoint: `${server.url}${path}`,
              method: "POST"
            })
          const agent = yield* Agent.make({
            id: "redirects",
            roles: [
              Role.make({
                identity: { name: "http", goal: "Book", domain: "http" },
                actions: { found: book("/v1/bookings"), temporary: book("/v1/bookings/307") }
              })
            ]
          })
          for (const [name, status] of [
            ["found", 302],
            ["temporary", 307]
          ] as const) {
            const error = failure(yield* Effect.exit(agent.executeAction(name, { hotelId: "h-1" })))
            assert.strictEqual(error.category, "EXECUTION", `${name}: ${error.message}`)
            assert.include(error.message, String(status))
            assert.include(error.message, "/v1/bookings/list")
          }
          assert.deepStrictEqual(
            server.received.map((request) => `${request.method} ${request.path}`),
            ["POST /v1/bookings", "POST /v1/bookings/307"]
          )
        }).pipe(Effect.scoped, Effect.provide(layer))
    )
  }
})

describe("HTTP bodies from a client that does not frame by the declared length", () => {
  it.effect("a body longer than its declared length is still held to maxResponseBytes", () =>
    Effect.gen(function* () {
      // An in-process client hands back the whole body whatever Content-Length says.
      const lying = HttpClientModule.make((request) =>
        Effect.succeed(
          HttpClientResponse.fromWeb(
            request,
            new Response("x".repeat(64), { headers: { "content-type": "text/plain", "content-length": "8" } })
          )
        )
      )
      const agent = yield* Agent.make({
        id: "lying",
        roles: [
          Role.make({
            identity: { name: "http", goal: "Fetch", domain: "http" },
            actions: {
              small: Action.webService({
                description: "small",
                parameters: {},
                endpoint: "http://in-process.invalid/small",
                maxResponseBytes: 16
              })
            }
          })
        ]
      })
      const call = Effect.provideService(agent.executeAction("small", {}), HttpClientModule.HttpClient, lying)
      const error = failure(yield* Effect.exit(call))
      assert.strictEqual(error.category, "EXECUTION")
      assert.include(error.message, "maxResponseBytes")
    }).pipe(Effect.scoped)
  )
})

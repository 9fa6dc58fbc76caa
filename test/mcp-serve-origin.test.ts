/**
 * C48 (c): `Mcp.serve` over HTTP answers only the names that reach its listener. A JSON-RPC `tools/call`
 * with `Host: evil.example.com` and `Origin: http://evil.example.com` — what a page on a rebound name sends —
 * is 403 and runs nothing; so is each header alone, a text/plain POST is 415, and the names a server adds
 * (`allowedHosts`, `allowedOrigins`) are answered. Raw `node:http` requests, since a client library would
 * set `Host` itself.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import { Mcp } from "@rolecraft/mcp"
import { Effect, Schema } from "effect"
import * as RawHttp from "./support/rawHttp.ts"

/** One POST to `url` with exactly these headers (Host included). */
const post = (url: string, headers: Readonly<Record<string, string>>, body: string) =>
  RawHttp.send("POST", url, headers, body)

const call = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "book", arguments: { hotel: "Casa Alfama" } }
})

const json = { "content-type": "application/json", accept: "application/json, text/event-stream" }

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
})

describe("Mcp.serve over HTTP: Host and Origin", () => {
  it.live("a call from another name or origin is 403 and runs nothing; the listener's own names are answered", () =>
    Effect.gen(function* () {
      let booked = 0
      const role = Role.make({
        identity: { name: "desk", goal: "book", domain: "travel" },
        actions: {
          book: Action.local({
            description: "Book a hotel",
            parameters: { hotel: Schema.String },
            run: ({ hotel }) => {
              booked += 1
              return `booked ${hotel}`
            }
          })
        }
      })
      const agent = yield* Agent.make({ id: "desk", roles: [role] })
      const served = yield* Mcp.serve(agent, {
        transport: {
          http: { port: 0, allowedHosts: ["mcp.example.com"], allowedOrigins: ["https://app.example.com"] }
        }
      })
      const url = served.url ?? ""
      const own = new URL(url).host
      const port = new URL(url).port
      const refused: ReadonlyArray<readonly [string, Readonly<Record<string, string>>, number]> = [
        ["a rebound name", { host: "evil.example.com", origin: "http://evil.example.com" }, 403],
        ["another Host alone", { host: "evil.example.com" }, 403],
        ["the listener's Host, another Origin", { host: own, origin: "http://evil.example.com" }, 403],
        ["another port's origin", { host: own, origin: `http://127.0.0.1:${Number(port) + 1}` }, 403],
        ["an opaque origin", { host: own, origin: "null" }, 403],
        ["a rebound name on the listener's port", { host: `evil.example.com:${port}` }, 403],
        ["an allowed host, another origin", { host: "mcp.example.com", origin: "https://evil.example.com" }, 403]
      ]
      for (const [why, headers, status] of refused) {
        const answer = yield* post(url, { ...json, ...headers }, call)
        assert.strictEqual(answer.status, status, why)
        assert.strictEqual(JSON.parse(answer.body).error.code, -32000, why)
      }
      // A text/plain POST from the listener's own name: no simple cross-origin request reaches a tool.
      const plain = yield* post(url, { host: own, "content-type": "text/plain", accept: json.accept }, call)
      assert.strictEqual(plain.status, 415)
      assert.strictEqual(booked, 0, "no refused request ran the tool")

      const accepted: ReadonlyArray<Readonly<Record<string, string>>> = [
        { host: own },
        { host: own, origin: `http://${own}` },
        { host: `localhost:${port}`, origin: `http://localhost:${port}` },
        { host: `[::1]:${port}` },
        { host: "mcp.example.com", origin: "https://app.example.com" }
      ]
      for (const headers of accepted) {
        // A session first (the server keeps one per client), then the call in it.
        const opened = yield* post(url, { ...json, ...headers }, initialize)
        assert.strictEqual(opened.status, 200, JSON.stringify(headers))
        const session = String(opened.headers["mcp-session-id"])
        const answer = yield* post(url, { ...json, ...headers, "mcp-session-id": session }, call)
        assert.strictEqual(answer.status, 200, JSON.stringify(headers))
        assert.include(answer.body, "booked Casa Alfama")
      }
      assert.strictEqual(booked, accepted.length)
    }).pipe(Effect.scoped)
  )
})

/**
 * Secrets echoed back through post-processing (C43): a server that echoes the
 * bearer token in its JSON body, and a result mapper that fails quoting the
 * payload. Redaction covers everything that runs for the call, and cuts after
 * redacting: 0 occurrences of the secret, or of its first characters, in the
 * error, the events and the spans.
 */
import { inspect } from "node:util"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type Events, Role } from "@rolecraft/core"
import { Telemetry } from "@rolecraft/testing"
import { ConfigProvider, Effect, Schema, Stream } from "effect"
import * as LocalServer from "../../packages/core/test/support/LocalServer.ts"

const token = "tok-9f8e7d6c5b4a39281706"

const show = (value: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = value
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    parts.push(String(current), inspect(current, { depth: 8 }))
    try {
      parts.push(JSON.stringify(current))
    } catch {}
    current = (current as { readonly cause?: unknown }).cause
  }
  return parts.join("\n")
}

describe("redaction of everything that runs for a call", () => {
  it.live(
    "C43: a failing mapResult quoting an echoed secret, an excerpt cut through the secret, a JSON parse of an unquoted secret: 0 occurrences",
    () =>
      Effect.gen(function* () {
        const server = yield* LocalServer.start((request, response) => {
          const credential = request.headers.authorization ?? ""
          switch (request.path) {
            case "/echo":
              return LocalServer.reply(
                response,
                200,
                { "content-type": "application/json" },
                JSON.stringify({ credential })
              )
            case "/long":
              // The secret straddles the 1,000-character excerpt's end.
              return LocalServer.reply(
                response,
                400,
                { "content-type": "text/plain" },
                `${"x".repeat(990)}${credential}`
              )
            default:
              // JSON content type, an unquoted secret as the body: the parser's message would quote its start.
              return LocalServer.reply(response, 200, { "content-type": "application/json" }, credential.slice(7))
          }
        })
        const bearer = (path: string) =>
          Action.webService({
            description: path,
            parameters: { note: Schema.String },
            endpoint: `${server.url}${path}`,
            auth: "BEARER",
            authTokenEnv: "API_TOKEN"
          })
        const role = Role.make({
          identity: { name: "client", goal: "call services", domain: "http" },
          actions: {
            echo: bearer("/echo").pipe(
              Action.mapResult((result) => {
                throw new Error(`cannot map ${JSON.stringify(result.value)}`)
              })
            ),
            long: bearer("/long"),
            raw: bearer("/raw")
          }
        })
        const recorder = Telemetry.make()
        const errors: Array<unknown> = []
        const events: Array<Events.Event> = []
        yield* Effect.gen(function* () {
          const agent = yield* Agent.make({ id: "c43", roles: [role] })
          yield* Effect.forkScoped(Stream.runForEach(agent.events, (event) => Effect.sync(() => events.push(event))))
          for (let i = 0; i < 10; i++) yield* Effect.yieldNow
          for (const name of ["echo", "long", "raw"] as const) {
            errors.push(yield* Effect.flip(agent.executeAction(name, { note: "n" })))
          }
          for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        }).pipe(
          Effect.scoped,
          Effect.provide(NodeHttpClient.layerUndici),
          Effect.provide(recorder.layer),
          Effect.withTracer(recorder.tracer),
          Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { API_TOKEN: token } }))
        )
        // The server saw the secret and echoed it: the test can fail.
        assert.isTrue(server.received.every((request) => request.headers.authorization === `Bearer ${token}`))
        assert.strictEqual(errors.length, 3)
        const texts = {
          errors: errors.map(show).join("\n"),
          events: events.map(show).join("\n"),
          spans: recorder.spans.map((span) => (span.status._tag === "Ended" ? show(span.status.exit) : "")).join("\n"),
          logs: recorder.logs.map((line) => line.message).join("\n")
        }
        for (const [where, text] of Object.entries(texts)) {
          assert.strictEqual(text.split(token).length - 1, 0, `${where} holds the secret`)
          // Partial echoes: the first 8 characters of the secret never appear either.
          assert.notInclude(text, token.slice(0, 8), `${where} holds part of the secret`)
        }
      })
  )
})

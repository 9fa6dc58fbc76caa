/**
 * SPEC §6: secrets are redacted everywhere. A real local server echoes the
 * credential back in every place it can reach — error bodies, an HTML error
 * page, a response header that ends up in a log line — and the test searches
 * every error, event, span and log line for the secret in all its forms.
 */
import { inspect } from "node:util"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Action, type ActionError, Agent, type Events, Role } from "@rolecraft/core"
import { Telemetry } from "@rolecraft/testing"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Schema, Stream } from "effect"
import * as LocalServer from "../packages/core/test/support/LocalServer.ts"

const token = "s3cr3t-Tok3n/with+chars=="
const user = "ann"
const password = "pa55/w0rd+x"

/** Every form a secret could leak in. */
const forms = [
  token,
  encodeURIComponent(token),
  Buffer.from(token).toString("base64"),
  password,
  encodeURIComponent(password),
  Buffer.from(`${user}:${password}`).toString("base64")
]

const safely = (f: () => string): string => {
  try {
    return f()
  } catch (error) {
    return `<unserialisable: ${String(error)}>`
  }
}

/** An error as any reporter could show it: message, excerpt, JSON, inspection, and its whole cause chain. */
const showError = (error: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = error
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    parts.push(
      String(current),
      safely(() => JSON.stringify(current)),
      safely(() => inspect(current, { depth: 8, showHidden: true })),
      current instanceof Error ? `${current.message}\n${current.stack ?? ""}` : ""
    )
    if (current instanceof AggregateError) parts.push(...current.errors.map(showError))
    current = (current as { readonly cause?: unknown }).cause
  }
  return parts.join("\n")
}

describe("webService redaction", () => {
  it.live("the secret appears in no error, span attribute, span failure or log line", () =>
    Effect.gen(function* () {
      const server = yield* LocalServer.start((request, response) => {
        const credential = request.headers.authorization ?? ""
        const plain = Buffer.from(credential.replace(/^Basic /, ""), "base64").toString("utf8")
        switch (request.path) {
          case "/reject":
            return LocalServer.reply(
              response,
              401,
              { "content-type": "application/json" },
              JSON.stringify({ error: "invalid_token", got: credential, plain })
            )
          case "/page":
            return LocalServer.reply(
              response,
              502,
              { "content-type": "text/html" },
              `<html><head><title>Bad gateway for ${credential}</title></head><body>${plain}</body></html>`
            )
          case "/charset":
            // A charset label nobody knows, made of the secret: the warning that names it must not.
            return LocalServer.reply(response, 200, { "content-type": `text/plain; charset=${token}` }, "hello")
          case "/drop":
            return response.socket?.destroy()
          default:
            return LocalServer.reply(
              response,
              404,
              { "content-type": "text/plain" },
              `no route; you sent ${credential}`
            )
        }
      })
      const bearer = (path: string) =>
        Action.webService({
          description: path,
          parameters: { note: Schema.String },
          endpoint: `${server.url}${path}`,
          method: "POST",
          auth: "BEARER",
          authTokenEnv: "API_TOKEN"
        })
      const role = Role.make({
        identity: { name: "client", goal: "call services", domain: "http" },
        actions: {
          reject: bearer("/reject"),
          page: bearer("/page"),
          charset: bearer("/charset"),
          drop: bearer("/drop"),
          missing: bearer("/missing"),
          basic: Action.webService({
            description: "basic",
            parameters: {},
            endpoint: `${server.url}/reject`,
            auth: "BASIC",
            authTokenEnv: "BASIC_CREDENTIALS"
          }),
          basicPage: Action.webService({
            description: "basic page",
            parameters: {},
            endpoint: `${server.url}/page`,
            auth: "BASIC",
            authTokenEnv: "BASIC_CREDENTIALS"
          })
        }
      })

      const recorder = Telemetry.make()
      const { spans, tracer } = recorder

      const errors: Array<ActionError.ActionError | ActionError.RetrievalFailure> = []
      const events: Array<Events.Event> = []
      const program = Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "redaction", roles: [role] })
        yield* Effect.forkScoped(Stream.runForEach(agent.events, (event) => Effect.sync(() => events.push(event))))
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        for (const name of ["reject", "page", "drop", "missing", "basic", "basicPage"] as const) {
          errors.push(yield* Effect.flip(agent.executeAction(name, name.startsWith("basic") ? {} : { note: "n" })))
        }
        const decoded = yield* agent.executeAction("charset", { note: "n" })
        assert.strictEqual(decoded, "hello")
        const response = yield* agent.execute({ action: "reject", params: { note: "n" } })
        if (!response.success) errors.push(response.error)
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      }).pipe(Effect.scoped)
      yield* program.pipe(
        Effect.provide(NodeHttpClient.layerUndici),
        Effect.provide(recorder.layer),
        Effect.withTracer(tracer),
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnv({ env: { API_TOKEN: token, BASIC_CREDENTIALS: `${user}:${password}` } })
        )
      )

      // The server did receive the secret, and echoed it back: the test can fail.
      assert.isTrue(server.received.some((request) => request.headers.authorization === `Bearer ${token}`))
      assert.strictEqual(errors.length, 7)
      assert.deepStrictEqual(
        errors.map((error) => error._tag),
        [
          "ExecutionFailure",
          "TransientFailure",
          "TransientFailure",
          "ExecutionFailure",
          "ExecutionFailure",
          "TransientFailure",
          "ExecutionFailure"
        ]
      )
      assert.isTrue(errors.some((error) => error.message.includes("[REDACTED]")))
      assert.isTrue(recorder.logs.some((line) => line.message.includes("unknown charset")))
      assert.isTrue(spans.some((span) => span.name.startsWith("execute_tool ")))

      // 8 calls, each a started and a finished event
      assert.strictEqual(events.length, 16)
      assert.isTrue(events.some((event) => event._tag === "ActionFailed"))
      const sources: ReadonlyArray<{ readonly name: string; readonly text: string }> = [
        {
          name: "events",
          text: events.map((event) => safely(() => JSON.stringify(event)) + inspect(event)).join("\n")
        },
        { name: "errors", text: errors.map(showError).join("\n") },
        {
          name: "span attributes and events",
          text: spans
            .map((span) =>
              safely(() =>
                JSON.stringify({
                  name: span.name,
                  attributes: [...span.attributes.entries()],
                  events: span.events
                })
              )
            )
            .join("\n")
        },
        {
          // What an exporter records of a failed span: its failure (a successful span's value is not exported).
          name: "span failures",
          text: spans
            .map((span) =>
              span.status._tag === "Ended" && span.status.exit._tag === "Failure"
                ? showError(span.status.exit.cause) + inspect(span.status.exit.cause, { depth: 10 })
                : ""
            )
            .join("\n")
        },
        { name: "log lines", text: recorder.logs.map((line) => `${line.message}\n${line.cause}`).join("\n") }
      ]
      for (const source of sources) {
        assert.isAbove(source.text.length, 0, source.name)
        for (const form of forms) assert.notInclude(source.text, form, `${source.name} leak ${form}`)
      }
    })
  )
})

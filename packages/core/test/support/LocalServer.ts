/**
 * A real `node:http` server on 127.0.0.1 (an ephemeral port) for tests: it
 * records every request as received on the wire and counts requests whose
 * connection the client closed before the response was finished.
 */
import type * as http from "node:http"
import { LocalHttpServer } from "@rolecraft/testing"
import { Effect, type Scope } from "effect"

/** A request as the server received it. */
export interface Received {
  readonly method: string
  /** The raw request target, e.g. `/v1/forecast/S%C3%A3o?x=1`. */
  readonly target: string
  /** The raw path, still percent-encoded. */
  readonly path: string
  /** The raw query string without `?` (`""` when none). */
  readonly query: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** Answers a request; it may leave the response open to stall. */
export type Handler = (request: Received, response: http.ServerResponse, incoming: http.IncomingMessage) => void

export interface LocalServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly received: ReadonlyArray<Received>
  /** How many responses were cut off by the client closing the connection. */
  readonly aborted: () => number
  /** Resolves when `aborted()` reaches `count`, or fails after `within` ms. */
  readonly waitForAborted: (count: number, within?: number) => Effect.Effect<void, Error>
}

/** Starts a server for the life of the scope. */
export const start = (handler: Handler): Effect.Effect<LocalServer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const received: Array<Received> = []
    let aborted = 0
    const { url } = yield* LocalHttpServer.serve((incoming, response) => {
      const chunks: Array<Buffer> = []
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
      incoming.on("end", () => {
        const target = incoming.url ?? "/"
        const at = target.indexOf("?")
        const request: Received = {
          method: incoming.method ?? "GET",
          target,
          path: at < 0 ? target : target.slice(0, at),
          query: at < 0 ? "" : target.slice(at + 1),
          headers: incoming.headers,
          body: Buffer.concat(chunks).toString("utf8")
        }
        received.push(request)
        response.on("close", () => {
          if (!response.writableFinished) aborted += 1
        })
        handler(request, response, incoming)
      })
    })
    return {
      url,
      received,
      aborted: () => aborted,
      waitForAborted: (count, within = 2000) =>
        Effect.gen(function* () {
          for (let waited = 0; aborted < count; waited += 10) {
            if (waited >= within) {
              return yield* Effect.fail(new Error(`expected ${count} aborted responses, saw ${aborted}`))
            }
            yield* Effect.sleep("10 millis")
          }
        })
    } satisfies LocalServer
  })

/** Writes a response with a status, headers and a body. */
export const reply = (
  response: http.ServerResponse,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: string | Uint8Array = ""
): void => {
  response.writeHead(status, headers)
  response.end(body)
}

/** A JSON response. */
export const json = (response: http.ServerResponse, value: unknown, status = 200): void =>
  reply(response, status, { "content-type": "application/json" }, JSON.stringify(value))

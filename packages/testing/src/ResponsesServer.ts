/**
 * A real, local OpenAI Responses API endpoint for tests: a `node:http`
 * server on 127.0.0.1 (an ephemeral port) answering `POST /v1/responses`
 * from a script, one step a request — a whole response body, a stream of
 * events (each sent as `event: <type>` and `data: <json>`, as the API
 * streams), an HTTP error with an OpenAI-style body, or an answer made from
 * the request — and recording every request's headers and body. The
 * `openai` SDK's `responses` client (and `OpenAiResponsesModel`) talks to
 * it through {@link ResponsesServer.baseURL}. A request past the script
 * gets 500.
 *
 * @example
 * ```ts
 * import { ResponsesServer } from "@rolecraft/testing"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const server = yield* ResponsesServer.make([
 *     ResponsesServer.body({
 *       id: "resp_1", object: "response", status: "completed", model: "gpt-test",
 *       output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi.", annotations: [] }] }],
 *       usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 }
 *     })
 *   ])
 *   return server.baseURL // http://127.0.0.1:<port>/v1
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.3.0
 */
import type * as Http from "node:http"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as LocalHttpServer from "./LocalHttpServer.ts"

/**
 * One recorded request: its method, path, lower-case headers and JSON body.
 *
 * @category models
 * @since 0.3.0
 */
export interface Recorded {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}

/**
 * One scripted answer (made by {@link body}, {@link events}, {@link error} or {@link respond}).
 *
 * @category models
 * @since 0.3.0
 */
export type Step =
  | { readonly _tag: "Body"; readonly status: number; readonly text: string }
  | { readonly _tag: "Events"; readonly events: ReadonlyArray<unknown> }
  | { readonly _tag: "Respond"; readonly respond: (request: Recorded) => Step }

/**
 * A whole response (or any JSON body) sent as given, with `status` (default 200).
 *
 * @category constructors
 * @since 0.3.0
 */
export const body = (value: unknown, options?: { readonly status?: number | undefined }): Step => ({
  _tag: "Body",
  status: options?.status ?? 200,
  text: typeof value === "string" ? value : JSON.stringify(value)
})

/**
 * A stream of events, each sent as one server-sent event named by its `type`; the stream then ends.
 *
 * @category constructors
 * @since 0.3.0
 */
export const events = (list: ReadonlyArray<unknown>): Step => ({ _tag: "Events", events: list })

/**
 * An HTTP error with an OpenAI-style body `{"error":{"message","type","code"}}`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const error = (status: number, message: string, type = "invalid_request_error"): Step =>
  body({ error: { message, type, param: null, code: null } }, { status })

/**
 * An answer made from the request as recorded (e.g. a 400 unless the request carries something).
 *
 * @category constructors
 * @since 0.3.0
 */
export const respond = (f: (request: Recorded) => Step): Step => ({ _tag: "Respond", respond: f })

/**
 * A running endpoint: `baseURL` (`http://127.0.0.1:<port>/v1`), every request so far, and how many steps
 * are left.
 *
 * @category models
 * @since 0.3.0
 */
export interface ResponsesServer {
  readonly baseURL: string
  readonly requests: Effect.Effect<ReadonlyArray<Recorded>>
  readonly remaining: Effect.Effect<number>
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const answer = (response: Http.ServerResponse, step: Step, request: Recorded): void => {
  switch (step._tag) {
    case "Respond":
      answer(response, step.respond(request), request)
      return
    case "Body":
      response.writeHead(step.status, { "content-type": "application/json" })
      response.end(step.text)
      return
    case "Events": {
      response.writeHead(200, { "content-type": "text/event-stream" })
      for (const event of step.events) {
        const type = typeof event === "object" && event !== null && "type" in event ? String(event.type) : "message"
        response.write(`event: ${type}\ndata: ${JSON.stringify(event)}\n\n`)
      }
      response.end()
    }
  }
}

/**
 * Starts the endpoint on 127.0.0.1 with `script`, stopped when the scope closes.
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = (script: ReadonlyArray<Step>): Effect.Effect<ResponsesServer, never, Scope.Scope> => {
  const queue = [...script]
  const recorded: Array<Recorded> = []
  return Effect.map(
    LocalHttpServer.serve((request, response) => {
      const parts: Array<Buffer> = []
      request.on("data", (part: Buffer) => parts.push(part))
      request.on("end", () => {
        const headers: Record<string, string> = {}
        for (const [name, value] of Object.entries(request.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value
        }
        const seen: Recorded = {
          method: request.method ?? "",
          path: request.url ?? "",
          headers,
          body: parse(Buffer.concat(parts).toString("utf8"))
        }
        recorded.push(seen)
        const step = queue.shift()
        if (step === undefined) {
          response.writeHead(500, { "content-type": "application/json" })
          response.end(JSON.stringify({ error: { message: "the script has no more steps", type: "server_error" } }))
          return
        }
        answer(response, step, seen)
      })
    }),
    (server): ResponsesServer => ({
      baseURL: `${server.url}/v1`,
      requests: Effect.sync(() => [...recorded]),
      remaining: Effect.sync(() => queue.length)
    })
  )
}

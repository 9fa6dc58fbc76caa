/**
 * HTTP routes as an `HttpClient` layer: a test stand-in for the
 * HTTP services webService actions call, built with Effect's own
 * `HttpClient.make`, so the same executor — URL building, auth, status
 * classification, charset decoding, retry safety — runs under it exactly as
 * it runs over `NodeHttpClient`. Nothing touches the network.
 *
 * Routes are keyed `"METHOD /path"`; paths use Effect's `FindMyWay` router
 * patterns (`/v1/forecast/:city`, `/files/*`); `*` as the method matches any.
 * A request no route matches gets `404` with a text body naming it. Every
 * request is recorded, in order, in `requests`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { HttpRoutes } from "@rolecraft/testing"
 *
 * const weather = HttpRoutes.make({
 *   "GET /v1/forecast/:city": (request) => HttpRoutes.json({ city: request.params.city, temp: 21 }),
 *   "GET /v1/current": (request) => HttpRoutes.json({ temp: request.query.get("city") === "Vienna" ? 21 : 18 })
 * })
 * // program.pipe(Effect.provide(weather.layer)); then inspect weather.requests
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FindMyWay from "effect/http/FindMyWay"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"

/**
 * A request as a route sees it.
 *
 * - `path`: the raw (still percent-encoded) path; `params`: the pattern's
 *   parameters, decoded; `query`: the query string's parameters, decoded.
 * - `headers`: lower-case names (the `Authorization` header as sent).
 * - `body`: the body as UTF-8 text (`""` when none).
 *
 * @category models
 * @since 0.1.0
 */
export interface Request {
  readonly method: string
  readonly url: URL
  readonly path: string
  readonly params: Readonly<Record<string, string | undefined>>
  readonly query: URLSearchParams
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * What a route answers: a response (`status` default 200, `headers`, `body`
 * as text or bytes), or a connection failure — `refused` (before anything
 * was sent: ECONNREFUSED) or `reset` (after the request was sent:
 * ECONNRESET).
 *
 * @category models
 * @since 0.1.0
 */
export type Reply =
  | {
      readonly _tag: "Response"
      readonly status: number
      readonly headers: Readonly<Record<string, string>>
      readonly body: string | Uint8Array | undefined
    }
  | { readonly _tag: "Refused" }
  | { readonly _tag: "Reset" }

/**
 * A route's handler: returns a {@link Reply}, or an Effect of one (which may
 * sleep, e.g. to exercise timeouts on the TestClock).
 *
 * @category models
 * @since 0.1.0
 */
export type Handler = (request: Request) => Reply | Effect.Effect<Reply>

/**
 * Routes keyed `"METHOD /path"` (`"GET /v1/forecast/:city"`, `"* /any"`).
 *
 * @category models
 * @since 0.1.0
 */
export type Routes = Readonly<Record<`${string} /${string}`, Handler>>

/**
 * The routes served as an HTTP client: `client` itself, `layer` providing
 * it as the `HttpClient` service, and `requests`, every request received so
 * far in order.
 *
 * @category models
 * @since 0.1.0
 */
export interface HttpRoutes {
  readonly client: HttpClient.HttpClient
  readonly layer: Layer.Layer<HttpClient.HttpClient>
  readonly requests: ReadonlyArray<Request>
}

/**
 * A response. `status` defaults to 200; a 204, 205 or 304 is sent without a
 * body whatever `body` says.
 *
 * @category constructors
 * @since 0.1.0
 */
export const response = (options: {
  readonly status?: number | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly body?: string | Uint8Array | undefined
}): Reply => ({
  _tag: "Response",
  status: options.status ?? 200,
  headers: options.headers ?? {},
  body: options.body
})

/**
 * A JSON response (`content-type: application/json`); `status` default 200.
 *
 * @category constructors
 * @since 0.1.0
 */
export const json = (
  value: unknown,
  options: {
    readonly status?: number | undefined
    readonly headers?: Readonly<Record<string, string>> | undefined
  } = {}
): Reply =>
  response({
    status: options.status,
    headers: { "content-type": "application/json", ...options.headers },
    body: JSON.stringify(value)
  })

/**
 * A text response (`content-type: text/plain; charset=utf-8` unless given);
 * `status` default 200.
 *
 * @category constructors
 * @since 0.1.0
 */
export const text = (
  body: string,
  options: {
    readonly status?: number | undefined
    readonly headers?: Readonly<Record<string, string>> | undefined
  } = {}
): Reply =>
  response({
    status: options.status,
    headers: { "content-type": "text/plain; charset=utf-8", ...options.headers },
    body
  })

/**
 * A response with a status and no body (e.g. `status(204)`, or `status(429,
 * { "retry-after": "3" })`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const status = (code: number, headers: Readonly<Record<string, string>> = {}): Reply =>
  response({ status: code, headers })

/**
 * The connection is refused before anything is sent (a TransportError whose
 * cause has code `ECONNREFUSED`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const refused: Reply = { _tag: "Refused" }

/**
 * The connection breaks after the request was sent (a TransportError whose
 * cause has code `ECONNRESET`): the server may have processed it.
 *
 * @category constructors
 * @since 0.1.0
 */
export const reset: Reply = { _tag: "Reset" }

const bodyText = (body: HttpClientRequest.HttpClientRequest["body"]): string => {
  switch (body._tag) {
    case "Uint8Array":
      return new TextDecoder().decode(body.body)
    case "Raw":
      return typeof body.body === "string"
        ? body.body
        : body.body instanceof Uint8Array
          ? new TextDecoder().decode(body.body)
          : ""
    default:
      return ""
  }
}

const transportError = (request: HttpClientRequest.HttpClientRequest, code: string, message: string) =>
  new HttpClientError.HttpClientError({
    reason: new HttpClientError.TransportError({
      request,
      cause: Object.assign(new Error(message), { code }),
      description: message
    })
  })

const withoutBody = new Set([204, 205, 304])

/**
 * Serves `routes` as an HTTP client (see the module docs).
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (routes: Routes): HttpRoutes => {
  const router = FindMyWay.make<Handler>()
  for (const [key, handler] of Object.entries(routes) as ReadonlyArray<[string, Handler]>) {
    const space = key.indexOf(" ")
    const method = key.slice(0, space)
    const path = key.slice(space + 1) as FindMyWay.PathInput
    if (method === "*") router.all(path, handler)
    else router.on(method, path, handler)
  }
  const requests: Array<Request> = []
  const client = HttpClient.make((request, url) =>
    Effect.gen(function* () {
      const found = router.find(request.method, url.pathname + url.search)
      const received: Request = {
        method: request.method,
        url,
        path: url.pathname,
        params: found?.params ?? {},
        query: url.searchParams,
        headers: request.headers,
        body: bodyText(request.body)
      }
      requests.push(received)
      const answered =
        found === undefined
          ? text(`No route for ${request.method} ${url.pathname}`, { status: 404 })
          : found.handler(received)
      const reply = Effect.isEffect(answered) ? yield* answered : answered
      switch (reply._tag) {
        case "Refused":
          return yield* Effect.fail(
            transportError(request, "ECONNREFUSED", `connect ECONNREFUSED ${url.host} (HttpRoutes.refused)`)
          )
        case "Reset":
          return yield* Effect.fail(transportError(request, "ECONNRESET", "socket hang up (HttpRoutes.reset)"))
        case "Response":
          return HttpClientResponse.fromWeb(
            request,
            new Response(withoutBody.has(reply.status) ? null : (reply.body ?? null), {
              status: reply.status,
              headers: reply.headers
            })
          )
      }
    })
  )
  return { client, layer: Layer.succeed(HttpClient.HttpClient, client), requests }
}

/**
 * The `HttpClient` layer of `routes`, when the recorded requests are not
 * needed.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (routes: Routes): Layer.Layer<HttpClient.HttpClient> => make(routes).layer

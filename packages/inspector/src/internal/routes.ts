/**
 * The inspector's routes, each behind the door:
 *
 * - `GET /` — the page (`page.ts`), with a fresh page token;
 * - `POST /v1/traces`, `/v1/metrics`, `/v1/logs` — OTLP/HTTP JSON (gzip
 *   allowed), at most 16 MiB unzipped; `200 {}` when kept, 400 naming the
 *   field when not OTLP JSON, 415 for protobuf or another type;
 * - `GET /api/runs` — `{ turns }` (`Runs.turns`);
 * - `GET /api/turn?trace=…&span=…` — `{ turn, nodes }` (`Runs.tree`);
 * - `GET /api/metrics` — `{ metrics }`;
 * - `GET /api/approvals` — `{ configured, pending }`;
 * - `POST /api/decide` `{ key, decision: "approve" | "reject", approver, reason? }`
 *   (JSON and the page token) — `200 { recorded }`, or `409 { refused, check }`
 *   when the store refuses (decided before, naming who; expired; unknown);
 * - `GET /api/thread?id=…` — `{ configured, thread }`: the thread store's
 *   thread (`{ id, exchanges, summary, messages, pending }`, `pending` the
 *   calls its paused turn waits on), read through the store's `read`;
 * - `GET /api/events` — server-sent events: `data: spans`, `metrics` or
 *   `approvals` when that changed, and a comment every 15 seconds.
 *
 * An OTLP request carries no page token (an exporter has none): it is
 * judged by `Host`, `Origin` (a browser's, which must be our own) and a JSON
 * content type, which no page on another origin can send without a CORS
 * preflight this server never grants.
 */
import { Decision, type HttpDoor, type ThreadStore } from "@rolecraft/core"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Runs from "../Runs.ts"
import * as Traces from "../Traces.ts"
import type * as Approvals from "./approvals.ts"
import { page } from "./page.ts"

/** The header the page sends its token in. */
export const tokenHeader = "x-inspector-token"

/** The largest OTLP body read, unzipped. */
const maxBody = 16 * 1024 * 1024

const DecideBody = Schema.Struct({
  key: Schema.String.check(Schema.isPattern(/^[0-9a-f]{64}$/)),
  decision: Schema.Literals(["approve", "reject"]),
  approver: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  reason: Schema.optional(Schema.String.check(Schema.isMaxLength(2_000)))
})

const TurnQuery = Schema.Struct({ trace: Schema.String, span: Schema.String })

const ThreadQuery = Schema.Struct({ id: Schema.String.check(Schema.isMinLength(1)) })

const text = (body: string, status: number) => HttpServerResponse.text(body, { status })

const json = (body: unknown, status = 200) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { "cache-control": "no-store" } })

const badRequest = (error: { readonly message: string }) => Effect.succeed(text(`bad request: ${error.message}`, 400))

/** `handler` once the request passed the door (`changes`: it needs JSON and the page token). */
const guarded = <E, R>(
  door: Effect.Effect<HttpDoor.HttpDoor>,
  changes: boolean,
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.flatMap(Effect.zip(door, HttpServerRequest.HttpServerRequest), ([open, request]) => {
    const refused = open.refusal(request, changes)
    return refused === undefined ? handler : Effect.succeed(text(`refused: ${refused.reason}`, refused.status))
  })

/** The JSON of an OTLP request's body (gunzipped when so encoded), or why it cannot be read. */
const otlpBody = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase()
  if (type !== "application/json") {
    return {
      _tag: "Refused" as const,
      response: text(
        "this receiver reads OTLP/HTTP JSON only (Effect's Otlp.layerJson; OTEL_EXPORTER_OTLP_PROTOCOL=http/json)",
        415
      )
    }
  }
  const bytes = Buffer.from(yield* request.arrayBuffer)
  const encoding = (request.headers["content-encoding"] ?? "identity").toLowerCase()
  const unzipped = yield* Effect.try({
    // node:zlib is loaded by the first gzip body, not at import.
    try: () =>
      encoding === "gzip"
        ? process.getBuiltinModule("node:zlib").gunzipSync(bytes, { maxOutputLength: maxBody })
        : bytes,
    catch: () => new Traces.TracesError({ field: "", message: "the gzip body cannot be read (or is past 16 MiB)" })
  })
  if (unzipped.length > maxBody) {
    return yield* new Traces.TracesError({ field: "", message: "the body is past 16 MiB" })
  }
  const body = yield* Effect.try({
    try: (): unknown => JSON.parse(unzipped.toString("utf8")),
    catch: () => new Traces.TracesError({ field: "", message: "the body is not JSON" })
  })
  return { _tag: "Read" as const, body }
})

const receive = (keep: (body: unknown) => Effect.Effect<void, Traces.TracesError>) =>
  otlpBody.pipe(
    Effect.flatMap((read) =>
      read._tag === "Refused" ? Effect.succeed(read.response) : Effect.as(keep(read.body), json({}))
    ),
    Effect.catch((error) =>
      Effect.succeed(
        error._tag === "TracesError"
          ? json({ error: error.message, field: error.field }, 400)
          : text("bad request", 400)
      )
    )
  )

/** The routes of one inspector. */
export const make = (options: {
  readonly door: Effect.Effect<HttpDoor.HttpDoor>
  readonly traces: Traces.Traces
  readonly inbox: Approvals.Inbox
  readonly threads: ThreadStore.Service | undefined
  readonly changes: PubSub.PubSub<string>
}) => {
  const { door, traces, inbox, threads, changes } = options
  const read = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    guarded(door, false, handler)
  const events = Stream.merge(Stream.fromPubSub(traces.changes), Stream.fromPubSub(changes)).pipe(
    Stream.map((change) => `data: ${change}\n\n`),
    Stream.merge(Stream.map(Stream.tick("15 seconds"), () => ": alive\n\n")),
    Stream.encodeText
  )
  return HttpRouter.addAll([
    HttpRouter.route(
      "GET",
      "/",
      read(
        Effect.map(door, (open) => {
          const nonce = process.getBuiltinModule("node:crypto").randomBytes(16).toString("base64")
          return HttpServerResponse.html(page(open.pageToken(), nonce)).pipe(
            HttpServerResponse.setHeaders({
              "cache-control": "no-store",
              "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
              "x-frame-options": "DENY",
              "referrer-policy": "no-referrer"
            })
          )
        })
      )
    ),
    HttpRouter.route(
      "POST",
      "/v1/traces",
      read(receive((body) => Effect.flatMap(Traces.decodeSpans(body), traces.add)))
    ),
    HttpRouter.route(
      "POST",
      "/v1/metrics",
      read(receive((body) => Effect.flatMap(Traces.decodeMetrics(body), traces.setMetrics)))
    ),
    HttpRouter.route("POST", "/v1/logs", read(receive(() => Effect.void))),
    HttpRouter.route("GET", "/api/runs", read(Effect.map(traces.spans, (spans) => json({ turns: Runs.turns(spans) })))),
    HttpRouter.route(
      "GET",
      "/api/turn",
      read(
        Effect.gen(function* () {
          const { trace, span } = yield* HttpServerRequest.schemaSearchParams(TurnQuery)
          const spans = yield* traces.spans
          const turn = Runs.turns(spans).find((entry) => entry.traceId === trace && entry.spanId === span)
          return json({ turn: turn ?? null, nodes: Runs.tree(spans, trace, span) })
        }).pipe(Effect.catch(badRequest))
      )
    ),
    HttpRouter.route("GET", "/api/metrics", read(Effect.map(traces.metrics, (metrics) => json({ metrics })))),
    HttpRouter.route(
      "GET",
      "/api/approvals",
      read(
        inbox.list.pipe(
          Effect.map((pending) => json({ configured: inbox.configured, pending })),
          Effect.catch((error) => Effect.succeed(json({ configured: true, pending: [], error: error.message }, 503)))
        )
      )
    ),
    HttpRouter.route(
      "POST",
      "/api/decide",
      guarded(
        door,
        true,
        Effect.gen(function* () {
          const body = yield* HttpServerRequest.schemaBodyJson(DecideBody)
          const decision =
            body.decision === "approve"
              ? Decision.approve(body.approver)
              : Decision.reject(body.approver, body.reason ?? "rejected on the inspector's page")
          const outcome = yield* inbox.decide(body.key, decision)
          if (outcome._tag === "Refused") return json({ refused: outcome.message, check: outcome.check }, 409)
          yield* PubSub.publish(changes, "approvals")
          return json({ recorded: outcome.decision })
        }).pipe(
          Effect.catch((error) =>
            Effect.succeed(
              error._tag === "StoreError" && error.category !== "VALIDATION"
                ? json({ error: error.message }, 503)
                : text(`bad request: ${error.message}`, 400)
            )
          )
        )
      )
    ),
    HttpRouter.route(
      "GET",
      "/api/thread",
      read(
        Effect.gen(function* () {
          const { id } = yield* HttpServerRequest.schemaSearchParams(ThreadQuery)
          if (threads === undefined) return json({ configured: false, thread: null })
          const thread = yield* threads.read(id)
          return json({
            configured: true,
            thread: {
              id: thread.id,
              exchanges: thread.exchanges,
              summary: thread.summary ?? null,
              messages: thread.messages,
              pending: thread.paused?.pending ?? []
            }
          })
        }).pipe(Effect.catch(badRequest))
      )
    ),
    HttpRouter.route(
      "GET",
      "/api/events",
      read(
        Effect.succeed(
          HttpServerResponse.stream(events, {
            contentType: "text/event-stream",
            headers: { "cache-control": "no-cache" }
          })
        )
      )
    )
  ])
}

/**
 * The run inspector: a local page that shows every chat turn an app ran —
 * its status, duration, model and tool calls, tokens, its span tree with
 * nested agents' paths and each span's attributes — and the approvals
 * waiting in an approval store, to approve or reject by name.
 *
 * It is an Effect HTTP server on 127.0.0.1 (an ephemeral port unless
 * `port` is given) that is:
 *
 * - an OTLP/HTTP receiver of traces and metrics in JSON at `/v1/traces` and
 *   `/v1/metrics` (`/v1/logs` is accepted and dropped), gzip bodies
 *   included: point Effect's `Otlp.layerJson` (or any OpenTelemetry exporter
 *   sending `http/json`) at its `url`. Protobuf bodies are answered 415;
 * - the page at `/`, its data under `/api/` (a thread of the thread store
 *   opened by id at `/api/thread?id=…`), and `/api/events`, server-sent
 *   events that say when spans, metrics or pending approvals changed (the
 *   page then reads again);
 * - closed by default (`HttpDoor` of `@rolecraft/core`): every request must
 *   name the listener in its `Host` (and in its `Origin` when a browser
 *   sends one); a decision must be JSON and carry the token its page was
 *   served with (`x-inspector-token`). Anything else is 403 (415 for another
 *   content type) before any work.
 *
 * Everything it shows passed the apps' redaction boundary before it was
 * exported or stored: arguments as the approval store recorded them, tool
 * arguments and results only when the agent traces content. It keeps spans
 * in memory only, and sends nothing anywhere.
 *
 * @example
 * ```ts
 * import { ApprovalStore } from "@rolecraft/core"
 * import { Inspector } from "@rolecraft/inspector"
 * import { Effect, Layer } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * import { Otlp } from "effect/observability"
 *
 * const program = Effect.gen(function* () {
 *   const store = ApprovalStore.makeMemory()
 *   const inspector = yield* Inspector.start({ approvals: store })
 *   const exporter = Otlp.layerJson({ baseUrl: inspector.url, resource: { serviceName: "my-app" } }).pipe(
 *     Layer.provide(FetchHttpClient.layer)
 *   )
 *   console.log(`inspector: ${inspector.url}`)
 *   // run the app's turns with `exporter` and `store` provided
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.3.0
 */
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { ApprovalStore, HttpDoor, type StoreBoundary, ThreadStore } from "@rolecraft/core"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerError from "effect/http/HttpServerError"
import * as Approvals from "./internal/approvals.ts"
import * as Routes from "./internal/routes.ts"
import * as Stores from "./internal/stores.ts"
import * as Traces from "./Traces.ts"

/**
 * What {@link start} takes:
 *
 * - `host`: the address to listen on (default `"127.0.0.1"`); `port`
 *   (default `0`: an ephemeral port; the bin's default is 4319);
 * - `approvals`: the approval store whose pending calls the inbox lists and
 *   decides; default: the `ApprovalStore` in the context when there is one,
 *   else none (the inbox says so);
 * - `threads`: the thread store whose threads the page opens by id;
 *   default: the `ThreadStore` in the context when there is one, else none;
 * - `maxSpans`: how many spans are kept in memory, the oldest dropped
 *   (default 20,000);
 * - `pollInterval`: how often the store's listing is read for the live view
 *   (default 1 second);
 * - `allowedHosts`, `allowedOrigins`: names the server also answers besides
 *   the listener's own (e.g. a proxy's `"inspector.internal"` and
 *   `"https://inspector.internal"`).
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly approvals?: ApprovalStore.Service | undefined
  readonly threads?: ThreadStore.Service | undefined
  readonly maxSpans?: number | undefined
  readonly pollInterval?: Duration.Input | undefined
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
}

/**
 * A running inspector: `url` its origin (`http://127.0.0.1:<port>`: the page,
 * and the `baseUrl` of an OTLP exporter), and `traces`, what it received.
 *
 * @category models
 * @since 0.3.0
 */
export interface Inspector {
  readonly url: string
  readonly traces: Traces.Traces
}

/**
 * The service of a running inspector (what {@link layer} provides).
 *
 * @category services
 * @since 0.3.0
 */
export class InspectorService extends Context.Service<InspectorService, Inspector>()(
  "@rolecraft/inspector/Inspector"
) {}

/**
 * Starts an inspector for the life of the scope (see the module doc and
 * {@link Options}). Fails with `ServeError` when it cannot listen.
 *
 * @category constructors
 * @since 0.3.0
 */
export const start = (options?: Options): Effect.Effect<Inspector, HttpServerError.ServeError, Scope.Scope> =>
  Effect.gen(function* () {
    const store = options?.approvals ?? Option.getOrUndefined(yield* Effect.serviceOption(ApprovalStore.ApprovalStore))
    const threads = options?.threads ?? Option.getOrUndefined(yield* Effect.serviceOption(ThreadStore.ThreadStore))
    const traces = yield* Traces.make({ maxSpans: options?.maxSpans })
    const changes = yield* PubSub.sliding<string>(16)
    const inbox = Approvals.make(store, traces)
    yield* Approvals.watch(inbox, changes, Duration.fromInputUnsafe(options?.pollInterval ?? "1 second"))
    const host = options?.host ?? "127.0.0.1"
    const door = yield* Deferred.make<HttpDoor.HttpDoor>()
    const routes = Routes.make({ door: Deferred.await(door), traces, inbox, threads, changes })
    const server = HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options?.port ?? 0, host }))
    )
    const context = yield* Layer.build(server)
    const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
    yield* Deferred.succeed(
      door,
      HttpDoor.make({
        host,
        port: Number(new URL(url).port),
        allowedHosts: options?.allowedHosts,
        allowedOrigins: options?.allowedOrigins,
        tokenHeader: Routes.tokenHeader
      })
    )
    return { url, traces }
  })

/**
 * {@link start} as a layer: an app starts the inspector beside itself for
 * the life of the layer. Reads the `ApprovalStore` of its context when
 * `approvals` is not given.
 *
 * @category layers
 * @since 0.3.0
 */
export const layer = (options?: Options): Layer.Layer<InspectorService, HttpServerError.ServeError> =>
  Layer.effect(InspectorService, start(options))

/**
 * An approval store opened from a URL, for the bin and for apps configured
 * by text: `memory` (a fresh store in this process), `sqlite:PATH` (or a
 * path ending `.db`/`.sqlite`: `ApprovalStore.layerSqlite`) or
 * `postgres://…` (`ApprovalStore.layerSql` over `@effect/sql-pg`, an
 * optional peer, loaded only then). Anything else is a `StoreError`
 * (VALIDATION naming the field `url`). The URL's password is never in an
 * error.
 *
 * @category layers
 * @since 0.3.0
 */
export const approvalsFromUrl = (url: string): Layer.Layer<ApprovalStore.ApprovalStore, StoreBoundary.StoreError> =>
  Stores.fromUrl(
    {
      name: "the approval store",
      memory: ApprovalStore.layerMemory,
      sqlite: (filename) => ApprovalStore.layerSqlite({ filename }),
      sql: ApprovalStore.layerSql,
      failed: (error) => Layer.effect(ApprovalStore.ApprovalStore, Effect.fail(error))
    },
    url
  )

/**
 * A thread store opened from a URL, as {@link approvalsFromUrl} (the
 * thread store's `layerMemory`, `layerSqlite`, `layerSql`).
 *
 * @category layers
 * @since 0.3.0
 */
export const threadsFromUrl = (url: string): Layer.Layer<ThreadStore.ThreadStore, StoreBoundary.StoreError> =>
  Stores.fromUrl(
    {
      name: "the thread store",
      memory: ThreadStore.layerMemory,
      sqlite: (filename) => ThreadStore.layerSqlite({ filename }),
      sql: ThreadStore.layerSql,
      failed: (error) => Layer.effect(ThreadStore.ThreadStore, Effect.fail(error))
    },
    url
  )

/**
 * A real `node:http` server on 127.0.0.1 at an ephemeral port, for the life
 * of a scope: what the test layers, the examples and the tour stand their
 * local services on (real HTTP, on 127.0.0.1 only).
 *
 * @example
 * ```ts
 * import { LocalHttpServer } from "@rolecraft/testing"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const { url } = yield* LocalHttpServer.serve((_request, response) => response.end("ok"))
 *   const text = yield* Effect.promise(() => fetch(url).then((reply) => reply.text())) // "ok"
 *   return text
 * }).pipe(Effect.scoped) // the server closes with the scope
 * ```
 *
 * @since 0.1.0
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/**
 * A listening server: `url` is its origin, `http://127.0.0.1:<port>` (no
 * trailing slash); `port` the port it was given.
 *
 * @category models
 * @since 0.1.0
 */
export interface LocalHttpServer {
  readonly server: Http.Server
  readonly url: string
  readonly port: number
}

/**
 * Starts a server answering with `handler` and stops it when the scope
 * closes: open connections (keep-alive, stalled bodies) are closed, then the
 * server, so closing never waits on a client. A failure to listen is a
 * defect.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LocalHttpServer } from "@rolecraft/testing"
 *
 * const program = Effect.gen(function* () {
 *   const { url } = yield* LocalHttpServer.serve((_, response) => response.end("ok"))
 *   return url // http://127.0.0.1:<port>
 * }).pipe(Effect.scoped)
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const serve = (handler: Http.RequestListener): Effect.Effect<LocalHttpServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<LocalHttpServer>((resume) => {
      const server = Http.createServer(handler)
      server.once("error", (cause) => resume(Effect.die(cause)))
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, port, url: `http://127.0.0.1:${port}` }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

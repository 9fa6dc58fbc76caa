import * as Http from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { LocalHttpServer } from "@rolecraft/testing"
import { Effect, Exit, Scope } from "effect"

describe("LocalHttpServer", () => {
  it.live("serves on 127.0.0.1 at an ephemeral port and closes with its scope, keep-alive connections included", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const { url, port, server } = yield* LocalHttpServer.serve((request, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.end(`hello ${request.url}`)
      }).pipe(Scope.provide(scope))
      assert.strictEqual(url, `http://127.0.0.1:${port}`)
      assert.isAbove(port, 0)
      const agent = new Http.Agent({ keepAlive: true })
      const body = yield* Effect.promise(
        () =>
          new Promise<string>((resolve) =>
            Http.get(`${url}/x`, { agent }, (response) => {
              let text = ""
              response.on("data", (chunk) => (text += chunk))
              response.on("end", () => resolve(text))
            })
          )
      )
      assert.strictEqual(body, "hello /x")
      // A kept-alive connection is open: closing the scope must not wait for it.
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(server.listening)
      agent.destroy()
    })
  )
})

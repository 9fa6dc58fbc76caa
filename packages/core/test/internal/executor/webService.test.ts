import { getEventListeners } from "node:events"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Clock, ConfigProvider, Duration, Effect, Layer, Logger, Result, Schema, type Scope } from "effect"
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as fc from "fast-check"
import * as Action from "../../../src/Action.ts"
import type { ActionError, RoleDefinitionError } from "../../../src/ActionError.ts"
import * as Agent from "../../../src/Agent.ts"
import * as ActionResult from "../../../src/ActionResult.ts"
import * as WebServiceResponse from "../../../src/internal/executor/webService/response.ts"
import type * as Resilience from "../../../src/Resilience.ts"
import * as Role from "../../../src/Role.ts"
import * as LocalServer from "../../support/LocalServer.ts"

const identity = { name: "web", goal: "call services", domain: "http" }

// The actions here are webService actions: each call requires an `HttpClient`.
const agentOf = (actions: Record<string, Action.Any>) =>
  Agent.make({ id: "web-agent", roles: [Role.make({ identity, actions })] }) as unknown as Effect.Effect<
    Agent.Agent<Record<string, Action.Any>, HttpClient.HttpClient>,
    RoleDefinitionError,
    Scope.Scope
  >

/** A local server answering with `handler`, and an agent of the actions `actions(server.url)` makes. */
const served = (handler: LocalServer.Handler, actions: (url: string) => Record<string, Action.Any>) =>
  Effect.gen(function* () {
    const server = yield* LocalServer.start(handler)
    const agent = yield* agentOf(actions(server.url))
    return { server, agent }
  })

const withEnv = (env: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

const undici = Effect.provide(NodeHttpClient.layerUndici)

/** Answers every request with what it received, as JSON. */
const echo: LocalServer.Handler = (request, response) =>
  LocalServer.json(response, { method: request.method, path: request.path, query: request.query, body: request.body })

const failure = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
  Effect.flip(effect) as Effect.Effect<ActionError, never, R>

// A call whose `HttpClient` requirement is cast away: what a program that erases the types meets at run time.
const withoutClient = <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient>) => effect as Effect.Effect<A, E>

const issuePaths = (error: ActionError): ReadonlyArray<string> =>
  error._tag === "ValidationError" ? error.issues.map((issue) => issue.path) : []

const search = (query: string) => new URLSearchParams(query)

describe("webService: placeholders", () => {
  it.live("a placeholder value stays inside its path segment and query value: / ? # % spaces non-ASCII", () =>
    Effect.gen(function* () {
      const { server, agent } = yield* served(echo, (url) => ({
        item: Action.webService({
          description: "an item",
          parameters: { id: Schema.String },
          endpoint: `${url}/items/{id}/details?lang=en&ref={id}`
        })
      }))
      const values = ["a/b", "a?b=c", "a#b", "100%", "%41", "São Paulo", "東京 🌧", "x y+z&w=v", "a\\b", ";,@:$!'()*"]
      for (const id of values) {
        yield* agent.executeAction("item", { id })
        const received = server.received.at(-1)!
        const segments = received.path.split("/")
        assert.deepStrictEqual(segments.length, 4, `path of ${id}: ${received.path}`)
        assert.strictEqual(decodeURIComponent(segments[2]!), id)
        assert.strictEqual(segments[3], "details")
        assert.deepStrictEqual(search(received.query).getAll("ref"), [id])
        assert.deepStrictEqual(search(received.query).getAll("id"), [id])
        assert.deepStrictEqual(search(received.query).getAll("lang"), ["en"])
      }
    }).pipe(undici)
  )

  it.live(
    "property: for any string the server receives exactly that value, or nothing is sent and it is VALIDATION",
    () =>
      Effect.gen(function* () {
        const { server, agent } = yield* served(echo, (url) => ({
          item: Action.webService({
            description: "an item",
            parameters: { id: Schema.String },
            endpoint: `${url}/items/{id}?q={id}`
          })
        }))
        const context = yield* Effect.context<HttpClient.HttpClient>()
        const run = (id: string) =>
          Effect.runPromise(Effect.result(Effect.provideContext(agent.executeAction("item", { id }), context)))
        const value = fc.oneof(
          fc.string({ unit: "binary", maxLength: 24 }),
          fc.string({ unit: "grapheme", maxLength: 12 }),
          fc.constantFrom("", ".", "..", "\uD800", "a\uDFFFb", "%2e%2e", "./..", "%")
        )
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(value, async (id) => {
              const before = server.received.length
              const result = await run(id)
              const structural = id === "" || id === "." || id === ".."
              const lone = /\p{Cs}/u.test(id)
              if (structural || lone) {
                assert.strictEqual(result._tag, "Failure")
                assert.strictEqual(result._tag === "Failure" && result.failure._tag, "ValidationError")
                assert.strictEqual(server.received.length, before, "nothing is sent")
                return
              }
              assert.strictEqual(result._tag, "Success")
              const received = server.received.at(-1)!
              const segments = received.path.split("/")
              assert.strictEqual(segments.length, 3)
              assert.strictEqual(decodeURIComponent(segments[2]!), id)
              assert.deepStrictEqual(search(received.query).getAll("q"), [id])
              assert.deepStrictEqual(search(received.query).getAll("id"), [id])
            }),
            { numRuns: 300 }
          )
        )
      }).pipe(undici)
  )

  it.live(
    "a placeholder in the scheme, host, port or fragment, or naming no parameter, is VALIDATION; nothing is sent",
    () =>
      Effect.gen(function* () {
        const server = yield* LocalServer.start(echo)
        const port = server.url.split(":").at(-1)!
        const endpoints = [
          "http://{host}/x",
          `{scheme}://127.0.0.1:${port}/x`,
          "http://127.0.0.1:{host}/x",
          "http://{host}@127.0.0.1/x",
          `${server.url}/x#{host}`,
          `${server.url}/x/{missing}`,
          `ftp://127.0.0.1:${port}/x`,
          "items/{host}"
        ]
        for (const endpoint of endpoints) {
          const agent = yield* agentOf({
            bad: Action.webService({
              description: "bad",
              parameters: { host: Schema.String, scheme: Schema.String },
              endpoint
            })
          })
          const error = yield* failure(agent.executeAction("bad", { host: "127.0.0.1", scheme: "http" }))
          assert.strictEqual(error._tag, "ValidationError", endpoint)
          assert.deepStrictEqual(issuePaths(error), ["endpoint"], endpoint)
        }
        assert.strictEqual(server.received.length, 0)
      }).pipe(undici)
  )

  it.live(
    "an object or array for a placeholder, and a value that would make a segment . or .., are VALIDATION naming the field",
    () =>
      Effect.gen(function* () {
        const { server, agent } = yield* served(echo, (url) => ({
          item: Action.webService({
            description: "an item",
            parameters: { id: Schema.optional(Schema.Unknown), version: Schema.optional(Schema.String) },
            endpoint: `${url}/items/{id}`,
            paramType: "PATH"
          })
        }))
        for (const id of [{ a: 1 }, ["a", "b"], ".", "..", ""]) {
          const error = yield* failure(agent.executeAction("item", { id }))
          assert.strictEqual(error._tag, "ValidationError", JSON.stringify(id))
          assert.deepStrictEqual(issuePaths(error), ["id"], JSON.stringify(id))
        }
        const missing = yield* failure(agent.executeAction("item", { version: "2" }))
        assert.include(missing.message, "a value is required for the placeholder {id}")
        assert.strictEqual(server.received.length, 0)
      }).pipe(undici)
  )
})

describe("webService: paramType and method", () => {
  it.live("the default paramType is QUERY for GET, HEAD, DELETE and OPTIONS, BODY for POST, PUT and PATCH", () =>
    Effect.gen(function* () {
      const server = yield* LocalServer.start(echo)
      const methods: ReadonlyArray<Action.HttpMethod> = ["GET", "HEAD", "DELETE", "OPTIONS", "POST", "PUT", "PATCH"]
      for (const method of methods) {
        const agent = yield* agentOf({
          call: Action.webService({
            description: method,
            parameters: { id: Schema.String, count: Schema.Int },
            endpoint: `${server.url}/items/{id}`,
            method
          })
        })
        yield* agent.executeAction("call", { id: "a b", count: 2 })
        const received = server.received.at(-1)!
        const body = method === "POST" || method === "PUT" || method === "PATCH"
        assert.deepStrictEqual(
          {
            method: received.method,
            path: received.path,
            query: received.query,
            body: received.body,
            type: received.headers["content-type"]
          },
          body
            ? { method, path: "/items/a%20b", query: "", body: '{"id":"a b","count":2}', type: "application/json" }
            : { method, path: "/items/a%20b", query: "id=a%20b&count=2", body: "", type: undefined }
        )
      }
    }).pipe(undici)
  )

  // One call each; the request received is exactly this one.
  const exactRequests: ReadonlyArray<{
    readonly name: string
    readonly action: (url: string) => Action.Any
    readonly params: Record<string, unknown>
    readonly request: Pick<LocalServer.Received, "method" | "path" | "query" | "body">
  }> = [
    {
      name: "an endpoint without placeholders sends the arguments as the exact query string",
      action: (url) =>
        Action.webService({
          description: "search",
          parameters: { city: Schema.String, days: Schema.Int, exact: Schema.Boolean },
          endpoint: `${url}/v1/search`
        }),
      params: { city: "São Paulo", days: "3", exact: "true" },
      request: { method: "GET", path: "/v1/search", query: "city=S%C3%A3o%20Paulo&days=3&exact=true", body: "" }
    },
    {
      name: "QUERY on a POST sends a query string and no body",
      action: (url) =>
        Action.webService({
          description: "order",
          parameters: { sku: Schema.String, quantity: Schema.Int },
          endpoint: `${url}/orders`,
          method: "POST",
          paramType: "QUERY"
        }),
      params: { sku: "x-1", quantity: 2 },
      request: { method: "POST", path: "/orders", query: "sku=x-1&quantity=2", body: "" }
    },
    {
      name: "PATH appends every value, placeholder ones included, as an encoded segment in declared order",
      action: (url) =>
        Action.webService({
          description: "forecast",
          parameters: { region: Schema.String, city: Schema.String, days: Schema.Int },
          endpoint: `${url}/v1/{region}/forecast/`,
          paramType: "PATH"
        }),
      params: { days: 3, city: "São Paulo/Centro", region: "sa" },
      request: { method: "GET", path: "/v1/sa/forecast/sa/S%C3%A3o%20Paulo%2FCentro/3", query: "", body: "" }
    }
  ]
  for (const { name, action, params, request } of exactRequests) {
    it.live(name, () =>
      Effect.gen(function* () {
        const { server, agent } = yield* served(echo, (url) => ({ call: action(url) }))
        yield* agent.executeAction("call", params)
        const [received] = server.received
        assert.deepStrictEqual(
          { method: received?.method, path: received?.path, query: received?.query, body: received?.body },
          request
        )
      }).pipe(undici)
    )
  }

  it.live(
    "C25: arrays in QUERY are repeated keys, [] omits the key, null elements are dropped, objects are VALIDATION",
    () =>
      Effect.gen(function* () {
        const { server, agent } = yield* served(echo, (url) => ({
          list: Action.webService({
            description: "list",
            parameters: { id: Schema.Array(Schema.Unknown), filter: Schema.optional(Schema.Unknown) },
            endpoint: `${url}/items`
          })
        }))
        const sent: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
          [{ id: ["a", "b"] }, "id=a&id=b"],
          [{ id: [] }, ""],
          [{ id: [1, null] }, "id=1"],
          [{ id: ["a,b", "c d"] }, "id=a%2Cb&id=c%20d"]
        ]
        for (const [params, query] of sent) {
          yield* agent.executeAction("list", params)
          assert.strictEqual(server.received.at(-1)!.query, query, JSON.stringify(params))
        }
        const rejected: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
          [{ id: ["a"], filter: { status: "open" } }, "filter"],
          [{ id: ["a", { status: "open" }] }, "id[1]"],
          [{ id: [["nested"]] }, "id[0]"]
        ]
        for (const [params, path] of rejected) {
          const error = yield* failure(agent.executeAction("list", params))
          assert.deepStrictEqual(issuePaths(error), [path], JSON.stringify(params))
        }
        assert.strictEqual(server.received.length, sent.length)
      }).pipe(undici)
  )

  it.live("null and absent optional values are left out of QUERY and PATH, never sent as 'null'", () =>
    Effect.gen(function* () {
      const server = yield* LocalServer.start(echo)
      const parameters = {
        city: Schema.String,
        units: Schema.optional(Schema.String),
        lang: Schema.NullOr(Schema.String)
      }
      const agent = yield* agentOf({
        query: Action.webService({ description: "q", parameters, endpoint: `${server.url}/q` }),
        path: Action.webService({ description: "p", parameters, endpoint: `${server.url}/p`, paramType: "PATH" }),
        body: Action.webService({ description: "b", parameters, endpoint: `${server.url}/b`, method: "POST" })
      })
      yield* agent.executeAction("query", { city: "Vienna", lang: null })
      yield* agent.executeAction("path", { city: "Vienna", lang: null })
      yield* agent.executeAction("body", { city: "Vienna", lang: null })
      assert.deepStrictEqual(
        server.received.map((r) => r.target + r.body),
        ["/q?city=Vienna", "/p/Vienna", '/b{"city":"Vienna","lang":null}']
      )
    }).pipe(undici)
  )

  it.live("an explicit BODY on a GET is VALIDATION and nothing is sent", () =>
    Effect.gen(function* () {
      const { server, agent } = yield* served(echo, (url) => ({
        get: Action.webService({
          description: "get",
          parameters: { id: Schema.String },
          endpoint: `${url}/x`,
          paramType: "BODY"
        })
      }))
      const error = yield* failure(agent.executeAction("get", { id: "1" }))
      assert.deepStrictEqual(issuePaths(error), ["paramType"])
      assert.strictEqual(server.received.length, 0)
    }).pipe(undici)
  )
})

describe("webService: auth and headers", () => {
  const bearer = (url: string) =>
    Action.webService({
      description: "forecast",
      parameters: { city: Schema.String },
      endpoint: `${url}/v1/forecast`,
      paramType: "PATH",
      auth: "BEARER",
      authTokenEnv: "WEATHER_API_KEY",
      headers: { Accept: "application/json", "X-Client": "rolecraft" }
    })

  it.live("BEARER sends the secret read at call time; fixed headers are sent; NO_AUTH sends no Authorization", () =>
    Effect.gen(function* () {
      const { server, agent } = yield* served(echo, (url) => ({
        forecast: bearer(url),
        open: Action.webService({ description: "open", parameters: {}, endpoint: `${url}/open` })
      }))
      yield* agent.executeAction("forecast", { city: "Vienna" }).pipe(withEnv({ WEATHER_API_KEY: "first-token" }))
      yield* agent.executeAction("forecast", { city: "Vienna" }).pipe(withEnv({ WEATHER_API_KEY: "rotated-token" }))
      yield* agent.executeAction("open", {})
      const [first, second, open] = server.received
      assert.deepStrictEqual(
        [first!.headers.authorization, second!.headers.authorization, open!.headers.authorization],
        ["Bearer first-token", "Bearer rotated-token", undefined]
      )
      assert.deepStrictEqual([first!.headers.accept, first!.headers["x-client"]], ["application/json", "rolecraft"])
    }).pipe(undici)
  )

  it.live("BASIC sends base64 of user:password", () =>
    Effect.gen(function* () {
      const { server, agent } = yield* served(echo, (url) => ({
        basic: Action.webService({
          description: "basic",
          parameters: {},
          endpoint: `${url}/basic`,
          auth: "BASIC",
          authTokenEnv: "SERVICE_CREDENTIALS"
        })
      }))
      yield* agent.executeAction("basic", {}).pipe(withEnv({ SERVICE_CREDENTIALS: "ann:pä:ss" }))
      assert.strictEqual(
        server.received[0]!.headers.authorization,
        `Basic ${Buffer.from("ann:pä:ss", "utf8").toString("base64")}`
      )
      const malformed = yield* failure(
        agent.executeAction("basic", {}).pipe(withEnv({ SERVICE_CREDENTIALS: "nocolon" }))
      )
      assert.strictEqual(malformed._tag, "ValidationError")
      assert.include(malformed.message, "SERVICE_CREDENTIALS is not of the form user:password")
      assert.notInclude(malformed.message, "nocolon")
      assert.strictEqual(server.received.length, 1)
    }).pipe(undici)
  )

  it.live(
    "a secret shorter than 8 characters is VALIDATION naming the variable, never its value; nothing is sent",
    () =>
      Effect.gen(function* () {
        const { server, agent } = yield* served(echo, (url) => ({ forecast: bearer(url) }))
        const error = yield* failure(
          agent.executeAction("forecast", { city: "Vienna" }).pipe(withEnv({ WEATHER_API_KEY: "abc" }))
        )
        assert.strictEqual(error._tag, "ValidationError")
        assert.include(error.message, "WEATHER_API_KEY is shorter than 8 characters")
        assert.deepStrictEqual(issuePaths(error), ["authTokenEnv"])
        assert.notInclude(JSON.stringify(error), "abc")
        assert.strictEqual(server.received.length, 0)
      }).pipe(undici)
  )

  it.live("a missing secret variable is VALIDATION naming the variable; nothing is sent; a fallback still runs", () =>
    Effect.gen(function* () {
      const { server, agent } = yield* served(echo, (url) => ({
        forecast: bearer(url),
        guarded: bearer(url).pipe(Action.fallback((_args, error) => `fallback after ${error.category}`))
      }))
      const error = yield* failure(agent.executeAction("forecast", { city: "Vienna" }).pipe(withEnv({})))
      assert.strictEqual(error._tag, "ValidationError")
      assert.include(error.message, "WEATHER_API_KEY")
      assert.deepStrictEqual(issuePaths(error), ["authTokenEnv"])
      const fallback = yield* agent.executeAction("guarded", { city: "Vienna" }).pipe(withEnv({}))
      assert.strictEqual(fallback, "fallback after VALIDATION")
      assert.strictEqual(server.received.length, 0)
    }).pipe(undici)
  )

  it.effect(
    "without an HttpClient (its requirement cast away) the call is VALIDATION 'HttpClient not provided' and a fallback runs",
    () =>
      Effect.gen(function* () {
        const action = Action.webService({ description: "x", parameters: {}, endpoint: "http://127.0.0.1:9/x" })
        const agent = yield* agentOf({ plain: action, guarded: action.pipe(Action.fallback(() => "fallback")) })
        const error = yield* failure(withoutClient(agent.executeAction("plain", {})))
        assert.strictEqual(error._tag, "ValidationError")
        assert.include(error.message, "HttpClient not provided")
        assert.strictEqual(yield* withoutClient(agent.executeAction("guarded", {})), "fallback")
      })
  )
})

describe("webService: responses", () => {
  const fixed =
    (status: number, headers: Record<string, string>, body: string | Uint8Array = ""): LocalServer.Handler =>
    (_request, response) =>
      LocalServer.reply(response, status, headers, body)

  const callWith = (handler: LocalServer.Handler, options: Partial<Parameters<typeof Action.webService>[0]> = {}) =>
    Effect.gen(function* () {
      const { agent } = yield* served(handler, (url) => ({
        call: Action.webService({
          description: "call",
          parameters: {},
          endpoint: `${url}/items/42`,
          ...options
        })
      }))
      return yield* agent.executeAction("call", {})
    })

  it.live("C21: 204/205 and empty 2xx bodies are null whatever the content type", () =>
    Effect.gen(function* () {
      const json = { "content-type": "application/json" }
      const cases: ReadonlyArray<readonly [Action.HttpMethod, number, Record<string, string>]> = [
        ["PATCH", 204, json],
        ["GET", 200, { ...json, "content-length": "0" }],
        ["POST", 202, json],
        ["PUT", 205, json],
        ["GET", 200, { "content-type": "text/plain" }],
        ["HEAD", 200, { ...json, "content-length": "12" }]
      ]
      for (const [method, status, headers] of cases) {
        const value = yield* Effect.scoped(callWith(fixed(status, headers), { method }))
        assert.strictEqual(value, null, `${method} ${status}`)
      }
    }).pipe(undici)
  )

  it.live("C21: a postcondition requiring an object turns a 204 into CONTRACT, not a parse error", () =>
    Effect.gen(function* () {
      const { agent } = yield* served(fixed(204, { "content-type": "application/json" }), (url) => ({
        update: Action.webService({
          description: "update",
          parameters: { id: Schema.String },
          endpoint: `${url}/items/{id}`,
          method: "PATCH"
        }).pipe(
          Action.contract({
            post: [
              { rule: "the result is an object", check: (result) => typeof result === "object" && result !== null }
            ]
          })
        )
      }))
      const error = yield* failure(agent.executeAction("update", { id: "42" }))
      assert.strictEqual(error._tag, "ContractViolation")
    }).pipe(undici)
  )

  it.live("JSON by content type (json, +json, a BOM) is parsed; text stays text; other types are bytes", () =>
    Effect.gen(function* () {
      const bom = "\uFEFF"
      const cases: ReadonlyArray<readonly [Record<string, string>, string | Uint8Array, unknown]> = [
        [{ "content-type": "application/json" }, '{"temp":21}', { temp: 21 }],
        [{ "content-type": "application/problem+json" }, '{"title":"x"}', { title: "x" }],
        [{ "content-type": "application/json; charset=utf-8" }, `${bom}[1,2]`, [1, 2]],
        [{ "content-type": "text/plain" }, '{"not":"parsed"}', '{"not":"parsed"}'],
        [{ "content-type": "text/html; charset=utf-8" }, "<p>hi</p>", "<p>hi</p>"],
        [{}, "no content type", "no content type"],
        [{ "content-type": "application/octet-stream" }, new Uint8Array([0, 1, 255]), new Uint8Array([0, 1, 255])]
      ]
      for (const [headers, body, expected] of cases) {
        const value = yield* Effect.scoped(callWith(fixed(200, headers, body)))
        assert.deepStrictEqual(value, expected, JSON.stringify(headers))
      }
    }).pipe(undici)
  )

  it.live(
    "C23: text is decoded by its charset; UTF-16 JSON with a BOM parses; an unknown charset is UTF-8 with a warning",
    () =>
      Effect.gen(function* () {
        const latin1 = new Uint8Array([0x53, 0x74, 0x72, 0x61, 0xdf, 0x65])
        const straße = yield* Effect.scoped(
          callWith(fixed(200, { "content-type": "text/plain; charset=ISO-8859-1" }, latin1))
        )
        assert.strictEqual(straße, "Straße")
        const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from('{"city":"Straße"}', "utf16le")])
        const parsed = yield* Effect.scoped(
          callWith(fixed(200, { "content-type": "application/json; charset=utf-16" }, utf16))
        )
        assert.deepStrictEqual(parsed, { city: "Straße" })
        const warnings: Array<string> = []
        const logger = Logger.make(({ message, logLevel }) => {
          if (logLevel === "Warn") warnings.push(String(Array.isArray(message) ? message.join(" ") : message))
        })
        const misspelt = yield* Effect.scoped(
          callWith(fixed(200, { "content-type": "text/plain; charset=ISO-88509-1" }, Buffer.from("Straße", "utf8")))
        ).pipe(Effect.provide(Logger.layer([logger])))
        assert.strictEqual(misspelt, "Straße")
        assert.strictEqual(warnings.length, 1)
        assert.include(warnings[0]!, 'unknown charset "ISO-88509-1"')
      }).pipe(undici)
  )

  it.live("a non-empty 2xx body that is not JSON under a JSON content type is EXECUTION with an excerpt", () =>
    Effect.gen(function* () {
      const error = yield* failure(
        Effect.scoped(callWith(fixed(200, { "content-type": "application/json" }, "<html>oops</html>")))
      )
      assert.strictEqual(error._tag, "ExecutionFailure")
      assert.deepStrictEqual(error._tag === "ExecutionFailure" && [error.status, error.excerpt], [
        200,
        "<html>oops</html>"
      ])
    }).pipe(undici)
  )

  it.live("a success schema decodes the result; a mismatch is VALIDATION naming the path", () =>
    Effect.gen(function* () {
      const success = Schema.Struct({ temp: Schema.Number })
      const good = yield* Effect.scoped(
        callWith(fixed(200, { "content-type": "application/json" }, '{"temp":21,"extra":true}'), { success })
      )
      assert.deepStrictEqual(good, { temp: 21 })
      const bad = yield* failure(
        Effect.scoped(callWith(fixed(200, { "content-type": "application/json" }, '{"temp":"warm"}'), { success }))
      )
      assert.deepStrictEqual(issuePaths(bad), ["temp"])
    }).pipe(undici)
  )

  it.live("C22: classified by status before any parsing; never a success; HTML reduced to its title or text", () =>
    Effect.gen(function* () {
      const html = { "content-type": "text/html" }
      const badGateway =
        "<!DOCTYPE html><html><head><title>502: Bad gateway</title></head><body><h1>Oops</h1></body></html>"
      const untitled = `<!DOCTYPE html><html><body><script>var x = 1</script>${"<p>Upstream exploded</p>".repeat(600)}</body></html>`
      const cases: ReadonlyArray<
        readonly [number, Record<string, string>, string, ActionError["_tag"], string | undefined, boolean]
      > = [
        [502, html, badGateway, "TransientFailure", "502: Bad gateway", true],
        [
          401,
          { "content-type": "application/json" },
          '{"error":"invalid_token"}',
          "ExecutionFailure",
          '{"error":"invalid_token"}',
          false
        ],
        [403, { "content-type": "text/plain" }, "Forbidden", "ExecutionFailure", "Forbidden", false],
        [
          404,
          { "content-type": "application/json" },
          '{"error":"no such item"}',
          "ExecutionFailure",
          '{"error":"no such item"}',
          false
        ],
        [400, { "content-type": "text/plain" }, "Bad Request", "ExecutionFailure", "Bad Request", false],
        [422, html, untitled, "ExecutionFailure", undefined, false],
        [301, { location: "https://elsewhere.test/" }, "", "ExecutionFailure", undefined, false],
        [408, {}, "", "TransientFailure", undefined, true],
        [429, {}, "slow down", "TransientFailure", undefined, true],
        [500, {}, "", "TransientFailure", undefined, true],
        [503, {}, "", "TransientFailure", undefined, true],
        [504, html, badGateway, "TransientFailure", undefined, true]
      ]
      for (const [status, headers, body, tag, excerpt, retryable] of cases) {
        const error = yield* failure(Effect.scoped(callWith(fixed(status, headers, body))))
        const label = `${status}`
        assert.strictEqual(error._tag, tag, label)
        assert.strictEqual(error.retryable, retryable, label)
        assert.strictEqual("status" in error && error.status, status, label)
        assert.notInclude(error.message, "<", label)
        if (error._tag === "ExecutionFailure") {
          if (excerpt !== undefined) assert.strictEqual(error.excerpt, excerpt, label)
          assert.isAtMost(error.excerpt?.length ?? 0, 1000, label)
          assert.notInclude(error.excerpt ?? "", "<", label)
        }
        if (excerpt !== undefined) assert.include(error.message, excerpt, label)
      }
      const untitledError = yield* failure(Effect.scoped(callWith(fixed(422, html, untitled))))
      assert.isTrue(
        untitledError._tag === "ExecutionFailure" && untitledError.excerpt?.startsWith("Upstream exploded Upstream")
      )
      assert.notInclude(untitledError.message, "var x")
    }).pipe(undici)
  )
})

describe("webService: Retry-After (C26)", () => {
  const now = Date.parse("2026-10-21T07:27:55Z")
  const headers = (record: Record<string, string>) => Headers.fromInput(record)

  it("delta-seconds, HTTP dates, retry-after-ms; malformed values ignored; capped; never NaN or negative", () => {
    const cases: ReadonlyArray<readonly [Record<string, string>, number | undefined]> = [
      [{ "retry-after": "3" }, 3_000],
      [{ "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT" }, 5_000],
      [{ "retry-after": "Wednesday, 21-Oct-26 07:28:00 GMT" }, 5_000],
      [{ "retry-after": "Wed Oct 21 07:28:00 2026" }, 5_000],
      [{ "retry-after": "Tue, 20 Oct 2026 07:28:00 GMT" }, 0],
      [{ "retry-after": "soon" }, undefined],
      [{ "retry-after": "Wed, 99 Oct 2026 07:28:00 GMT" }, undefined],
      [{ "retry-after": "600" }, 600_000],
      [{ "retry-after": "0" }, 0],
      [{ "retry-after": "-1" }, undefined],
      [{ "retry-after": "1.5" }, undefined],
      [{ "retry-after": "1e3" }, undefined],
      [{ "retry-after": "99999999999999999999" }, 3_600_000],
      [{ "retry-after-ms": "1500", "retry-after": "9" }, 1_500],
      [{ "retry-after-ms": "soon", "retry-after": "9" }, 9_000],
      [{}, undefined]
    ]
    for (const [record, expected] of cases) {
      const delay = WebServiceResponse.retryAfterOf(headers(record), now)
      const millis = delay === undefined ? undefined : Duration.toMillis(delay)
      assert.strictEqual(millis, expected, JSON.stringify(record))
      if (millis !== undefined) assert.isTrue(Number.isFinite(millis) && millis >= 0)
    }
  })

  // A server answering `first`, then the JSON `after` (or `first` again when there is none), to a call under `retry`.
  const retryAfterCalls: ReadonlyArray<{
    readonly name: string
    readonly first: readonly [status: number, headers: Record<string, string>]
    readonly after?: unknown
    readonly retry: Resilience.RetryPolicy
    readonly outcome: { readonly value: unknown } | { readonly retryAfterSeconds: number }
    readonly requests: number
  }> = [
    {
      name: "429 with Retry-After: 0 is retried at once instead of after the backoff",
      first: [429, { "retry-after": "0" }],
      after: { ok: true },
      retry: { maxAttempts: 2, initialDelay: "20 seconds", maxDelay: "30 seconds" },
      outcome: { value: { ok: true } },
      requests: 2
    },
    {
      name: "429 with Retry-After: 600 fails at once with the requested wait instead of sleeping past maxDelay",
      first: [429, { "retry-after": "600" }],
      retry: { maxAttempts: 3, initialDelay: "10 millis", maxDelay: "30 seconds" },
      outcome: { retryAfterSeconds: 600 },
      requests: 1
    },
    {
      name: "a malformed Retry-After falls back to the backoff",
      first: [503, { "retry-after": "soon" }],
      after: "ok",
      retry: { maxAttempts: 1, initialDelay: "20 millis" },
      outcome: { value: "ok" },
      requests: 2
    }
  ]
  for (const { name, first, after, retry, outcome, requests } of retryAfterCalls) {
    it.live(name, () =>
      Effect.gen(function* () {
        const { server, agent } = yield* served(
          (_request, response) => {
            if (server.received.length === 1 || after === undefined) LocalServer.reply(response, ...first)
            else LocalServer.json(response, after)
          },
          (url) => ({
            call: Action.webService({ description: "c", parameters: {}, endpoint: `${url}/x` }).pipe(
              Action.resilience({ retry })
            )
          })
        )
        const started = yield* Clock.currentTimeMillis
        const result = yield* Effect.result(agent.executeAction("call", {}))
        assert.isBelow((yield* Clock.currentTimeMillis) - started, 5_000)
        if ("value" in outcome) {
          assert.deepStrictEqual(result, Result.succeed(outcome.value))
        } else {
          const error = result._tag === "Failure" ? result.failure : undefined
          assert.strictEqual(error?._tag, "TransientFailure")
          assert.strictEqual(
            error?._tag === "TransientFailure" && error.retryAfter && Duration.toSeconds(error.retryAfter),
            outcome.retryAfterSeconds
          )
        }
        assert.strictEqual(server.received.length, requests)
      }).pipe(undici)
    )
  }
})

describe("webService: retry safety (C28)", () => {
  const retry = Action.resilience({ retry: { maxAttempts: 3, initialDelay: "10 millis", jitter: false } })

  /** Reads the request, then drops the connection before any response. */
  const processThenDrop: LocalServer.Handler = (_request, _response, incoming) => incoming.socket.destroy()

  const post = (url: string, options: { readonly idempotent?: boolean } = {}) =>
    Action.webService({
      description: "place an order",
      parameters: { sku: Schema.String },
      endpoint: `${url}/orders`,
      method: "POST",
      ...options
    }).pipe(retry)

  it.live("a POST whose connection drops after sending is TRANSIENT outcomeUnknown, not retried: exactly 1 POST", () =>
    Effect.gen(function* () {
      const { server, agent } = yield* served(processThenDrop, (url) => ({ order: post(url) }))
      const error = yield* failure(agent.executeAction("order", { sku: "x-1" }))
      assert.strictEqual(error._tag, "TransientFailure")
      assert.deepStrictEqual(error._tag === "TransientFailure" && [error.outcomeUnknown, error.retryable], [
        true,
        false
      ])
      assert.strictEqual(server.received.filter((r) => r.method === "POST").length, 1)
    }).pipe(undici)
  )

  it.live("the same failure is retried for an idempotent: true POST and for a GET", () =>
    Effect.gen(function* () {
      const { server, agent } = yield* served(processThenDrop, (url) => ({
        order: post(url, { idempotent: true }),
        read: Action.webService({ description: "r", parameters: {}, endpoint: `${url}/orders` }).pipe(retry)
      }))
      const idempotent = yield* failure(agent.executeAction("order", { sku: "x-1" }))
      assert.deepStrictEqual(
        idempotent._tag === "TransientFailure" && [idempotent.outcomeUnknown, idempotent.retryable],
        [true, true]
      )
      yield* failure(agent.executeAction("read", {}))
      assert.deepStrictEqual(
        [
          server.received.filter((r) => r.method === "POST").length,
          server.received.filter((r) => r.method === "GET").length
        ],
        [4, 4]
      )
    }).pipe(undici)
  )

  it.live("a 5xx on a POST is not retried; 429, 408 and 503 with Retry-After say 'not processed' and are", () =>
    Effect.gen(function* () {
      const answers: Record<string, readonly [number, Record<string, string>]> = {
        "/500": [500, {}],
        "/502": [502, {}],
        "/503": [503, {}],
        "/503-later": [503, { "retry-after": "0" }],
        "/429": [429, {}],
        "/408": [408, {}]
      }
      const server = yield* LocalServer.start((request, response) => {
        const [status, headers] = answers[request.path]!
        LocalServer.reply(response, status, headers)
      })
      const expected: Record<string, readonly [boolean, boolean, number]> = {
        "/500": [true, false, 1],
        "/502": [true, false, 1],
        "/503": [true, false, 1],
        "/503-later": [false, true, 4],
        "/429": [false, true, 4],
        "/408": [false, true, 4]
      }
      for (const [path, [outcomeUnknown, retryable, posts]] of Object.entries(expected)) {
        const agent = yield* agentOf({
          call: Action.webService({
            description: "c",
            parameters: {},
            endpoint: `${server.url}${path}`,
            method: "POST"
          }).pipe(retry)
        })
        const error = yield* failure(agent.executeAction("call", {}))
        assert.deepStrictEqual(
          error._tag === "TransientFailure" && [error.outcomeUnknown, error.retryable],
          [outcomeUnknown, retryable],
          path
        )
        assert.strictEqual(server.received.filter((r) => r.path === path).length, posts, path)
      }
    }).pipe(undici)
  )

  it.live("a POST refused before sending (ECONNREFUSED) is always retried", () =>
    Effect.gen(function* () {
      const closed = yield* Effect.scoped(Effect.map(LocalServer.start(echo), (server) => server.url))
      let attempts = 0
      const counting = Layer.effect(
        HttpClient.HttpClient,
        Effect.gen(function* () {
          const client = yield* HttpClient.HttpClient
          return client.pipe(HttpClient.tapRequest(() => Effect.sync(() => attempts++)))
        })
      ).pipe(Layer.provide(NodeHttpClient.layerUndici))
      const agent = yield* agentOf({ order: post(closed) })
      const error = yield* failure(agent.executeAction("order", { sku: "x-1" })).pipe(Effect.provide(counting))
      assert.deepStrictEqual(error._tag === "TransientFailure" && [error.outcomeUnknown, error.retryable], [
        false,
        true
      ])
      assert.include(error.message, "before the request was sent")
      assert.strictEqual(attempts, 4)
    })
  )

  it.live("a POST timing out after sending is TIMEOUT, not retried: exactly 1 POST; a GET timing out is retried", () =>
    Effect.gen(function* () {
      const server = yield* LocalServer.start(() => {}) // never answers
      const agent = yield* agentOf({
        order: Action.webService({
          description: "order",
          parameters: {},
          endpoint: `${server.url}/orders`,
          method: "POST",
          timeout: "150 millis"
        }).pipe(retry),
        read: Action.webService({
          description: "read",
          parameters: {},
          endpoint: `${server.url}/orders`,
          timeout: "150 millis"
        }).pipe(Action.resilience({ retry: { maxAttempts: 1, initialDelay: "10 millis" } }))
      })
      const order = yield* failure(agent.executeAction("order", {}))
      assert.deepStrictEqual([order._tag, order.retryable], ["Timeout", false])
      assert.include(order.message, "not retried")
      assert.strictEqual(server.received.filter((r) => r.method === "POST").length, 1)
      const read = yield* failure(agent.executeAction("read", {}))
      assert.deepStrictEqual([read._tag, read.retryable], ["Timeout", true])
      assert.strictEqual(server.received.filter((r) => r.method === "GET").length, 2)
      yield* server.waitForAborted(3)
    }).pipe(undici)
  )
})

describe("webService: timeouts (C29)", () => {
  const stalls: ReadonlyArray<readonly [string, LocalServer.Handler]> = [
    ["(a) no response at all: TIMEOUT at the action's timeout, and the server sees the connection closed", () => {}],
    [
      "(b) headers at once, then a stalled body: the timeout covers the body read and aborts it",
      (_request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.write('{"partial":')
      }
    ]
  ]
  for (const [name, handler] of stalls) {
    it.live(name, () =>
      Effect.gen(function* () {
        const { server, agent } = yield* served(handler, (url) => ({
          slow: Action.webService({ description: "s", parameters: {}, endpoint: `${url}/s`, timeout: 200 })
        }))
        const started = yield* Clock.currentTimeMillis
        const error = yield* failure(agent.executeAction("slow", {}))
        const elapsed = (yield* Clock.currentTimeMillis) - started
        assert.strictEqual(error._tag, "Timeout")
        assert.isAtLeast(elapsed, 190)
        assert.isBelow(elapsed, 2_000)
        yield* server.waitForAborted(1)
      }).pipe(undici)
    )
  }

  it.live(
    "(c) 1,000 sequential calls under one parent AbortSignal leave no listener behind; aborting it cancels the call",
    () =>
      Effect.gen(function* () {
        const { server, agent } = yield* served(
          (request, response) => {
            if (request.path === "/stall") return
            LocalServer.json(response, { ok: true })
          },
          (url) => ({
            ping: Action.webService({ description: "p", parameters: {}, endpoint: `${url}/ping` }),
            stall: Action.webService({ description: "s", parameters: {}, endpoint: `${url}/stall` })
          })
        )
        const context = yield* Effect.context<HttpClient.HttpClient>()
        const parent = new AbortController()
        const baseline = getEventListeners(parent.signal, "abort").length
        const warnings: Array<string> = []
        const onWarning = (warning: Error) => warnings.push(warning.name)
        process.on("warning", onWarning)
        yield* Effect.addFinalizer(() => Effect.sync(() => process.off("warning", onWarning)))
        const run = (name: string) =>
          Effect.runPromise(Effect.provideContext(agent.executeAction(name, {}), context), { signal: parent.signal })
        yield* Effect.promise(async () => {
          for (let i = 0; i < 1_000; i++) await run("ping")
        })
        assert.strictEqual(server.received.length, 1_000)
        assert.strictEqual(getEventListeners(parent.signal, "abort").length, baseline)
        const inFlight = run("stall").then(
          () => "resolved",
          (error: unknown) => `rejected: ${String(error)}`
        )
        yield* Effect.sleep("100 millis")
        parent.abort()
        const outcome = yield* Effect.promise(() => inFlight)
        assert.match(outcome, /^rejected: .*interrupt/i)
        yield* server.waitForAborted(1)
        yield* Effect.sleep("10 millis") // let a late warning arrive
        assert.deepStrictEqual(
          warnings.filter((name) => name === "MaxListenersExceededWarning"),
          []
        )
      }).pipe(undici)
  )
})

describe("webService: mapResult", () => {
  it.live("the seeds' temperature(city, ActionResult) runs in our form; an ActionResult returned gives its value", () =>
    Effect.gen(function* () {
      const server = yield* LocalServer.start((request, response) =>
        LocalServer.json(response, { city: search(request.query).get("city"), temp: 21 })
      )
      const current = Action.webService({
        description: "Get the current temperature for a city",
        parameters: { city: Schema.String },
        endpoint: `${server.url}/v1/current`,
        method: "GET",
        paramType: "QUERY"
      })
      const agent = yield* agentOf({
        temperature: current.pipe(
          Action.mapResult((result, { city }) => Effect.map(result.asRecord, (body) => `${city}: ${body.temp}`))
        ),
        raw: current.pipe(Action.mapResult((result) => ActionResult.make({ wrapped: result.value }, { action: "raw" })))
      })
      assert.strictEqual(yield* agent.executeAction("temperature", { city: "Vienna" }), "Vienna: 21")
      assert.deepStrictEqual(yield* agent.executeAction("raw", { city: "Graz" }), {
        wrapped: { city: "Graz", temp: 21 }
      })
      assert.strictEqual(server.received[0]!.target, "/v1/current?city=Vienna")
    }).pipe(undici)
  )
})

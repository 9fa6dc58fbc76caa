import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as Endpoint from "../../../src/internal/executor/endpoint.ts"

const build = (
  endpoint: string,
  args: Record<string, unknown>,
  paramType: Endpoint.ParamType,
  fields: ReadonlyArray<string> = Object.keys(args)
) => {
  const template = Endpoint.parse(endpoint, fields)
  if (Result.isFailure(template)) return Result.fail(template.failure)
  return Endpoint.build(template.success, fields, args, paramType)
}

const url = (result: ReturnType<typeof build>) => (Result.isSuccess(result) ? result.success.url : result.failure)

describe("endpoint", () => {
  it("merges QUERY arguments into an endpoint's own query, keeps its fragment, and resolves paths", () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, Endpoint.ParamType, string]> = [
      [
        "https://api.test/v1/search?units=metric",
        { q: "a b" },
        "QUERY",
        "https://api.test/v1/search?units=metric&q=a%20b"
      ],
      ["https://api.test/v1/search?", { q: "x" }, "QUERY", "https://api.test/v1/search?q=x"],
      ["https://api.test/v1/search?a=1&", { q: "x" }, "QUERY", "https://api.test/v1/search?a=1&q=x"],
      ["https://api.test/v1/search#top", { q: "x" }, "QUERY", "https://api.test/v1/search?q=x#top"],
      ["https://api.test", { city: "Wien" }, "PATH", "https://api.test/Wien"],
      ["https://api.test/", { city: "Wien" }, "PATH", "https://api.test/Wien"],
      ["https://api.test", { q: "x" }, "QUERY", "https://api.test?q=x"],
      ["/v1/items/{id}", { id: "a/b" }, "PATH", "/v1/items/a%2Fb/a%2Fb"],
      ["https://api.test/v{version}/items", { version: 2 }, "QUERY", "https://api.test/v2/items?version=2"],
      [
        "https://api.test/at/{when}",
        { when: new Date("2026-11-02T00:00:00Z") },
        "QUERY",
        "https://api.test/at/2026-11-02T00%3A00%3A00.000Z?when=2026-11-02T00%3A00%3A00.000Z"
      ]
    ]
    for (const [endpoint, args, paramType, expected] of cases) {
      assert.strictEqual(url(build(endpoint, args, paramType)), expected, endpoint)
    }
  })

  it("BODY is one JSON object in declared order, absent values left out, null kept", () => {
    const result = build("https://api.test/orders", { b: 1, a: "x", c: undefined, d: null }, "BODY", [
      "a",
      "b",
      "c",
      "d"
    ])
    assert.deepStrictEqual(Result.isSuccess(result) && result.success, {
      url: "https://api.test/orders",
      body: '{"a":"x","b":1,"d":null}'
    })
  })

  it("reports every fault once, naming its field", () => {
    // Objects and arrays are fine in a JSON body, but not in a placeholder; a bigint is not JSON.
    const body = build("https://api.test/items/{id}", { id: { nested: true }, tags: [1, { x: 1 }], big: 10n }, "BODY")
    assert.deepStrictEqual(Result.isFailure(body) && body.failure.map((issue) => issue.path), ["id", "big"])
    const query = build("https://api.test/items/{id}", { id: { nested: true } }, "QUERY")
    assert.deepStrictEqual(Result.isFailure(query) && query.failure, [
      { path: "id", message: "expected a single value (string, number or boolean), got an object" }
    ])
  })
})

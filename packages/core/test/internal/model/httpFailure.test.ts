import { assert, describe, it } from "@effect/vitest"
import { Duration } from "effect"
import * as HttpFailure from "../../../src/internal/model/httpFailure.ts"

describe("httpFailure", () => {
  it("408, 429 and 5xx are TRANSIENT (409 too is EXECUTION, as SPEC §7 says of other 4xx) (with retryAfter); other statuses are EXECUTION with an excerpt", () => {
    const table: ReadonlyArray<readonly [number, string]> = [
      [408, "TRANSIENT"],
      [409, "EXECUTION"],
      [429, "TRANSIENT"],
      [500, "TRANSIENT"],
      [503, "TRANSIENT"],
      [400, "EXECUTION"],
      [401, "EXECUTION"],
      [403, "EXECUTION"],
      [404, "EXECUTION"],
      [422, "EXECUTION"]
    ]
    for (const [status, category] of table) {
      const error = HttpFailure.httpFailure({ action: "ask", status, message: "why" })
      assert.strictEqual(error.category, category, `HTTP ${status}`)
      assert.strictEqual(error.status, status)
      assert.include(error.message, `HTTP ${status}`)
    }
    const limited = HttpFailure.httpFailure({
      action: "ask",
      status: 429,
      message: "slow down",
      retryAfter: Duration.seconds(2)
    })
    assert.isTrue(
      limited._tag === "TransientFailure" && Duration.toMillis(limited.retryAfter ?? Duration.zero) === 2000
    )
    const long = HttpFailure.httpFailure({ action: "ask", status: 400, message: "x".repeat(1000) })
    assert.strictEqual(long._tag === "ExecutionFailure" && long.excerpt?.length, 200)
  })
})

describe("retryAfter", () => {
  it("reads retry-after-ms, then Retry-After (seconds or an HTTP date), from a fetch Headers or a record; malformed is undefined", () => {
    const now = Date.parse("Wed, 21 Oct 2026 07:27:00 GMT")
    const ms = (duration: Duration.Duration | undefined) =>
      duration === undefined ? undefined : Duration.toMillis(duration)
    assert.strictEqual(ms(HttpFailure.retryAfter(new Headers({ "Retry-After-Ms": " 250 " }), now)), 250)
    assert.strictEqual(ms(HttpFailure.retryAfter({ "retry-after": "4" }, now)), 4000)
    assert.strictEqual(ms(HttpFailure.retryAfter({ "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT" }, now)), 60_000)
    assert.strictEqual(ms(HttpFailure.retryAfter({ "retry-after": "soon", "retry-after-ms": "-1" }, now)), undefined)
    assert.strictEqual(ms(HttpFailure.retryAfter(undefined, now)), undefined)
  })
})

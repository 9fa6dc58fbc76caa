/**
 * How a non-2xx HTTP answer is classified, the same for a web service and for
 * a model API: a request timeout (408), too many requests (429) and server
 * errors (5xx) are transient and may be retried; every other status is a
 * refusal. A transient answer may say how long to wait (`Retry-After`).
 */
import * as Duration from "effect/Duration"
import * as Headers from "effect/http/Headers"
import * as Result from "effect/Result"

/** Whether an HTTP status is transient: 408, 429 or 5xx. */
export const isTransientStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500

const millisPattern = /^\s*\d+(\.\d+)?\s*$/

/**
 * The server's requested wait: `retry-after-ms` (milliseconds) when valid,
 * else `Retry-After` as delta-seconds (digits only) or an HTTP date measured
 * from `nowMs` (Effect's `Headers.parseRetryAfter`); malformed values are
 * ignored. Never NaN, negative or infinite; not capped.
 */
export const retryAfter = (headers: Headers.Input | undefined, nowMs: number): Duration.Duration | undefined => {
  const read = Headers.fromInput(headers)
  const millis = read["retry-after-ms"]
  if (millis !== undefined && millisPattern.test(millis)) return Duration.millis(Number(millis))
  const value = read["retry-after"]
  if (value === undefined) return undefined
  const parsed = Headers.parseRetryAfter(value)
  return Result.isSuccess(parsed) ? Headers.retryAfterDelay(parsed.success, nowMs) : undefined
}

/**
 * The answer of a webService call, classified by its status before any body
 * parsing:
 *
 * - 2xx: 204/205 or an empty body → `null` whatever the content type; JSON
 *   parsed — a non-empty body that is not JSON is EXECUTION with an excerpt;
 *   other text decoded by its charset; anything else returned as bytes
 *   (`Uint8Array`). With a `success` schema the value is decoded with it
 *   (mismatch → VALIDATION).
 * - 408, 429, 5xx → TRANSIENT with `status` and `retryAfter`; retryable when
 *   the server said the request was not processed (408, 429, and 503 with a
 *   `Retry-After`) or the call is safe to repeat, else `outcomeUnknown`.
 * - any other status (other 4xx, an unfollowed 3xx) → EXECUTION with
 *   `status` and an excerpt of at most 1,000 characters.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as Headers from "effect/http/Headers"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import { type ActionError, ExecutionFailure, TransientFailure } from "../../../ActionError.ts"
import * as ActionResult from "../../../ActionResult.ts"
import * as HttpResponse from "../../httpResponse.ts"
import * as Json from "../../json.ts"
import * as Redact from "../../redact.ts"
import { shorten } from "../../text.ts"
import { readBody } from "./body.ts"
import { type Call, notRetried, targetOf } from "./failure.ts"
import { collapse, decodeText, excerptLength, excerptOf, isJson, isText, type MediaType, mediaTypeOf } from "./text.ts"

/**
 * The longest `retryAfter` recorded. A server asking for more is recorded as
 * this much, which is still beyond any sensible retry policy's `maxDelay`,
 * so the policy fails at once instead of sleeping (see
 * `Resilience.schedule`).
 */
export const maxRetryAfter = Duration.hours(1)

// How much of a body a message quotes (the failure's `excerpt` holds more).
const messageExcerptLength = 200

/** The value of a response, or its failure (see the module doc). */
export const respond = (
  call: Call,
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<unknown, ActionError> =>
  Effect.flatMap(readBody(call, response, response.status >= 200 && response.status < 300), (bytes) => {
    const status = response.status
    const media = mediaTypeOf(response.headers["content-type"])
    if (status >= 200 && status < 300) return success(call, status, media, bytes)
    if (HttpResponse.isTransientStatus(status)) {
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.fail(transient(call, status, retryAfterOf(response.headers, now), excerptOf(bytes, media, call.secrets)))
      )
    }
    const excerpt = excerptOf(bytes, media, call.secrets)
    const redirect = status >= 300 && status < 400 ? response.headers.location : undefined
    return Effect.fail(
      new ExecutionFailure({
        action: call.name,
        message:
          `${call.name}: ${call.method} ${targetOf(call.url)} was refused with status ${status}` +
          (redirect === undefined ? "" : ` (a redirect to ${redirect}, which is not followed)`) +
          (excerpt === "" ? "" : `: ${shorten(excerpt, messageExcerptLength)}`),
        status,
        ...(excerpt === "" ? {} : { excerpt })
      })
    )
  })

const transient = (
  call: Call,
  status: number,
  retryAfter: Duration.Duration | undefined,
  excerpt: string
): TransientFailure => {
  // The server's own "not processed, come back later" answers.
  const notProcessed = status === 408 || status === 429 || (status === 503 && retryAfter !== undefined)
  const retryable = notProcessed || call.safe
  return new TransientFailure({
    action: call.name,
    message:
      `${call.name}: ${call.method} ${targetOf(call.url)} answered status ${status}` +
      (retryAfter === undefined ? "" : ` (retry after ${Duration.format(retryAfter)})`) +
      (excerpt === "" ? "" : `: ${shorten(excerpt, messageExcerptLength)}`) +
      (retryable ? "" : `; ${notRetried}`),
    status,
    outcomeUnknown: !notProcessed,
    retryable,
    ...(retryAfter === undefined ? {} : { retryAfter })
  })
}

const success = (
  call: Call,
  status: number,
  media: MediaType | undefined,
  bytes: Uint8Array
): Effect.Effect<unknown, ActionError> => {
  const schema = call.action.success
  const value: Effect.Effect<unknown, ActionError> =
    status === 204 || status === 205 || bytes.length === 0
      ? Effect.succeed(null)
      : isJson(media)
        ? Effect.flatMap(decodeText(call, bytes, media?.charset), (text) => parseJson(call, status, text))
        : isText(media)
          ? decodeText(call, bytes, media?.charset)
          : Effect.succeed(bytes)
  if (schema === undefined) return value
  // `Action.webService` takes any schema; one needing decoding services would fail here, so none is assumed.
  const codec = schema as Schema.Codec<unknown, unknown, never>
  return Effect.flatMap(value, (raw) => ActionResult.decode(ActionResult.make(raw, { action: call.name }), codec))
}

const parseJson = (call: Call, status: number, text: string): Effect.Effect<unknown, ExecutionFailure> => {
  const parsed = Json.parseJson(text)
  if (Result.isSuccess(parsed)) return Effect.succeed(parsed.success)
  // Redacted before it is cut; the parser's own message is left out, as it quotes the body's first
  // characters, which may be the start of an unquoted echoed secret.
  const excerpt = shorten(collapse(Redact.text(text, call.secrets)), excerptLength)
  return Effect.fail(
    new ExecutionFailure({
      action: call.name,
      message: `${call.name}: ${call.method} ${targetOf(call.url)} answered ${status} with a JSON content type but a body that is not JSON: ${shorten(excerpt, messageExcerptLength)}`,
      status,
      excerpt
    })
  )
}

/** The server's requested wait (see `retryAfter`), capped at {@link maxRetryAfter}. */
export const retryAfterOf = (headers: Headers.Headers, now: number): Duration.Duration | undefined => {
  const requested = HttpResponse.retryAfter(headers, now)
  return requested === undefined ? undefined : Duration.min(requested, maxRetryAfter)
}

/**
 * How a failed call to the Messages API reads as an action error: the SDK's
 * timeout is TIMEOUT; a connection that could not be made, or a stream that
 * broke off, is TRANSIENT; an HTTP status is classified by
 * `LanguageModel.httpFailure` (429 and 529 `overloaded_error` TRANSIENT with
 * the wait `retry-after` asks for; 400, 401, 403, 404 and other 4xx
 * EXECUTION); an `error` event inside a stream answered 200 by its type
 * (`overloaded_error`, `api_error`, `rate_limit_error`, `timeout_error`
 * TRANSIENT; `invalid_request_error`, `authentication_error`,
 * `permission_error`, `not_found_error`, `request_too_large` and anything
 * else EXECUTION); a body past its cap is EXECUTION naming
 * `maxReplyCharacters`; a body that is not JSON, or not the shape the API
 * promises, is EXECUTION ("malformed answer"), as is anything else.
 * Messages never show credentials in URLs.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "@anthropic-ai/sdk"
import { ActionError, BoundedFetch, LanguageModel } from "@rolecraft/core"
import * as Duration from "effect/Duration"

/** A 2xx answer that is not what the API promises, `what` naming what is wrong. */
export const malformed = (action: string, what: string) =>
  new ActionError.ExecutionFailure({ action, message: `${action}: the model API sent a malformed answer: ${what}` })

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The `{ type, message }` of an API error body `{ type: "error", error: { type, message } }` (or of the inner object). */
const errorOf = (body: unknown): { readonly type: string; readonly message: string } => {
  const inner = isRecord(body) && isRecord(body.error) ? body.error : isRecord(body) ? body : {}
  return {
    type: typeof inner.type === "string" ? inner.type : "unknown_error",
    message: typeof inner.message === "string" ? inner.message : (JSON.stringify(body) ?? "no message")
  }
}

const transientTypes = new Set(["overloaded_error", "api_error", "rate_limit_error", "timeout_error"])

/** An error the API sent inside a 200 stream (`event: error`), by its type (see the module's header). */
export const errorEvent = (
  action: string,
  body: unknown
): ActionError.TransientFailure | ActionError.ExecutionFailure => {
  const { type, message } = errorOf(body)
  const text = `${action}: the model API sent an error in its answer (${type}): ${message}`
  return transientTypes.has(type)
    ? new ActionError.TransientFailure({ action, message: text })
    : new ActionError.ExecutionFailure({ action, message: text })
}

// A base URL as messages show it: without user info, query or fragment (they may hold credentials).
const shownURL = (url: string): string => {
  const parsed = URL.parse(url)
  return parsed === null ? "(an unparsable base URL)" : `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}

// URLs inside a message (fetch quotes the URL it refused) lose their user info, query and fragment.
const withoutURLCredentials = (text: string): string =>
  text
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, "$1")
    .replace(/([a-z][a-z0-9+.-]*:\/\/[^\s?#]*)[?#][^\s)]*/gi, "$1")

/** The options failures are read with: the call's deadline, the clock, the base URL and the reply cap. */
export interface FailureOptions {
  readonly timeout: Duration.Duration
  readonly nowMs: number
  readonly baseURL?: string | undefined
  readonly maxReplyCharacters?: number | undefined
}

/** An SDK failure as an action error (see `AnthropicLanguageModel.toActionError` for the table). */
export const toActionError = (action: string, error: unknown, options: FailureOptions): ActionError.ActionError => {
  if (ActionError.isActionError(error)) return error
  if (error instanceof BoundedFetch.BodyTooLarge) {
    return new ActionError.ExecutionFailure({
      action,
      message:
        `${action}: the model's reply is larger than maxReplyCharacters` +
        (options.maxReplyCharacters === undefined
          ? ""
          : ` (${options.maxReplyCharacters.toLocaleString("en-US")} characters)`) +
        ` allows: ${error.message}`,
      cause: error
    })
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new ActionError.Timeout({
      action,
      after: options.timeout,
      message: `${action}: the model API did not answer within ${Duration.format(options.timeout)}`,
      cause: error
    })
  }
  if (error instanceof APIUserAbortError) {
    return new ActionError.ExecutionFailure({ action, message: `${action}: the model call was aborted`, cause: error })
  }
  if (error instanceof APIConnectionError) {
    const cause: unknown = error.cause
    const detail =
      cause instanceof Error && cause.message !== error.message ? ` (${withoutURLCredentials(cause.message)})` : ""
    const where = options.baseURL === undefined ? "" : ` at ${shownURL(options.baseURL)}`
    return new ActionError.TransientFailure({
      action,
      message: `${action}: could not reach the model API${where}: ${error.message}${detail}`,
      cause: error
    })
  }
  if (error instanceof APIError) {
    if (typeof error.status !== "number") return errorEvent(action, error.error)
    const { message } = errorOf(error.error)
    return LanguageModel.httpFailure({
      action,
      status: error.status,
      message: error.error === undefined ? error.message : message,
      retryAfter: LanguageModel.retryAfter(error.headers, options.nowMs)
    })
  }
  if (error instanceof SyntaxError) {
    return new ActionError.ExecutionFailure({
      action,
      message: `${action}: the model API sent a malformed answer: the body is not JSON (${error.message})`,
      cause: error
    })
  }
  return new ActionError.ExecutionFailure({
    action,
    message: `${action}: the model call failed: ${error instanceof Error ? error.message : String(error)}`,
    cause: error
  })
}

/** A failure while reading the stream: a connection closed mid-answer is TRANSIENT; see {@link toActionError}. */
export const streamError = (action: string, error: unknown, options: FailureOptions): ActionError.ActionError => {
  if (
    error instanceof APIError ||
    error instanceof SyntaxError ||
    error instanceof BoundedFetch.BodyTooLarge ||
    ActionError.isActionError(error)
  ) {
    return toActionError(action, error, options)
  }
  return new ActionError.TransientFailure({
    action,
    message: `${action}: the model stream broke off: ${error instanceof Error ? error.message : String(error)}`,
    cause: error
  })
}

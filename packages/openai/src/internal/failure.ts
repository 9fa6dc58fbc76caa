/**
 * How a failed call to the chat completions API reads as an action error:
 * the SDK's timeout is TIMEOUT; a connection that could not be made, or a
 * stream that broke off, is TRANSIENT; an HTTP status is classified by
 * `LanguageModel.httpFailure` (with the wait a 429 asks for); an error event
 * inside a stream answered 200 (and a 200 body that is only an error) by its
 * `code` when that is an HTTP status (OpenRouter's), else TRANSIENT when its
 * type says the server failed (`server_error`, …), else EXECUTION; a body
 * past its cap is EXECUTION naming `maxReplyCharacters`; a body that is not
 * JSON, or not the shape the API promises, is EXECUTION ("malformed
 * answer"), as is anything else. Messages never show credentials in URLs.
 */
import { ActionError, BoundedFetch, LanguageModel } from "@rolecraft/core"
import * as Duration from "effect/Duration"
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai"

/** A 2xx answer that is not what the API promises, `what` naming what is wrong. */
export const malformed = (action: string, what: string) =>
  new ActionError.ExecutionFailure({ action, message: `${action}: the model API sent a malformed answer: ${what}` })

const messageOf = (error: APIError): string => {
  const body: unknown = error.error
  if (typeof body === "object" && body !== null && "message" in body && typeof body.message === "string") {
    return body.message
  }
  return error.message
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

/** The failure of a reply whose body passed its cap, the cap named. */
const tooLarge = (action: string, error: BoundedFetch.BodyTooLarge, maxReplyCharacters: number | undefined) =>
  new ActionError.ExecutionFailure({
    action,
    message:
      `${action}: the model's reply is larger than maxReplyCharacters` +
      (maxReplyCharacters === undefined ? "" : ` (${maxReplyCharacters.toLocaleString("en-US")} characters)`) +
      ` allows: ${error.message}`,
    cause: error
  })

const serverTypes = /server|overload|unavailable|internal|timeout|rate_limit/i

/**
 * An error the API sent with a 200 — an error event inside a stream, or a body that is only `{ error }`: by its
 * `code` when that is an HTTP status (4xx, 5xx), else TRANSIENT when its `type` or `code` says the server
 * failed or is busy, else EXECUTION. The message is the provider's.
 */
export const errorEvent = (
  action: string,
  body: unknown
): ActionError.TransientFailure | ActionError.ExecutionFailure => {
  const error = typeof body === "object" && body !== null ? (body as Readonly<Record<string, unknown>>) : {}
  const message = typeof error.message === "string" ? error.message : (JSON.stringify(body) ?? "no message")
  const code = typeof error.code === "number" ? error.code : Number.parseInt(String(error.code ?? ""), 10)
  if (Number.isInteger(code) && code >= 400 && code <= 599) {
    const failure = LanguageModel.httpFailure({ action, status: code, message })
    const text = `${action}: the model API sent an error in its answer (code ${code}): ${message}`
    return failure._tag === "TransientFailure"
      ? new ActionError.TransientFailure({ action, status: code, message: text })
      : new ActionError.ExecutionFailure({
          action,
          status: code,
          message: text,
          ...(failure.excerpt === undefined ? {} : { excerpt: failure.excerpt })
        })
  }
  const kind = `${typeof error.type === "string" ? error.type : ""} ${typeof error.code === "string" ? error.code : ""}`
  return serverTypes.test(kind)
    ? new ActionError.TransientFailure({
        action,
        message: `${action}: the model API sent an error in its answer: ${message}`
      })
    : new ActionError.ExecutionFailure({
        action,
        message: `${action}: the model API sent an error in its answer: ${message}`
      })
}

/** An SDK failure as an action error (see `OpenAiLanguageModel.toActionError` for the table). */
export const toActionError = (
  action: string,
  error: unknown,
  options: {
    readonly timeout: Duration.Duration
    readonly nowMs: number
    readonly baseURL?: string | undefined
    readonly maxReplyCharacters?: number | undefined
  }
): ActionError.ActionError => {
  if (error instanceof BoundedFetch.BodyTooLarge) return tooLarge(action, error, options.maxReplyCharacters)
  if (error instanceof APIError && error.status === undefined && error.error !== undefined) {
    return errorEvent(action, error.error)
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
  if (error instanceof APIError && typeof error.status === "number") {
    return LanguageModel.httpFailure({
      action,
      status: error.status,
      message: messageOf(error),
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
export const streamError = (
  action: string,
  error: unknown,
  options: { readonly timeout: Duration.Duration; readonly baseURL: string; readonly maxReplyCharacters?: number }
): ActionError.ActionError => {
  if (
    error instanceof APIError ||
    error instanceof SyntaxError ||
    error instanceof BoundedFetch.BodyTooLarge ||
    ActionError.isActionError(error)
  ) {
    return ActionError.isActionError(error) ? error : toActionError(action, error, { ...options, nowMs: 0 })
  }
  return new ActionError.TransientFailure({
    action,
    message: `${action}: the model stream broke off: ${error instanceof Error ? error.message : String(error)}`,
    cause: error
  })
}

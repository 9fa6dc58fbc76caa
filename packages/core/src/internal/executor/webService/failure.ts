/**
 * How a webService call fails before it has an answer to read: the call as
 * messages name it (method and URL without its query), a refused definition
 * or arguments (VALIDATION), and a transport failure — TRANSIENT, always
 * retryable when it happened before anything was sent (connection refused,
 * DNS, unreachable network, connect timeout, TLS), else `outcomeUnknown` and
 * retryable only when the call is safe to repeat.
 */
import type * as Redacted from "effect/Redacted"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as Action from "../../../Action.ts"
import {
  type ActionError,
  ExecutionFailure,
  type Issue,
  TransientFailure,
  ValidationError
} from "../../../ActionError.ts"
import * as Redact from "../../redact.ts"

/** A webService action, whatever its schemas. */
export type WebService = Action.WebService<any, any, any>

/** What the response handling needs to know about the call. */
export interface Call {
  readonly name: string
  readonly action: WebService
  readonly method: string
  /** The URL called; messages show it without its query and fragment (`targetOf`). */
  readonly url: string
  readonly safe: boolean
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
}

/** The URL without its query and fragment, for messages. */
export const targetOf = (url: string): string => {
  const end = url.search(/[?#]/)
  return end < 0 ? url : url.slice(0, end)
}

/** VALIDATION of the call `name`: `what` went wrong, with its issues. */
export const invalid = (name: string, what: string, issues: ReadonlyArray<Issue>): ValidationError =>
  new ValidationError({
    action: name,
    message: `${name}: ${what}: ${issues.map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`)).join("; ")}`,
    issues
  })

const codeOf = (cause: unknown): string | undefined => {
  let current = cause
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { readonly code?: unknown }).code
    if (typeof code === "string") return code
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}

// Codes of failures that happen before any byte of the request is sent.
const beforeSending: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT"
])

const isBeforeSending = (code: string | undefined): boolean =>
  code !== undefined &&
  (beforeSending.has(code) || code.startsWith("ERR_TLS_") || /CERT|SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code))

const describeCause = (cause: unknown): string => {
  const code = codeOf(cause)
  const message = cause instanceof Error ? cause.message : cause === undefined ? "" : String(cause)
  if (code === undefined) return message === "" ? "transport error" : message
  return message === "" || message.includes(code) ? message || code : `${code}: ${message}`
}

/** Why a failure whose outcome is unknown is not retried. */
export const notRetried =
  "the request may have been processed, so it is not retried (declare the action idempotent to allow it)"

/** The failure of a request that got no response: VALIDATION when it could not be sent, else a transport failure. */
export const requestFailure = (call: Call, error: HttpClientError.HttpClientError): ActionError => {
  const reason = error.reason
  switch (reason._tag) {
    case "InvalidUrlError":
    case "EncodeError":
      return invalid(call.name, "the request cannot be sent", [
        { path: reason._tag === "InvalidUrlError" ? "endpoint" : "", message: describeCause(reason.cause) }
      ])
    default:
      return connectionFailure(call, reason.cause)
  }
}

/** A transport failure (the connection, or a body that broke off) as TRANSIENT (see the module doc). */
export const connectionFailure = (call: Call, cause: unknown): TransientFailure => {
  const code = codeOf(cause)
  const shown = Redact.text(describeCause(cause), call.secrets)
  const where = `${call.method} ${targetOf(call.url)}`
  const causeField = cause === undefined ? {} : { cause }
  if (isBeforeSending(code)) {
    return new TransientFailure({
      action: call.name,
      message: `${call.name}: ${where} failed before the request was sent (${shown})`,
      outcomeUnknown: false,
      retryable: true,
      ...causeField
    })
  }
  return new TransientFailure({
    action: call.name,
    message: `${call.name}: ${where} failed after the request may have reached the server (${shown})${call.safe ? "" : `; ${notRetried}`}`,
    outcomeUnknown: true,
    retryable: call.safe,
    ...causeField
  })
}

/** EXECUTION: the server answered `what`, more than the action's `maxResponseBytes`. */
export const tooLarge = (call: Call, what: string) =>
  new ExecutionFailure({
    action: call.name,
    message: `${call.name}: ${call.method} ${targetOf(call.url)} answered ${what}, more than the ${call.action.maxResponseBytes} bytes allowed (maxResponseBytes)`
  })

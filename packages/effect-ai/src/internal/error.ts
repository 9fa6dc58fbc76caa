/**
 * effect/ai failures as action errors: an `AiError` by its reason (see
 * `EffectAiModel.fromAiError` for the table), and an error part a provider
 * streams (its own error event, an `AiError` or a provider's error object)
 * by its type: TRANSIENT when it says the provider is busy or failed
 * (overloaded, rate limited, a server or internal error, unavailable, a
 * timeout), else EXECUTION, with the provider's message.
 */
import { ActionError } from "@rolecraft/core"
import { AiError } from "effect/ai"
import type * as Duration from "effect/Duration"
import * as Headers from "effect/http/Headers"
import * as Result from "effect/Result"

const { ActionNotFound, ExecutionFailure, TransientFailure, ValidationError } = ActionError

const statusOf = (reason: AiError.AiErrorReason): number | undefined =>
  "http" in reason && reason.http?.response !== undefined ? reason.http.response.status : undefined

const retryAfterOf = (reason: AiError.AiErrorReason, nowMs: number): Duration.Duration | undefined => {
  if ("retryAfter" in reason && reason.retryAfter !== undefined) return reason.retryAfter
  const headers = "http" in reason ? reason.http?.response?.headers : undefined
  const header = headers?.["retry-after"]
  if (typeof header !== "string") return undefined
  const parsed = Headers.parseRetryAfter(header)
  return Result.isSuccess(parsed) ? Headers.retryAfterDelay(parsed.success, nowMs) : undefined
}

/**
 * The category of an effect/ai failure, by its reason:
 *
 * | reason | category |
 * | --- | --- |
 * | `RateLimitError`, `InternalProviderError`, `NetworkError` (`TransportError`) | TRANSIENT (`retryAfter` and `status` kept) |
 * | `ToolNotFoundError` | NOT_FOUND |
 * | `InvalidRequestError`, `InvalidUserInputError`, `UnsupportedSchemaError`, `ToolConfigurationError`, `ToolkitRequiredError`, `ToolParameterValidationError`, `StructuredOutputError`, `NetworkError` (`InvalidUrlError`) | VALIDATION |
 * | anything else (`AuthenticationError`, `QuotaExhaustedError`, `ContentPolicyError`, `InvalidResponseError`, `InvalidOutputError`, `UnknownError`, tool result errors, `NetworkError` (`EncodeError`)) | EXECUTION (`status` kept) |
 *
 * `retryAfter` is the reason's own, else the `retry-after` header of the
 * HTTP response it carries (delta-seconds, or an HTTP date relative to
 * `options.nowMs`, the current time in milliseconds). `options.action`
 * names the error; the message is effect/ai's own.
 *
 * @category errors
 * @since 0.1.0
 */
export const fromAiError = (
  error: AiError.AiError,
  options: { readonly action: string; readonly nowMs: number }
): ActionError.ActionError => {
  const { action } = options
  const { reason } = error
  const message = `${action}: ${error.message}`
  const status = statusOf(reason)
  const withStatus = status === undefined ? {} : { status }
  switch (reason._tag) {
    case "RateLimitError":
    case "InternalProviderError": {
      const retryAfter = retryAfterOf(reason, options.nowMs)
      return new TransientFailure({
        action,
        message,
        ...withStatus,
        ...(retryAfter === undefined ? {} : { retryAfter })
      })
    }
    case "NetworkError":
      return reason.reason === "TransportError"
        ? new TransientFailure({ action, message })
        : reason.reason === "InvalidUrlError"
          ? new ValidationError({ action, message, issues: [{ path: "", message: reason.message }] })
          : new ExecutionFailure({ action, message })
    case "ToolNotFoundError":
      return new ActionNotFound({ action, message, available: reason.availableTools })
    case "InvalidRequestError":
    case "InvalidUserInputError":
    case "UnsupportedSchemaError":
    case "ToolConfigurationError":
    case "ToolkitRequiredError":
    case "ToolParameterValidationError":
    case "StructuredOutputError":
      return new ValidationError({ action, message, issues: [{ path: "", message: reason.message }] })
    default:
      return new ExecutionFailure({ action, message, ...withStatus })
  }
}

const busy = /overload|rate_limit|server|internal|unavailable|timeout/i

/** An error part of a response or stream as an action error (see the module's header). */
export const fromErrorPart = (
  error: unknown,
  options: { readonly action: string; readonly nowMs: number }
): ActionError.ActionError => {
  if (AiError.isAiError(error)) return fromAiError(error, options)
  const { action } = options
  const body = typeof error === "object" && error !== null ? (error as Readonly<Record<string, unknown>>) : {}
  // Anthropic's event carries `{ type, error: { type, message } }`; OpenAI's `{ type, message, code }`.
  const inner =
    typeof body.error === "object" && body.error !== null ? (body.error as Readonly<Record<string, unknown>>) : body
  const message = typeof inner.message === "string" ? inner.message : (JSON.stringify(error) ?? String(error))
  const kind = `${String(inner.type ?? "")} ${String(inner.code ?? "")}`
  const text = `${action}: the model sent an error in its answer: ${message}`
  return busy.test(kind)
    ? new TransientFailure({ action, message: text })
    : new ExecutionFailure({ action, message: text })
}

/**
 * A model API's non-2xx answer as an action error: 408, 429 and 5xx are
 * transient (retryable, with the wait the server asked for), every other
 * status is a refusal that carries the status and an excerpt of the
 * provider's message. The statuses are classified, and `Retry-After` read,
 * as for a web service (`internal/httpResponse.ts`). `LanguageModel` exports
 * both functions.
 */
import * as Duration from "effect/Duration"
import { ExecutionFailure, TransientFailure } from "../../ActionError.ts"
import * as HttpResponse from "../httpResponse.ts"
import { shorten } from "../text.ts"

/** The failure of a model call answered with HTTP `status`; `message` is the provider's, cut to 200 characters. */
export const httpFailure = (options: {
  readonly action: string
  readonly status: number
  readonly message: string
  readonly retryAfter?: Duration.Duration | undefined
}): TransientFailure | ExecutionFailure => {
  const { action, status } = options
  const excerpt = shorten(options.message, 200)
  if (HttpResponse.isTransientStatus(status)) {
    return new TransientFailure({
      action,
      status,
      message: `${action}: the model API answered HTTP ${status}${
        options.retryAfter === undefined ? "" : ` (retry after ${Duration.format(options.retryAfter)})`
      }: ${excerpt}`,
      ...(options.retryAfter === undefined ? {} : { retryAfter: options.retryAfter })
    })
  }
  return new ExecutionFailure({
    action,
    status,
    excerpt,
    message: `${action}: the model API refused the request (HTTP ${status}): ${excerpt}`
  })
}

/** The wait a transient answer's headers ask for (`retry-after-ms`, else `Retry-After`), `undefined` when none. */
export const retryAfter = HttpResponse.retryAfter

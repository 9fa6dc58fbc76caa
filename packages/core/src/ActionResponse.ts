/**
 * The answer to an `ActionRequest` (what `agent.execute` returns): success or
 * the typed failure, with the call's duration and model usage.
 *
 * @example
 * ```ts
 * import type { ActionResponse } from "@rolecraft/core"
 *
 * const describe = (response: ActionResponse.ActionResponse): string =>
 *   response.success
 *     ? `${response.action} gave ${JSON.stringify(response.value)} in ${response.durationMs} ms`
 *     : `${response.action} failed: ${response.error.category}: ${response.error.message}`
 * ```
 *
 * @since 0.1.0
 */
import type { ActionError } from "./ActionError.ts"

/**
 * Tokens a call used, summed over its model calls.
 *
 * @category models
 * @since 0.1.0
 */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
}

/**
 * - `success`: whether the call succeeded; then `value` holds its result and
 *   `error` is `undefined`, else `error` holds one of the nine action errors
 *   and `value` is `undefined`.
 * - `durationMs`: wall time of the whole pipeline in milliseconds (Clock).
 * - `usage`: model tokens, when the call made model calls.
 * - `correlationId`: the request's, when given.
 *
 * @category models
 * @since 0.1.0
 */
export type ActionResponse<A = unknown> =
  | {
      readonly action: string
      readonly success: true
      readonly value: A
      readonly error: undefined
      readonly durationMs: number
      readonly usage?: Usage | undefined
      readonly correlationId?: string | undefined
    }
  | {
      readonly action: string
      readonly success: false
      readonly value: undefined
      readonly error: ActionError
      readonly durationMs: number
      readonly usage?: Usage | undefined
      readonly correlationId?: string | undefined
    }

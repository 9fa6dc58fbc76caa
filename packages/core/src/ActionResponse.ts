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
import * as Schema from "effect/Schema"
import type { ActionError } from "./ActionError.ts"

/**
 * Tokens a call used, summed over its model calls. Counts are integers >= 0, in one convention whatever the
 * provider:
 *
 * - `inputTokens`: every token the model read, cached ones included (cache reads and cache writes);
 * - `outputTokens`: every token it wrote, reasoning included;
 * - `totalTokens`: `inputTokens + outputTokens`;
 * - `cachedInputTokens`: the part of `inputTokens` read from the provider's prompt cache, when it says;
 * - `cacheWriteInputTokens`: the part of `inputTokens` written to the prompt cache, when it says;
 * - `reasoningTokens`: the part of `outputTokens` spent on reasoning, when it says.
 *
 * The three parts are absent when the provider reports none of that kind (not 0).
 *
 * @category models
 * @since 0.1.0
 */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
  readonly cachedInputTokens?: number
  readonly cacheWriteInputTokens?: number
  readonly reasoningTokens?: number
}

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * The schema of a {@link Usage}, for what stores or sends one (a paused state, a thread, a durable run).
 *
 * @category schemas
 * @since 0.3.0
 */
export const UsageSchema: Schema.Codec<Usage> = Schema.Struct({
  inputTokens: Count,
  outputTokens: Count,
  totalTokens: Count,
  cachedInputTokens: Schema.optionalKey(Count),
  cacheWriteInputTokens: Schema.optionalKey(Count),
  reasoningTokens: Schema.optionalKey(Count)
})

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

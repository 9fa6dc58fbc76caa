/**
 * One rule for every reader of a provider's answer: a value that a later
 * chunk or part leaves empty — absent, `null` or `""` — never replaces a
 * value an earlier one gave. Azure ends a stream with a content-filter chunk
 * whose `model` and `id` are `""`; a usage-only chunk has no finish reason; a
 * late usage object may leave a count out. Every field a reader joins over
 * chunks (model, finish reason, each usage count, a tool call's id and name,
 * the reasoning's field) is joined by {@link keep}, and a non-streamed body's
 * empty model is no model.
 */
import type { ProviderResponse } from "../../ModelResponse.ts"

/** Whether a provider gave a value: not absent, `null` or `""`. */
export const given = <A>(value: A | null | undefined): value is Exclude<A, null | undefined | ""> =>
  value !== undefined && value !== null && (value as unknown) !== ""

/** The value a reader knows after `next` arrives: `next` when it was given, else what it knew. */
export const keep = <A>(known: A | undefined, next: A | null | undefined): A | undefined =>
  given(next) ? (next as A) : known

type Usage = NonNullable<ProviderResponse["usage"]>

const usageFields = [
  "inputTokens",
  "outputTokens",
  "totalTokens",
  "cachedInputTokens",
  "cacheWriteInputTokens",
  "reasoningTokens"
] as const

/**
 * The usage a reader knows after `next` arrives: each count that `next` gives replaces the known one (a
 * later usage object is the provider's newer total, as Perplexity's grow), and a count it leaves out or
 * sends as `null` keeps the known one — except a total, which is the sum of the others: a later object that
 * gives new input or output counts without a total drops the old total, to be summed again.
 */
export const keepUsage = (known: ProviderResponse["usage"], next: ProviderResponse["usage"]): Usage | undefined => {
  if (next === undefined || next === null || typeof next !== "object") return known ?? undefined
  if (known === undefined || known === null) return next
  const merged: { -readonly [K in keyof Usage]: Usage[K] } = { ...known }
  for (const field of usageFields) {
    const value = next[field]
    if (value !== undefined && value !== null) merged[field] = value
  }
  const countsGiven = given(next.inputTokens) || given(next.outputTokens)
  if (countsGiven && !given(next.totalTokens)) delete merged.totalTokens
  return merged
}

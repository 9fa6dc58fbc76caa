/**
 * What a model's reply may be used for, by how it finished. A reply the model did not finish itself — cut at
 * its output token limit (finish reason `"length"`) or stopped by the provider's content filter — may hold a
 * tool call whose arguments were cut and an answer that stops mid-way: none of its tool calls run, and no
 * answer is taken from it. A refusal is the model declining to answer: its text is the outcome, never a reply
 * to decode. Each is EXECUTION (not retryable: the same request would be cut, filtered or refused again),
 * naming the action, the reason and, for a cut reply, `max_tokens`.
 */
import { ExecutionFailure } from "../../ActionError.ts"
import { shorten } from "../text.ts"
import type { Response } from "../../ModelResponse.ts"

/** The most characters of a refusal kept on its error (`excerpt`); the message shows the first 200. */
const maxRefusalCharacters = 1_000

/** The EXECUTION failure of a reply that refused, or `undefined` when it did not. */
export const refused = (action: string, response: Response): ExecutionFailure | undefined =>
  response.refusal === undefined
    ? undefined
    : new ExecutionFailure({
        action,
        message: `${action}: the model refused: ${shorten(response.refusal, 200)}`,
        excerpt: shorten(response.refusal, maxRefusalCharacters)
      })

/** What the caller would take from a reply: its tool calls, or its answer (text to return or decode). */
export type Use = { readonly toolCalls: number } | "answer"

const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? "" : "s"}`

/**
 * The EXECUTION failure of a reply the model did not finish, when the caller would use what may be cut: any
 * tool call of it, or its answer. `undefined` when the reply finished, or when there is nothing to use (a
 * chat turn's text answer is returned with its finish reason instead).
 */
export const unfinished = (action: string, response: Response, use: Use): ExecutionFailure | undefined => {
  const reason = response.finishReason
  if (reason !== "length" && reason !== "content_filter") return undefined
  if (use !== "answer" && use.toolCalls === 0) return undefined
  const lost = use === "answer" ? "its answer is incomplete" : `none of its ${plural(use.toolCalls, "tool call")} ran`
  const message =
    reason === "length"
      ? `${action}: the model's reply was cut off at its output token limit (max_tokens; finish reason "length", ` +
        `${plural(response.usage.outputTokens, "output token")}), so ${lost}; raise the limit or ask for less`
      : `${action}: the provider's content filter stopped the model's reply (finish reason "content_filter"), so ${lost}`
  return new ExecutionFailure({ action, message })
}

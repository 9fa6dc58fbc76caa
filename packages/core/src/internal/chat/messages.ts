/**
 * The messages of a chat turn: the assistant message of a model's answer,
 * a caller's history and a paused state given unique tool call ids
 * (`ToolCallId.unique`) and checked (every tool call answered exactly once),
 * and the text of a tool message.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type ActionError, isActionError, type RetrievalFailure, ValidationError } from "../../ActionError.ts"
import * as Conversion from "../schema/decode.ts"
import type * as ModelResponse from "../../ModelResponse.ts"
import * as Prompt from "../../Prompt.ts"
import * as ToolCallId from "../../ToolCallId.ts"
import * as ToolContent from "../../ToolContent.ts"

/** A VALIDATION failure of a turn: `<action>: <message>`, one issue at `path`. */
export const invalid = (action: string, path: string, message: string): ValidationError =>
  new ValidationError({ action, message: `${action}: ${message}`, issues: [{ path, message }] })

/**
 * Checks that every tool call in a history is answered exactly once, by a
 * tool message after it and before the next assistant message; `open` lists
 * the calls of the last assistant message that may stay unanswered (a paused
 * turn's pending calls).
 */
export const checkHistory = (
  action: string,
  messages: ReadonlyArray<Prompt.Message>,
  open: ReadonlySet<string>
): ValidationError | undefined => {
  if (messages.length === 0) return invalid(action, "messages", "the message list is empty")
  let waiting = new Set<string>()
  let last = -1
  const unanswered = (at: number) =>
    invalid(
      action,
      `messages[${at}]`,
      `tool calls ${[...waiting].join(", ")} are never answered (every tool call needs one tool message)`
    )
  for (const [i, message] of messages.entries()) {
    if (message.role === "assistant") {
      if (waiting.size > 0) return unanswered(i)
      waiting = new Set((message.toolCalls ?? []).map((call) => call.id))
      last = i
    } else if (message.role === "tool") {
      if (!waiting.delete(message.toolCallId)) {
        return invalid(
          action,
          `messages[${i}].toolCallId`,
          `the tool message answers ${message.toolCallId}, which is not an unanswered call of the assistant message before it`
        )
      }
    } else if (waiting.size > 0) {
      return unanswered(i)
    }
  }
  for (const id of open) waiting.delete(id)
  if (waiting.size > 0) return unanswered(last)
  return undefined
}

const History = Schema.Struct({ messages: Schema.Array(Prompt.Message) })

/**
 * A caller's message list: decoded, its tool call ids made unique across the whole list (an empty or
 * repeated id gets a fresh one, in its call and in the tool message answering it), checked, and given a
 * system message when it has none.
 */
export const historyOf = (
  action: string,
  input: unknown,
  system: string
): Effect.Effect<Array<Prompt.Message>, ValidationError> =>
  Effect.flatMap(Conversion.decode(History, { messages: input }, { action }), (decoded) => {
    const { messages } = ToolCallId.unique(decoded.messages)
    const problem = checkHistory(action, messages, new Set())
    if (problem !== undefined) return Effect.fail(problem)
    const out: Array<Prompt.Message> = messages.some((message) => message.role === "system")
      ? [...messages]
      : [{ role: "system", content: system }, ...messages]
    return Effect.succeed(out)
  })

/**
 * The assistant message of a model's answer: its text, the tool calls kept of it (`calls`, if any), its
 * reasoning (if any) and what its provider needs back (if anything).
 */
export const assistantOf = (
  response: ModelResponse.Response,
  calls: ReadonlyArray<Prompt.ToolCall>
): Prompt.AssistantMessage => {
  const plain: Prompt.AssistantMessage =
    calls.length === 0
      ? { role: "assistant", content: response.text }
      : { role: "assistant", content: response.text, toolCalls: calls }
  const base: Prompt.AssistantMessage =
    response.providerData === undefined ? plain : { ...plain, providerData: response.providerData }
  if (response.reasoning === undefined) return base
  return response.reasoningField === undefined
    ? { ...base, reasoning: response.reasoning }
    : { ...base, reasoning: response.reasoning, reasoningField: response.reasoningField }
}

/** The text of a failed call (`"RETRIEVAL"` for a retrieval failure; see `ToolContent.failure`). */
export const errorContent = (error: ActionError | RetrievalFailure): string =>
  ToolContent.failure(isActionError(error) ? error.category : "RETRIEVAL", error.message)

// A decision as `Chat.approve` and `Chat.reject` make it; anything else (a typo'd tag, a missing approver or
// reason, a string) must approve nothing.
const isDecision = (u: unknown): boolean => {
  if (typeof u !== "object" || u === null) return false
  const decision = u as { readonly _tag?: unknown; readonly approver?: unknown; readonly reason?: unknown }
  if (typeof decision.approver !== "string") return false
  return decision._tag === "Approve" || (decision._tag === "Reject" && typeof decision.reason === "string")
}

/**
 * Checks a paused turn before it resumes: its history (the pending calls may
 * stay unanswered), that the last assistant message's calls and the pending
 * calls each have distinct ids, that each pending call is an unanswered call of the last
 * assistant message, and that `decisions` has exactly one entry per pending
 * call, each made by `Chat.approve` or `Chat.reject` (VALIDATION at
 * `decisions.<id>` otherwise). Returns the last assistant message's calls.
 */
export const checkPaused = (
  action: string,
  messages: ReadonlyArray<Prompt.Message>,
  pending: ReadonlyArray<{ readonly toolCallId: string }>,
  decisions: Readonly<Record<string, unknown>>,
  decided: ReadonlyArray<{ readonly toolCallId: string }> = pending
): Result.Result<ReadonlyArray<Prompt.ToolCall>, ValidationError> => {
  const problem = checkHistory(action, messages, new Set(pending.map((call) => call.toolCallId)))
  if (problem !== undefined) return Result.fail(problem)
  const last = messages.findLast((message) => message.role === "assistant")
  const calls = last?.role === "assistant" ? (last.toolCalls ?? []) : []
  // Two calls (or pending calls) under one id: a decision by id could not tell them apart.
  const ids = [...calls.map((call) => call.id), ...pending.map((call) => `pending ${call.toolCallId}`)]
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i)
  if (repeated !== undefined) {
    return Result.fail(
      invalid(
        action,
        repeated.startsWith("pending ") ? "pending" : "messages",
        `two ${repeated.startsWith("pending ") ? "pending calls" : "calls of the last assistant message"} have the id ${repeated.replace(/^pending /, "")}; a decision could not tell them apart`
      )
    )
  }
  const answered = new Set(messages.flatMap((message) => (message.role === "tool" ? [message.toolCallId] : [])))
  for (const call of pending) {
    if (!calls.some((c) => c.id === call.toolCallId) || answered.has(call.toolCallId)) {
      return Result.fail(
        invalid(action, "pending", `${call.toolCallId} is not an unanswered call of the last assistant message`)
      )
    }
  }
  const missing = decided.filter((call) => !Object.hasOwn(decisions, call.toolCallId)).map((call) => call.toolCallId)
  const unknown = Object.keys(decisions).filter((key) => !decided.some((call) => call.toolCallId === key))
  if (missing.length > 0 || unknown.length > 0) {
    const parts = [
      ...(missing.length === 0 ? [] : [`no decision for ${missing.join(", ")}`]),
      ...(unknown.length === 0 ? [] : [`no pending call ${unknown.join(", ")}`])
    ]
    return Result.fail(invalid(action, "decisions", parts.join("; ")))
  }
  for (const call of decided) {
    const decision = decisions[call.toolCallId]
    if (!isDecision(decision)) {
      return Result.fail(
        invalid(
          action,
          `decisions.${call.toolCallId}`,
          `the decision for ${call.toolCallId} must be Chat.approve(approver) or Chat.reject(approver, reason)`
        )
      )
    }
  }
  return Result.succeed(calls)
}

/**
 * The history with the answers given after a pause: the last step's tool
 * messages, those sent before the pause and `answers`, in the order of its
 * calls.
 */
export const withAnswers = (
  messages: ReadonlyArray<Prompt.Message>,
  answers: ReadonlyArray<Prompt.ToolMessage>
): Array<Prompt.Message> => {
  let cut = messages.length - 1
  while (cut >= 0 && messages[cut]?.role !== "assistant") cut--
  const last = messages[cut]
  const calls = last?.role === "assistant" ? (last.toolCalls ?? []) : []
  const byId = new Map(
    [
      ...messages.slice(cut + 1).filter((message): message is Prompt.ToolMessage => message.role === "tool"),
      ...answers
    ].map((message) => [message.toolCallId, message])
  )
  return [
    ...messages.slice(0, cut + 1),
    ...calls.flatMap((call) => {
      const message = byId.get(call.id)
      return message === undefined ? [] : [message]
    })
  ]
}
